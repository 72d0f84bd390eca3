/* predicates.c - the checks a pending session must pass before placement.
 *
 * Each check has a name (recorded in the session's status_data) and, when
 * it fails, a message a user can act on, e.g.
 *   "project gpu limit: 4 fGPU in use of 4; 1 fGPU requested".
 * Quota checks count every kernel of the session against what the scope
 * already occupies in all resource groups, including what this pass placed. */
#include "common/compat.h"

#include "common/timeutil.h"
#include "sched/sched-internal.h"

const char *const sched_predicate_names[] = {
        "reserved_time",          "dependencies",           "resource_group_access",
        "max_containers_per_session", "image_min_resources", "keypair_concurrency",
        "keypair_resource_limit", "user_resource_limit",    "project_resource_limit",
        "domain_resource_limit",  NULL,
};

static const char *slot_word(const struct sched_slots *t, int k)
{
        switch (k) {
        case SCHED_CPU:
                return "cpu";
        case SCHED_MEM:
                return "memory";
        case SCHED_GPU_DEVICE:
        case SCHED_GPU_SHARES:
                return "gpu";
        default:
                return t->name[k];
        }
}

char *sched_amount_format(const struct sched_slots *t, int slot, int64_t v, char *buf, size_t len)
{
        char num[48];

        slot_format_human(t->name[slot], v, num, sizeof(num));
        switch (slot) {
        case SCHED_CPU:
                snprintf(buf, len, "%s %s", num, v == 1000 ? "core" : "cores");
                break;
        case SCHED_GPU_SHARES:
                snprintf(buf, len, "%s fGPU", num);
                break;
        case SCHED_GPU_DEVICE:
                snprintf(buf, len, "%s GPU", num);
                break;
        default:
                snprintf(buf, len, "%s", num);
        }
        return buf;
}

/* Write the reason, unless the caller asked for none (msg is NULL). */
static void __attribute__((format(printf, 2, 3))) say(char *msg, const char *fmt, ...)
{
        va_list ap;

        if (!msg)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, SCHED_MSG_MAX, fmt, ap);
        va_end(ap);
}

static int64_t sat_add(int64_t a, int64_t b)
{
        return a > SLOT_INFINITY - b ? SLOT_INFINITY : a + b;
}

static int64_t sat_mul(int64_t a, int64_t n)
{
        if (n == 1) /* the common case, without a division */
                return a;
        return n > 0 && a > SLOT_INFINITY / n ? SLOT_INFINITY : a * n;
}

/* The whole session's demand: per-kernel request times cluster size. */
static void total_request(const struct sched_input *in, const struct sched_session *s, struct sched_vec *ret)
{
        for (int k = 0; k < in->slots->n; k++)
                ret->v[k] = sat_mul(s->req.v[k], s->cluster_size);
}

/* The scope whose sessions and slots count against kp's limits: the
 * owner's (the user scope) when kp is per_owner and the session has one. */
static const struct sched_scope *counted(const struct sched_input *in, const struct sched_session *s,
                                         const struct sched_scope *kp)
{
        if (kp->per_owner && s->scope[SCHED_USER] >= 0)
                return &in->scopes[s->scope[SCHED_USER]];
        return kp;
}

static bool quota_ok(const struct sched_input *in, const struct sched_session *s, const struct sched_vec *want,
                     enum sched_scope_kind kind, char *msg)
{
        if (s->scope[kind] < 0)
                return true;
        const struct sched_scope *sc = &in->scopes[s->scope[kind]];
        const struct sched_scope *use = kind == SCHED_KEYPAIR ? counted(in, s, sc) : sc;
        for (int k = 0; k < in->slots->n; k++) {
                if (want->v[k] == 0 || sc->limit.v[k] == SLOT_INFINITY)
                        continue;
                if (sat_add(use->used.v[k], want->v[k]) <= sc->limit.v[k])
                        continue;
                if (msg) {
                        char used[64], limit[48], req[64];
                        sched_amount_format(in->slots, k, use->used.v[k], used, sizeof(used));
                        slot_format_human(in->slots->name[k], sc->limit.v[k], limit, sizeof(limit));
                        sched_amount_format(in->slots, k, want->v[k], req, sizeof(req));
                        say(msg, "%s %.32s limit: %.48s in use of %.40s; %.48s requested", sched_scope_kind_name(kind),
                            slot_word(in->slots, k), used, limit, req);
                }
                return false;
        }
        return true;
}

enum sched_outcome sched_check(const struct sched_input *in, const struct sched_session *s, const char **pred,
                               char *msg)
{
        static const char *const quota_names[_SCHED_SCOPE_KINDS] = {
                [SCHED_KEYPAIR] = "keypair_resource_limit",
                [SCHED_USER] = "user_resource_limit",
                [SCHED_PROJECT] = "project_resource_limit",
                [SCHED_DOMAIN] = "domain_resource_limit",
        };
        const struct sched_scope *kp = s->scope[SCHED_KEYPAIR] >= 0 ? &in->scopes[s->scope[SCHED_KEYPAIR]] : NULL;

        /* a failed dependency cancels at once: the session can never start,
         * so it must not sit in the queue until its start time */
        if (s->deps == SCHED_DEPS_FAILED) {
                *pred = "dependencies";
                say(msg, "dependency '%s' did not end with success",
                         s->deps_detail ? s->deps_detail : "?");
                return SCHED_CANCEL;
        }
        if (s->starts_at > in->now) {
                char when[48];
                *pred = "reserved_time";
                if (msg)
                        say(msg, "batch session starts at %s", time_format_iso(s->starts_at, when, sizeof(when)));
                return SCHED_WAITING;
        }
        if (s->deps != SCHED_DEPS_OK) {
                *pred = "dependencies";
                say(msg, "dependency '%s' has not finished yet", s->deps_detail ? s->deps_detail : "?");
                return SCHED_WAITING;
        }
        if (!s->rg_allowed) {
                *pred = "resource_group_access";
                say(msg, "the owner may not use this resource group");
                return SCHED_WAITING;
        }
        if (kp && kp->max_containers >= 0 && s->cluster_size > kp->max_containers) {
                *pred = "max_containers_per_session";
                say(msg, "keypair container limit: %d containers requested, %lld allowed per session",
                         s->cluster_size, (long long)kp->max_containers);
                return SCHED_WAITING;
        }
        for (int k = 0; k < in->slots->n; k++) {
                if (s->req.v[k] >= s->image_min.v[k])
                        continue;
                char want[48], min[48];
                *pred = "image_min_resources";
                if (msg)
                        say(msg, "the image needs at least %s of %s; %s requested",
                            sched_amount_format(in->slots, k, s->image_min.v[k], min, sizeof(min)), in->slots->name[k],
                            sched_amount_format(in->slots, k, s->req.v[k], want, sizeof(want)));
                return SCHED_WAITING;
        }
        if (kp && kp->max_sessions >= 0 && counted(in, s, kp)->sessions + 1 > kp->max_sessions) {
                int64_t n = counted(in, s, kp)->sessions;
                *pred = "keypair_concurrency";
                say(msg, "keypair concurrency limit: %lld %s running of %lld allowed%s", (long long)n,
                    n == 1 ? "session" : "sessions", (long long)kp->max_sessions,
                    counted(in, s, kp) != kp ? " (the owner's, all its keypairs together)" : "");
                return SCHED_WAITING;
        }
        struct sched_vec want;
        total_request(in, s, &want);
        for (int kind = 0; kind < _SCHED_SCOPE_KINDS; kind++) {
                if (!quota_ok(in, s, &want, (enum sched_scope_kind)kind, msg)) {
                        *pred = quota_names[kind];
                        return SCHED_WAITING;
                }
        }
        return SCHED_PLACED;
}
