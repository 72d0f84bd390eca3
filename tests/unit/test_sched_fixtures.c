/* test_sched_fixtures.c - the scheduler's data-driven tests.
 *
 * Every JSON file in tests/sched/fixtures is one test: a cluster (agents, quota
 * scopes, a policy) and a queue go in, one or more passes run, and each
 * pass's placements (agent per kernel, GPU devices) and reasons (the failed
 * check's name and message) are compared with what the fixture expects.
 * The format is described in tests/sched/README.md.  Every pass runs twice,
 * once scanning the agents and once through the agent index, and both must
 * agree to the byte.  A failure prints `# FILE:PASS: ...`. */
#include "common/compat.h"

#include <dirent.h>

#include "../lib/test.h"
#include "common/buf.h"
#include "common/slots.h"
#include "sched/sched-internal.h"

#define FIXTURE_DIR "tests/sched/fixtures"
#define MAX_FIXTURES 256
#define USEC 1000000LL

enum { S_PENDING, S_RUNNING, S_DONE };

struct fx {
        const char *file;
        int pass; /* 1-based, for messages */
        json_t *root;
        struct sched_slots slots;
        struct sched_policy policy;
        struct sched_agent *agents;
        int nagents;
        struct sched_scope *scopes;
        char **scope_keys;
        int nscopes;
        struct sched_session *ss;
        int nss;
        int *state, *arrive;
        struct sched_kernel_alloc **alloc;
        char *archs[16];
        int narchs;
        int64_t now;
        int rr_cursor;
        bool broken; /* a parse error: stop */
};

#define FX_FAIL(fx, ...)                                      \
        do {                                                  \
                test_fail((fx)->file, (fx)->pass, __VA_ARGS__); \
        } while (0)

static const char *str_or(const json_t *o, const char *key, const char *def)
{
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : def;
}

static int64_t int_or(const json_t *o, const char *key, int64_t def)
{
        const json_t *v = json_object_get(o, key);
        return json_is_integer(v) ? json_integer_value(v) : json_is_real(v) ? (int64_t)json_real_value(v) : def;
}

static int arch_id(struct fx *fx, const char *name)
{
        for (int i = 0; i < fx->narchs; i++)
                if (streq(fx->archs[i], name))
                        return i;
        if (fx->narchs == (int)ARRAY_SIZE(fx->archs))
                return 0;
        fx->archs[fx->narchs] = (char *)name;
        return fx->narchs++;
}

/* A slot object ({"cpu": 2, "mem": "4g"}) into a vector. */
static bool parse_vec(struct fx *fx, const json_t *obj, struct sched_vec *ret, const char *what)
{
        struct slots sl;
        struct tess_error *err = NULL;

        memset(ret, 0, sizeof(*ret));
        if (!obj)
                return true;
        if (slots_from_json(&sl, obj, false, &err) < 0 || sched_vec_from_slots(&fx->slots, &sl, ret, &err) < 0) {
                FX_FAIL(fx, "%s: %s", what, err ? err->msg : "bad slots");
                tess_error_free(err);
                fx->broken = true;
                return false;
        }
        return true;
}

static int agent_index(const struct fx *fx, const char *id)
{
        for (int a = 0; a < fx->nagents; a++)
                if (streq(fx->agents[a].id, id))
                        return a;
        return -1;
}

static int session_index(const struct fx *fx, const char *name)
{
        for (int i = 0; i < fx->nss; i++)
                if (streq(fx->ss[i].name, name))
                        return i;
        return -1;
}

/* "project:p1" -> scope index, created unlimited when not declared. */
static int scope_index(struct fx *fx, const char *key)
{
        static const char *const kinds[_SCHED_SCOPE_KINDS] = { "keypair:", "user:", "project:", "domain:" };
        int kind = -1;

        for (int i = 0; i < fx->nscopes; i++)
                if (streq(fx->scope_keys[i], key))
                        return i;
        for (int k = 0; k < _SCHED_SCOPE_KINDS; k++)
                if (strncmp(key, kinds[k], strlen(kinds[k])) == 0)
                        kind = k;
        if (kind < 0) {
                FX_FAIL(fx, "scope '%s' must start with keypair:, user:, project: or domain:", key);
                fx->broken = true;
                return -1;
        }
        fx->scopes = xrealloc(fx->scopes, sizeof(*fx->scopes) * (size_t)(fx->nscopes + 1));
        fx->scope_keys = xrealloc(fx->scope_keys, sizeof(char *) * (size_t)(fx->nscopes + 1));
        struct sched_scope *sc = &fx->scopes[fx->nscopes];
        *sc = (struct sched_scope){ .kind = (enum sched_scope_kind)kind, .max_sessions = -1, .max_containers = -1 };
        sched_vec_unlimited(&sc->limit);
        fx->scope_keys[fx->nscopes] = xstrdup(key);
        return fx->nscopes++;
}

static void parse_agents(struct fx *fx)
{
        const json_t *list = json_object_get(fx->root, "agents");
        size_t i;
        const json_t *a;

        fx->nagents = (int)json_array_size(list);
        fx->agents = xcalloc((size_t)(fx->nagents ? fx->nagents : 1), sizeof(*fx->agents));
        json_array_foreach(list, i, a) {
                struct sched_agent *ag = &fx->agents[i];
                const json_t *fgpu = json_object_get(a, "fgpu_per_gpu");
                const json_t *devused = json_object_get(a, "devices_used");
                int ngpu = (int)int_or(a, "gpus", 0);

                ag->id = str_or(a, "id", "?");
                ag->arch = arch_id(fx, str_or(a, "arch", "x86_64"));
                ag->schedulable = !json_is_false(json_object_get(a, "schedulable"));
                if (!parse_vec(fx, json_object_get(a, "slots"), &ag->cap, ag->id) ||
                    !parse_vec(fx, json_object_get(a, "used"), &ag->used, ag->id))
                        return;
                ag->gpu_slot = -1;
                if (ngpu > 0 && fgpu) {
                        int64_t per = 0;
                        struct tess_error *err = NULL;
                        if (slot_parse_value("cuda.shares", fgpu, &per, &err) < 0) {
                                FX_FAIL(fx, "%s: fgpu_per_gpu: %s", ag->id, err->msg);
                                tess_error_free(err);
                                fx->broken = true;
                                return;
                        }
                        sched_agent_set_gpus(ag, SCHED_GPU_SHARES, ngpu, per);
                } else if (ngpu > 0) {
                        sched_agent_set_gpus(ag, SCHED_GPU_DEVICE, ngpu, 1);
                }
                if (devused) {
                        size_t d;
                        const json_t *v;
                        ag->used.v[ag->gpu_slot] = 0;
                        json_array_foreach(devused, d, v) {
                                int64_t q = 0;
                                struct tess_error *err = NULL;
                                if ((int)d >= ag->ndev || slot_parse_value(fx->slots.name[ag->gpu_slot], v, &q, &err) < 0) {
                                        FX_FAIL(fx, "%s: devices_used[%zu] %s", ag->id, d, err ? err->msg : "no such device");
                                        tess_error_free(err);
                                        fx->broken = true;
                                        return;
                                }
                                ag->dev[d].used = q;
                                ag->used.v[ag->gpu_slot] += q;
                        }
                }
        }
}

static void parse_scopes(struct fx *fx)
{
        const char *key;
        json_t *v;

        json_object_foreach(json_object_get(fx->root, "scopes"), key, v) {
                int i = scope_index(fx, key);
                if (i < 0)
                        return;
                struct sched_scope *sc = &fx->scopes[i];
                if (json_object_get(v, "limit")) {
                        struct sched_vec lim;
                        if (!parse_vec(fx, json_object_get(v, "limit"), &lim, key))
                                return;
                        /* slots the limit does not name stay unlimited */
                        const char *slot;
                        json_t *x;
                        json_object_foreach(json_object_get(v, "limit"), slot, x) {
                                int k = sched_slots_find(&fx->slots, slot);
                                sc->limit.v[k] = lim.v[k];
                        }
                }
                if (!parse_vec(fx, json_object_get(v, "used"), &sc->used, key))
                        return;
                sc->max_sessions = int_or(v, "max_sessions", -1);
                sc->sessions = int_or(v, "sessions", 0);
                sc->max_containers = int_or(v, "max_containers", -1);
                sc->per_owner = json_is_true(json_object_get(v, "per_owner"));
                const json_t *u = json_object_get(v, "fair_share_usage");
                sc->fair_share_usage = json_is_number(u) ? json_number_value(u) : 0;
        }
}

static void parse_sessions(struct fx *fx)
{
        static const char *const kinds[_SCHED_SCOPE_KINDS] = { "keypair", "user", "project", "domain" };
        const json_t *list = json_object_get(fx->root, "sessions");
        size_t i;
        const json_t *o;

        fx->nss = (int)json_array_size(list);
        fx->ss = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(*fx->ss));
        fx->state = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(int));
        fx->arrive = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(int));
        fx->alloc = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(*fx->alloc));
        json_array_foreach(list, i, o) {
                struct sched_session *s = &fx->ss[i];
                const char *deps = str_or(o, "depends", "ok");
                const json_t *des = json_object_get(o, "designated");

                s->name = s->id = str_or(o, "name", "?");
                if (!parse_vec(fx, json_object_get(o, "slots"), &s->req, s->name) ||
                    !parse_vec(fx, json_object_get(o, "image_min"), &s->image_min, s->name))
                        return;
                s->priority = int_or(o, "priority", 0);
                s->enqueued_at = int_or(o, "enqueued_at", (int64_t)i) * USEC;
                s->cluster_size = (int)int_or(o, "cluster_size", 1);
                s->multi_node = streq(str_or(o, "cluster_mode", "single-node"), "multi-node");
                s->arch = arch_id(fx, str_or(o, "arch", "x86_64"));
                s->starts_at = int_or(o, "starts_at", 0) * USEC;
                s->deps = streq(deps, "failed") ? SCHED_DEPS_FAILED : streq(deps, "waiting") ? SCHED_DEPS_WAITING
                                                                                          : SCHED_DEPS_OK;
                s->deps_detail = str_or(o, "depends_on", NULL);
                s->rg_allowed = !json_is_false(json_object_get(o, "rg_allowed"));
                s->retries = (int)int_or(o, "retries", 0);
                fx->arrive[i] = (int)int_or(o, "arrive", 1);
                for (int k = 0; k < _SCHED_SCOPE_KINDS; k++) {
                        const char *name = str_or(o, kinds[k], NULL);
                        char key[128];
                        s->scope[k] = -1;
                        if (!name)
                                continue;
                        snprintf(key, sizeof(key), "%s:%s", kinds[k], name);
                        s->scope[k] = scope_index(fx, key);
                }
                if (des) {
                        int *d = xcalloc(json_array_size(des) + 1, sizeof(int));
                        size_t j;
                        const json_t *v;
                        json_array_foreach(des, j, v) {
                                d[j] = agent_index(fx, json_string_value(v) ? json_string_value(v) : "");
                                if (d[j] < 0) {
                                        FX_FAIL(fx, "%s: designated agent '%s' is not in the fixture", s->name,
                                                json_string_value(v));
                                        fx->broken = true;
                                }
                        }
                        s->designated = d;
                        s->ndesignated = (int)json_array_size(des);
                }
        }
}

static void fx_free(struct fx *fx)
{
        for (int i = 0; i < fx->nss; i++) {
                free((void *)fx->ss[i].designated);
                free(fx->alloc[i]);
        }
        for (int i = 0; i < fx->nscopes; i++)
                free(fx->scope_keys[i]);
        free(fx->scope_keys);
        free(fx->scopes);
        free(fx->agents);
        free(fx->ss);
        free(fx->state);
        free(fx->arrive);
        free(fx->alloc);
        json_decref(fx->root);
}

/* ---- describing and comparing decisions ---- */

static void describe_kernels(const struct fx *fx, const struct sched_session *s, const struct sched_kernel_alloc *k,
                             struct buf *b)
{
        for (int i = 0; i < s->cluster_size; i++) {
                const struct sched_agent *a = &fx->agents[k[i].agent];
                buf_printf(b, "%s%s", i ? ", " : "", a->id);
                for (int j = 0; j < k[i].ndev; j++) {
                        char amount[48];
                        slot_format(fx->slots.name[a->gpu_slot], k[i].dev[j].amount, amount, sizeof(amount));
                        buf_printf(b, "%s%d:%s", j ? " " : " [", k[i].dev[j].dev, amount);
                }
                if (k[i].ndev)
                        buf_putc(b, ']');
        }
}

static void describe(const struct fx *fx, const struct sched_session *s, const struct sched_decision *d, struct buf *b)
{
        switch (d->outcome) {
        case SCHED_PLACED:
                buf_puts(b, "placed on ");
                describe_kernels(fx, s, d->kernels, b);
                break;
        case SCHED_WAITING:
                buf_printf(b, "waiting (%s): %s", d->predicate, d->msg);
                break;
        case SCHED_CANCEL:
                buf_printf(b, "cancelled (%s): %s", d->predicate, d->msg);
                break;
        }
}

/* Parse "1:0.5" in the agent's GPU slot units. */
static bool parse_devalloc(struct fx *fx, const struct sched_agent *a, const char *s, struct sched_device_alloc *ret)
{
        char *colon = strchr(s, ':');
        struct tess_error *err = NULL;

        if (!colon || a->gpu_slot < 0)
                return false;
        ret->dev = (int16_t)strtol(s, NULL, 10);
        if (slot_parse_string(fx->slots.name[a->gpu_slot], colon + 1, &ret->amount, &err) < 0) {
                tess_error_free(err);
                return false;
        }
        return true;
}

static int cmp_devalloc(const void *pa, const void *pb)
{
        const struct sched_device_alloc *a = pa, *b = pb;
        return a->dev - b->dev;
}

/* Does kernel k's device list equal the expected ["0:1", "1:0.5"]? */
static bool devices_match(struct fx *fx, const struct sched_kernel_alloc *k, const json_t *want)
{
        struct sched_device_alloc w[SCHED_MAX_DEVICES], got[SCHED_MAX_DEVICES];
        size_t i;
        const json_t *v;

        if ((int)json_array_size(want) != k->ndev || k->ndev > SCHED_MAX_DEVICES)
                return false;
        json_array_foreach(want, i, v) {
                if (!json_is_string(v) || !parse_devalloc(fx, &fx->agents[k->agent], json_string_value(v), &w[i]))
                        return false;
        }
        memcpy(got, k->dev, sizeof(got[0]) * (size_t)k->ndev);
        qsort(w, (size_t)k->ndev, sizeof(w[0]), cmp_devalloc);
        qsort(got, (size_t)k->ndev, sizeof(got[0]), cmp_devalloc);
        for (int j = 0; j < k->ndev; j++)
                if (w[j].dev != got[j].dev || w[j].amount != got[j].amount)
                        return false;
        return true;
}

static bool placement_matches(struct fx *fx, const struct sched_session *s, const struct sched_decision *d,
                              const json_t *want)
{
        const json_t *on = json_is_object(want) ? json_object_get(want, "on") : want;
        const json_t *gpu = json_is_object(want) ? json_object_get(want, "gpu") : NULL;

        if (d->outcome != SCHED_PLACED)
                return false;
        for (int i = 0; i < s->cluster_size; i++) {
                const char *id = json_is_string(on) ? json_string_value(on) : json_string_value(json_array_get(on, i));
                if (!id || !streq(id, fx->agents[d->kernels[i].agent].id))
                        return false;
        }
        if (json_is_array(on) && (int)json_array_size(on) != s->cluster_size)
                return false;
        if (!gpu)
                return true;
        /* one kernel: ["0:1"]; several: [["0:1"], ["1:1"]] */
        bool nested = json_is_array(json_array_get(gpu, 0));
        for (int i = 0; i < s->cluster_size; i++) {
                const json_t *w = nested ? json_array_get(gpu, i) : gpu;
                if (!w || !devices_match(fx, &d->kernels[i], w))
                        return false;
        }
        return true;
}

static void check_decision(struct fx *fx, const struct sched_session *s, const struct sched_decision *d,
                           const json_t *want)
{
        struct buf got = BUF_INIT;
        bool ok;

        describe(fx, s, d, &got);
        if (json_is_object(want) && (json_object_get(want, "wait") || json_object_get(want, "cancel"))) {
                bool cancel = json_object_get(want, "cancel") != NULL;
                const char *pred = str_or(want, cancel ? "cancel" : "wait", "");
                const char *msg = str_or(want, "msg", NULL), *has = str_or(want, "msg_has", NULL);
                ok = d->outcome == (cancel ? SCHED_CANCEL : SCHED_WAITING) && d->predicate &&
                     streq(d->predicate, pred) && (!msg || streq(d->msg, msg)) && (!has || strstr(d->msg, has));
                if (ok && json_object_get(want, "retries") && s->retries != int_or(want, "retries", -1)) {
                        FX_FAIL(fx, "%s: %d retries, expected %lld", s->name, s->retries,
                                (long long)int_or(want, "retries", -1));
                }
        } else {
                ok = placement_matches(fx, s, d, want);
        }
        if (!ok) {
                char *w = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
                FX_FAIL(fx, "%s: expected %s, got %s", s->name, w ? w : "?", got.data);
                free(w);
        }
        buf_release(&got);
}

/* The scan and the index must decide the same and leave the same state. */
static void compare_runs(struct fx *fx, const struct sched_output *a, const struct sched_output *b,
                         const struct sched_input *ia, const struct sched_input *ib)
{
        bool same = a->n == b->n && a->placed == b->placed && ia->rr_cursor == ib->rr_cursor;

        for (int i = 0; same && i < a->n; i++) {
                const struct sched_decision *x = &a->d[i], *y = &b->d[i];
                const struct sched_session *s = &ia->pending[x->session];
                same = x->session == y->session && x->outcome == y->outcome && streq(x->msg, y->msg) &&
                       (x->predicate == y->predicate || (x->predicate && y->predicate && streq(x->predicate, y->predicate))) &&
                       s->retries == ib->pending[y->session].retries;
                for (int k = 0; same && x->kernels && k < s->cluster_size; k++) {
                        same = x->kernels[k].agent == y->kernels[k].agent && x->kernels[k].ndev == y->kernels[k].ndev;
                        for (int j = 0; same && j < x->kernels[k].ndev; j++)
                                same = x->kernels[k].dev[j].dev == y->kernels[k].dev[j].dev &&
                                       x->kernels[k].dev[j].amount == y->kernels[k].dev[j].amount;
                }
        }
        for (int i = 0; same && i < ia->nagents; i++)
                same = !memcmp(&ia->agents[i].used, &ib->agents[i].used, sizeof(ia->agents[i].used)) &&
                       !memcmp(ia->agents[i].dev, ib->agents[i].dev, sizeof(ia->agents[i].dev));
        for (int i = 0; same && i < ia->nscopes; i++)
                same = !memcmp(&ia->scopes[i].used, &ib->scopes[i].used, sizeof(ia->scopes[i].used)) &&
                       ia->scopes[i].sessions == ib->scopes[i].sessions;
        if (same)
                return;
        struct buf d = BUF_INIT;
        for (int i = 0; i < a->n || i < b->n; i++) {
                buf_puts(&d, "\n#   scan:  ");
                if (i < a->n)
                        describe(fx, &ia->pending[a->d[i].session], &a->d[i], &d);
                buf_puts(&d, "\n#   index: ");
                if (i < b->n)
                        describe(fx, &ib->pending[b->d[i].session], &b->d[i], &d);
        }
        FX_FAIL(fx, "the scan and the index disagree:%s", d.data);
        buf_release(&d);
}

static void release(struct fx *fx, int i)
{
        const struct sched_session *s = &fx->ss[i];

        for (int k = 0; k < s->cluster_size; k++) {
                struct sched_agent *a = &fx->agents[fx->alloc[i][k].agent];
                for (int j = 0; j < SCHED_NSLOTS; j++)
                        a->used.v[j] -= s->req.v[j];
                for (int j = 0; j < fx->alloc[i][k].ndev; j++)
                        a->dev[fx->alloc[i][k].dev[j].dev].used -= fx->alloc[i][k].dev[j].amount;
        }
        for (int k = 0; k < _SCHED_SCOPE_KINDS; k++) {
                if (s->scope[k] < 0)
                        continue;
                for (int j = 0; j < SCHED_NSLOTS; j++)
                        fx->scopes[s->scope[k]].used.v[j] -= s->req.v[j] * s->cluster_size;
                fx->scopes[s->scope[k]].sessions--;
        }
        free(fx->alloc[i]);
        fx->alloc[i] = NULL;
        fx->state[i] = S_DONE;
}

static void run_pass(struct fx *fx, const json_t *p)
{
        struct sched_input in, in2;
        struct sched_output out, out2;
        struct tess_error *err = NULL;
        int *map = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(int));
        struct sched_session *pending = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(*pending));
        struct sched_session *pending2 = xcalloc((size_t)(fx->nss ? fx->nss : 1), sizeof(*pending2));
        struct sched_agent *agents2 = xmalloc(sizeof(*agents2) * (size_t)(fx->nagents ? fx->nagents : 1));
        struct sched_scope *scopes2 = xmalloc(sizeof(*scopes2) * (size_t)(fx->nscopes ? fx->nscopes : 1));
        const json_t *v;
        const char *name;
        size_t i;
        int n = 0;

        if (json_object_get(p, "now"))
                fx->now = int_or(p, "now", 0) * USEC;
        json_array_foreach(json_object_get(p, "finish"), i, v) {
                int s = session_index(fx, json_string_value(v) ? json_string_value(v) : "");
                if (s < 0 || fx->state[s] != S_RUNNING)
                        FX_FAIL(fx, "finish: '%s' is not running", json_string_value(v));
                else
                        release(fx, s);
        }
        for (int s = 0; s < fx->nss; s++) {
                if (fx->state[s] != S_PENDING || fx->arrive[s] > fx->pass)
                        continue;
                map[n] = s;
                pending[n++] = fx->ss[s];
        }
        memcpy(pending2, pending, sizeof(*pending) * (size_t)n);
        memcpy(agents2, fx->agents, sizeof(*agents2) * (size_t)fx->nagents);
        if (fx->nscopes)
                memcpy(scopes2, fx->scopes, sizeof(*scopes2) * (size_t)fx->nscopes);
        in = (struct sched_input){
                .slots = &fx->slots, .policy = fx->policy, .agents = fx->agents, .nagents = fx->nagents,
                .scopes = fx->scopes, .nscopes = fx->nscopes, .pending = pending, .npending = n,
                .now = fx->now, .rr_cursor = fx->rr_cursor,
        };
        in2 = in;
        in2.agents = agents2;
        in2.scopes = scopes2;
        in2.pending = pending2;
        if (sched_pass_search(&in2, SCHED_SEARCH_SCAN, &out2, &err) < 0 ||
            sched_pass_search(&in, SCHED_SEARCH_INDEX, &out, &err) < 0) {
                FX_FAIL(fx, "sched_pass: %s", err->msg);
                tess_error_free(err);
                goto out_free;
        }
        compare_runs(fx, &out2, &out, &in2, &in);
        fx->rr_cursor = in.rr_cursor;

        /* every decision is expected, and every expectation decided */
        const json_t *expect = json_object_get(p, "expect");
        for (int k = 0; k < out.n; k++) {
                const struct sched_decision *d = &out.d[k];
                const struct sched_session *s = &pending[d->session];
                const json_t *want = json_object_get(expect, s->name);
                if (!want) {
                        struct buf got = BUF_INIT;
                        describe(fx, s, d, &got);
                        FX_FAIL(fx, "%s: not in \"expect\"; got %s", s->name, got.data);
                        buf_release(&got);
                } else {
                        check_decision(fx, s, d, want);
                }
        }
        json_object_foreach((json_t *)expect, name, v) {
                bool seen = false;
                for (int k = 0; k < out.n && !seen; k++)
                        seen = streq(pending[out.d[k].session].name, name);
                if (!seen)
                        FX_FAIL(fx, "%s: expected but not in this pass's queue", name);
        }
        /* the order sessions were tried in */
        const json_t *tried = json_object_get(p, "tried");
        if (tried) {
                struct buf got = BUF_INIT;
                bool same = (int)json_array_size(tried) == out.n;
                for (int k = 0; k < out.n; k++) {
                        const char *nm = pending[out.d[k].session].name;
                        buf_printf(&got, "%s%s", k ? " " : "", nm);
                        same = same && json_string_value(json_array_get(tried, (size_t)k)) &&
                               streq(json_string_value(json_array_get(tried, (size_t)k)), nm);
                }
                if (!same) {
                        char *w = json_dumps(tried, JSON_COMPACT);
                        FX_FAIL(fx, "tried %s, expected %s", got.data, w);
                        free(w);
                }
                buf_release(&got);
        }
        /* carry the results over to the next pass */
        for (int k = 0; k < out.n; k++) {
                const struct sched_decision *d = &out.d[k];
                int s = map[d->session];
                fx->ss[s].retries = pending[d->session].retries;
                if (d->outcome == SCHED_PLACED) {
                        fx->state[s] = S_RUNNING;
                        fx->alloc[s] = TAKE_PTR(out.d[k].kernels);
                } else if (d->outcome == SCHED_CANCEL) {
                        fx->state[s] = S_DONE;
                }
        }
        sched_output_free(&out);
        sched_output_free(&out2);
out_free:
        free(map);
        free(pending);
        free(pending2);
        free(agents2);
        free(scopes2);
}

static void run_fixture(const char *path)
{
        struct fx fx = { .file = path };
        json_error_t jerr;
        struct tess_error *err = NULL;
        size_t i;
        const json_t *p;

        fx.root = json_load_file(path, 0, &jerr);
        if (!fx.root) {
                test_fail(path, jerr.line, "%s", jerr.text);
                return;
        }
        sched_slots_init(&fx.slots);
        if (sched_policy_parse(str_or(fx.root, "scheduler", "fifo"), json_object_get(fx.root, "opts"), &fx.policy,
                               &err) < 0) {
                test_fail(path, 0, "%s", err->msg);
                tess_error_free(err);
                json_decref(fx.root);
                return;
        }
        fx.now = int_or(fx.root, "now", 0) * USEC;
        parse_agents(&fx);
        if (!fx.broken)
                parse_scopes(&fx);
        if (!fx.broken)
                parse_sessions(&fx);
        if (!json_array_size(json_object_get(fx.root, "passes")))
                test_fail(path, 0, "no \"passes\"");
        json_array_foreach(json_object_get(fx.root, "passes"), i, p) {
                if (fx.broken)
                        break;
                fx.pass = (int)i + 1;
                run_pass(&fx, p);
        }
        fx_free(&fx);
}

/* ---- one TAP line per fixture ---- */

static char *fixtures[MAX_FIXTURES];
static int nfixtures, next_fixture;

static void test_fixture(void)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, fixtures[next_fixture++]);
        run_fixture(path);
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
        const char *filter = getenv("TEST_FILTER");
        struct test *tests;
        DIR *dir = opendir(FIXTURE_DIR);
        struct dirent *e;
        int r;

        if (!dir) {
                printf("# cannot open %s (run from the repository root)\n0 passed, 1 failed\n", FIXTURE_DIR);
                return 1;
        }
        while ((e = readdir(dir)) && nfixtures < MAX_FIXTURES) {
                size_t len = strlen(e->d_name);
                if (len > 5 && streq(e->d_name + len - 5, ".json") && (!filter || !*filter || strstr(e->d_name, filter)))
                        fixtures[nfixtures++] = xstrdup(e->d_name);
        }
        closedir(dir);
        qsort(fixtures, (size_t)nfixtures, sizeof(char *), cmp_names);
        /* the harness filters by name too: the table holds only matches */
        tests = xcalloc((size_t)nfixtures + 1, sizeof(*tests));
        for (int i = 0; i < nfixtures; i++)
                tests[i] = (struct test){ fixtures[i], test_fixture };
        r = test_main(tests);
        for (int i = 0; i < nfixtures; i++)
                free(fixtures[i]);
        free(tests);
        return r;
}
