/* vec.c - the scheduler's slot table and resource vectors (see sched.h). */
#include "common/compat.h"

#include "sched/sched.h"

static const char *const known_slots[SCHED_FIRST_EXTRA] = {
        [SCHED_CPU] = "cpu",
        [SCHED_MEM] = "mem",
        [SCHED_GPU_DEVICE] = "cuda.device",
        [SCHED_GPU_SHARES] = "cuda.shares",
};

void sched_slots_init(struct sched_slots *t)
{
        memset(t, 0, sizeof(*t));
        for (int i = 0; i < SCHED_FIRST_EXTRA; i++)
                snprintf(t->name[i], sizeof(t->name[i]), "%s", known_slots[i]);
        t->n = SCHED_FIRST_EXTRA;
}

int sched_slots_find(const struct sched_slots *t, const char *name)
{
        for (int i = 0; i < t->n; i++)
                if (streq(t->name[i], name))
                        return i;
        return -1;
}

int sched_slots_intern(struct sched_slots *t, const char *name, struct tess_error **err)
{
        int i = sched_slots_find(t, name);

        if (i >= 0)
                return i;
        if (t->n >= SCHED_NSLOTS)
                return tess_err(err, ENOSPC, "too many kinds of resource slots (at most %d): cannot add '%s'",
                                SCHED_NSLOTS, name);
        if (strlen(name) >= SLOT_NAME_MAX)
                return tess_err(err, EINVAL, "slot name '%.40s...' is too long", name);
        snprintf(t->name[t->n], sizeof(t->name[t->n]), "%s", name);
        return t->n++;
}

int sched_vec_from_slots(struct sched_slots *t, const struct slots *s, struct sched_vec *ret, struct tess_error **err)
{
        memset(ret, 0, sizeof(*ret));
        for (int i = 0; i < s->n; i++) {
                int k = sched_slots_intern(t, s->s[i].name, err);
                if (k < 0)
                        return k;
                ret->v[k] = s->s[i].value;
        }
        return 0;
}

void sched_vec_to_slots(const struct sched_slots *t, const struct sched_vec *v, struct slots *ret)
{
        slots_init(ret);
        for (int i = 0; i < t->n; i++)
                if (v->v[i] != 0 || i < SCHED_GPU_DEVICE)
                        slots_set(ret, t->name[i], v->v[i], NULL);
}

void sched_vec_unlimited(struct sched_vec *v)
{
        for (int i = 0; i < SCHED_NSLOTS; i++)
                v->v[i] = SLOT_INFINITY;
}

bool sched_vec_is_zero(const struct sched_vec *v)
{
        for (int i = 0; i < SCHED_NSLOTS; i++)
                if (v->v[i] != 0)
                        return false;
        return true;
}

char *sched_vec_format(const struct sched_slots *t, const struct sched_vec *v, char *buf, size_t len)
{
        size_t off = 0;

        buf[0] = '\0';
        for (int i = 0; i < t->n && off < len; i++) {
                char val[48];
                if (v->v[i] == 0)
                        continue;
                slot_format_human(t->name[i], v->v[i], val, sizeof(val));
                if (i == SCHED_GPU_SHARES)
                        off += snprintf(buf + off, len - off, "%s%s fGPU", off ? ", " : "", val);
                else if (i == SCHED_GPU_DEVICE)
                        off += snprintf(buf + off, len - off, "%s%s GPU", off ? ", " : "", val);
                else
                        off += snprintf(buf + off, len - off, "%s%s %s", off ? ", " : "", t->name[i], val);
        }
        if (off == 0)
                snprintf(buf, len, "nothing");
        return buf;
}

void sched_agent_set_gpus(struct sched_agent *a, int gpu_slot, int n, int64_t per_device)
{
        if (n > SCHED_MAX_DEVICES)
                n = SCHED_MAX_DEVICES;
        if (n < 0)
                n = 0;
        a->gpu_slot = n > 0 ? gpu_slot : -1;
        a->ndev = n;
        for (int i = 0; i < n; i++)
                a->dev[i] = (struct sched_device){ .cap = per_device, .used = 0 };
        if (gpu_slot >= 0 && gpu_slot < SCHED_NSLOTS)
                a->cap.v[gpu_slot] = n * per_device;
}

static const char *const scope_names[_SCHED_SCOPE_KINDS] = {
        [SCHED_KEYPAIR] = "keypair",
        [SCHED_USER] = "user",
        [SCHED_PROJECT] = "project",
        [SCHED_DOMAIN] = "domain",
};

const char *sched_scope_kind_name(enum sched_scope_kind k)
{
        return k >= 0 && k < _SCHED_SCOPE_KINDS ? scope_names[k] : "?";
}
