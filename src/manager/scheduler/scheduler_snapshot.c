/* scheduler_snapshot.c - read what the scheduler needs from the database
 * into the pure scheduler's structures (src/sched/sched.h), for every
 * resource group at once: ALIVE agents with what their kernels occupy
 * (per GPU device), the PENDING sessions with their limits, dependencies
 * and image minimums, and the quota scopes with what they occupy. */
#include "common/compat.h"

#include "common/log.h"
#include "common/slots.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/scheduler/scheduler-internal.h"
#include "manager/usage/usage.h"

#define OCCUPYING "('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING', 'TERMINATING')"

#define LOOKBACK_USEC (28LL * 24 * 3600 * 1000000)

int rgroups_load(struct manager *m, struct rgroup **ret, int *ret_n, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT name, scheduler, scheduler_opts FROM resource_groups ORDER BY name", &rows, err);

        if (r < 0)
                return r;
        struct rgroup *g = xcalloc((size_t)rows->nrows + 1, sizeof(*g));
        for (int i = 0; i < rows->nrows; i++) {
                struct tess_error *perr = NULL;
                json_t *opts = json_loads(db_getn(rows, i, "scheduler_opts"), 0, NULL);
                g[i].name = xstrdup(db_getn(rows, i, "name"));
                if (sched_policy_parse(db_getn(rows, i, "scheduler"), opts, &g[i].policy, &perr) < 0) {
                        log_warn("resource group %s: %s; using the defaults", g[i].name, perr->msg);
                        tess_error_free(perr);
                        sched_policy_parse("fifo", NULL, &g[i].policy, NULL);
                }
                json_decref(opts);
        }
        *ret = g;
        *ret_n = rows->nrows;
        return 0;
}

void rgroups_free(struct rgroup *g, int n)
{
        for (int i = 0; g && i < n; i++)
                free(g[i].name);
        free(g);
}

static struct rgroup *group_of(struct snapshot *s, const char *name)
{
        for (int i = 0; name && i < s->ngroups; i++)
                if (streq(s->groups[i].name, name))
                        return &s->groups[i];
        return NULL;
}

static int arch_of(struct snapshot *s, const char *arch)
{
        int a = strmap_get(&s->arch_idx, arch ? arch : "");
        if (a < 0) {
                a = (int)s->arch_idx.n;
                strmap_put(&s->arch_idx, arch ? arch : "", a);
        }
        return a;
}

/* Parse a stored slots text into a vector; false (logged) when it is bad. */
static bool vec_from_text(struct snapshot *s, const char *text, struct sched_vec *v, const char *what)
{
        struct slots sl;
        struct tess_error *err = NULL;

        if (slots_from_text(&sl, text, &err) < 0 || sched_vec_from_slots(&s->slots, &sl, v, &err) < 0) {
                log_warn("scheduler: %s: %s", what, err->msg);
                tess_error_free(err);
                return false;
        }
        return true;
}

static void limit_from_text(struct snapshot *s, const char *text, struct sched_vec *limit)
{
        struct slots sl;

        sched_vec_unlimited(limit);
        if (!text || slots_from_text(&sl, text, NULL) < 0)
                return;
        for (int i = 0; i < sl.n; i++) {
                int k = sched_slots_intern(&s->slots, sl.s[i].name, NULL);
                if (k >= 0)
                        limit->v[k] = sl.s[i].value;
        }
}

static int load_agents(struct manager *m, struct snapshot *s, struct tess_error **err)
{
        int r = DBQ(m->db,
                    "SELECT id, resource_group, schedulable, available_slots, devices, architecture, alloc_gen, occupied_slots"
                    " FROM agents WHERE status = 'ALIVE' ORDER BY resource_group, id",
                    &s->agent_rows, err);
        if (r < 0)
                return r;
        s->nagents = s->agent_rows->nrows;
        s->agents = xcalloc((size_t)s->nagents + 1, sizeof(*s->agents));
        s->device_ids = xcalloc((size_t)s->nagents + 1, sizeof(*s->device_ids));
        s->alloc_gen = xcalloc((size_t)s->nagents + 1, sizeof(*s->alloc_gen));
        s->agent_touched = xcalloc((size_t)s->nagents + 1, sizeof(*s->agent_touched));
        for (int i = 0; i < s->nagents; i++) {
                struct sched_agent *a = &s->agents[i];
                const struct db_rows *rows = s->agent_rows;
                a->id = db_getn(rows, i, "id");
                a->arch = arch_of(s, db_getn(rows, i, "architecture"));
                a->schedulable = db_get_int(rows, i, "schedulable") != 0;
                a->gpu_slot = -1;
                s->alloc_gen[i] = db_get_int(rows, i, "alloc_gen");
                if (!vec_from_text(s, db_getn(rows, i, "available_slots"), &a->cap, a->id))
                        a->schedulable = false;
                json_t *devs = json_loads(db_getn(rows, i, "devices"), 0, NULL);
                size_t n = json_array_size(devs);
                s->device_ids[i] = xcalloc(n + 1, sizeof(char *));
                for (size_t d = 0; d < n && d < SCHED_MAX_DEVICES; d++) {
                        json_t *dev = json_array_get(devs, d);
                        const char *slot = json_string_value(json_object_get(dev, "slot"));
                        int64_t cap = 0;
                        slot_parse_value(slot ? slot : "cuda.shares", json_object_get(dev, "capacity"), &cap, NULL);
                        a->gpu_slot = slot && streq(slot, "cuda.device") ? SCHED_GPU_DEVICE : SCHED_GPU_SHARES;
                        a->dev[a->ndev++] = (struct sched_device){ .cap = cap };
                        s->device_ids[i][d] = xstrdup(json_string_value(json_object_get(dev, "id")));
                }
                json_decref(devs);
                struct rgroup *g = group_of(s, db_getn(rows, i, "resource_group"));
                if (g && g->nagents++ == 0)
                        g->agent_start = i;
        }
        return 0;
}

static int device_index(const struct snapshot *s, int agent, const char *id)
{
        for (int d = 0; d < s->agents[agent].ndev; d++)
                if (streq(s->device_ids[agent][d], id))
                        return d;
        return -1;
}

/* What the kernels on each agent occupy, per slot and per device. */
static int load_occupancy(struct manager *m, struct snapshot *s, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct strmap idx;
        int r = DBQ(m->db,
                    "SELECT agent_id, occupied_slots, device_alloc FROM kernels"
                    " WHERE agent_id IS NOT NULL AND status IN " OCCUPYING,
                    &rows, err);
        if (r < 0)
                return r;
        strmap_init(&idx);
        for (int i = 0; i < s->nagents; i++)
                strmap_put(&idx, s->agents[i].id, i);
        for (int i = 0; i < rows->nrows; i++) {
                int a = strmap_get(&idx, db_getn(rows, i, "agent_id"));
                struct sched_vec v;
                if (a < 0 || !vec_from_text(s, db_getn(rows, i, "occupied_slots"), &v, "kernel occupancy"))
                        continue;
                struct sched_agent *ag = &s->agents[a];
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        ag->used.v[k] += v.v[k];
                json_t *alloc = json_loads(db_getn(rows, i, "device_alloc"), 0, NULL), *amount;
                const char *dev;
                json_object_foreach(alloc, dev, amount) {
                        int d = device_index(s, a, dev);
                        int64_t q = 0;
                        if (d >= 0 && ag->gpu_slot >= 0 &&
                            slot_parse_value(s->slots.name[ag->gpu_slot], amount, &q, NULL) == 0)
                                ag->dev[d].used += q;
                }
                json_decref(alloc);
        }
        strmap_free(&idx);
        return 0;
}

static int scope_of(struct snapshot *s, char kind, const char *key, const char *limit_text)
{
        char name[320];
        snprintf(name, sizeof(name), "%c:%s", kind, key ? key : "");
        int i = strmap_get(&s->scope_idx, name);
        if (i >= 0 || !limit_text)
                return i;
        if (s->nscopes == s->capscopes) {
                s->capscopes = s->capscopes ? 2 * s->capscopes : 64;
                s->scopes = xrealloc(s->scopes, sizeof(*s->scopes) * (size_t)s->capscopes);
        }
        i = s->nscopes++;
        struct sched_scope *sc = &s->scopes[i];
        *sc = (struct sched_scope){ .kind = kind == 'k' ? SCHED_KEYPAIR : kind == 'u' ? SCHED_USER
                                                                : kind == 'p' ? SCHED_PROJECT : SCHED_DOMAIN,
                                    .max_sessions = -1, .max_containers = -1 };
        limit_from_text(s, limit_text, &sc->limit);
        strmap_put(&s->scope_idx, name, i);
        return i;
}

/* The resource group is open to the owner through its domain, project or keypair. */
#define RG_ALLOWED                                                                                                 \
        "EXISTS (SELECT 1 FROM resource_groups g WHERE g.name = s.resource_group AND g.is_active = 1 AND ("       \
        " EXISTS (SELECT 1 FROM resource_group_domains x WHERE x.resource_group = g.name"                         \
        "  AND x.domain_name = s.domain_name)"                                                                     \
        " OR EXISTS (SELECT 1 FROM resource_group_projects x WHERE x.resource_group = g.name"                     \
        "  AND x.project_id = s.project_id)"                                                                       \
        " OR EXISTS (SELECT 1 FROM resource_group_keypairs x WHERE x.resource_group = g.name"                     \
        "  AND x.access_key = s.access_key)))"

static int load_pending(struct manager *m, struct snapshot *s, const struct strmap *retries, struct tess_error **err)
{
        int r = DBQ(m->db,
                    "SELECT s.id, s.name, s.priority, s.created_at, s.requested_slots, s.cluster_mode, s.cluster_size,"
                    " s.architecture, s.access_key, s.user_id, s.project_id, s.domain_name, s.resource_group,"
                    " s.starts_at, s.designated_agents, s.status_data, s.status_history, s.session_type,"
                    " kp.max_concurrent_sessions, kp.max_containers_per_session,"
                    " kp.total_resource_slots AS keypair_slots, u.total_resource_slots AS user_slots,"
                    " p.total_resource_slots AS project_slots, d.total_resource_slots AS domain_slots,"
                    " (SELECT i.min_resources FROM images i WHERE (i.name || ':' || i.tag) = s.image"
                    "  AND i.architecture = s.architecture) AS image_min, CASE WHEN " RG_ALLOWED " THEN 1 ELSE 0 END AS rg_allowed"
                    " FROM sessions s JOIN keypairs k ON k.access_key = s.access_key"
                    " JOIN keypair_resource_policies kp ON kp.name = k.resource_policy"
                    " JOIN users u ON u.id = s.user_id JOIN projects p ON p.id = s.project_id"
                    " JOIN domains d ON d.name = s.domain_name"
                    " WHERE s.status = 'PENDING' ORDER BY s.resource_group, s.created_at, s.id",
                    &s->pending_rows, err);
        if (r < 0)
                return r;
        const struct db_rows *rows = s->pending_rows;
        s->npending = rows->nrows;
        s->pending = xcalloc((size_t)s->npending + 1, sizeof(*s->pending));
        s->designated = xcalloc((size_t)s->npending + 1, sizeof(*s->designated));
        s->deps_detail = xcalloc((size_t)s->npending + 1, sizeof(*s->deps_detail));
        for (int i = 0; i < s->npending; i++) {
                struct sched_session *p = &s->pending[i];
                const char *id = db_getn(rows, i, "id");
                p->id = id;
                p->name = db_getn(rows, i, "name");
                p->priority = db_get_int(rows, i, "priority");
                p->enqueued_at = db_get_int(rows, i, "created_at");
                p->cluster_size = (int)db_get_int(rows, i, "cluster_size");
                p->multi_node = streq(db_getn(rows, i, "cluster_mode"), "multi-node");
                p->arch = arch_of(s, db_getn(rows, i, "architecture"));
                p->starts_at = db_getn(rows, i, "starts_at") ? db_get_int(rows, i, "starts_at") : 0;
                p->rg_allowed = db_get_int(rows, i, "rg_allowed") != 0;
                p->retries = strmap_get(retries, id) > 0 ? strmap_get(retries, id) : 0;
                if (!vec_from_text(s, db_getn(rows, i, "requested_slots"), &p->req, id))
                        p->rg_allowed = false; /* unplaceable; reported as such */
                if (db_getn(rows, i, "image_min"))
                        vec_from_text(s, db_getn(rows, i, "image_min"), &p->image_min, "image min_resources");
                int kp = p->scope[SCHED_KEYPAIR] =
                        scope_of(s, 'k', db_getn(rows, i, "access_key"), db_getn(rows, i, "keypair_slots"));
                /* 0 is unlimited (docs/design/admin-api.md); the limits
                 * count the owner's sessions on all its keypairs */
                int64_t max_sessions = db_get_int(rows, i, "max_concurrent_sessions");
                s->scopes[kp].max_sessions = max_sessions > 0 ? max_sessions : -1;
                s->scopes[kp].per_owner = true;
                s->scopes[kp].max_containers = db_get_int(rows, i, "max_containers_per_session");
                p->scope[SCHED_USER] = scope_of(s, 'u', db_getn(rows, i, "user_id"), db_getn(rows, i, "user_slots"));
                p->scope[SCHED_PROJECT] =
                        scope_of(s, 'p', db_getn(rows, i, "project_id"), db_getn(rows, i, "project_slots"));
                p->scope[SCHED_DOMAIN] =
                        scope_of(s, 'd', db_getn(rows, i, "domain_name"), db_getn(rows, i, "domain_slots"));
                struct rgroup *g = group_of(s, db_getn(rows, i, "resource_group"));
                if (!g)
                        continue;
                if (g->npending++ == 0)
                        g->pending_start = i;
                if (g->policy.order == SCHED_FAIR_SHARE)
                        s->any_fair_share = true;
                /* designated agents: indices into the group's agents */
                json_t *list = json_loads(db_getn(rows, i, "designated_agents"), 0, NULL);
                size_t n = json_array_size(list);
                if (n > 0) {
                        s->designated[i] = xcalloc(n, sizeof(int));
                        for (size_t j = 0; j < n; j++) {
                                const char *want = json_string_value(json_array_get(list, j));
                                s->designated[i][j] = -1;
                                for (int a = 0; want && a < g->nagents; a++)
                                        if (streq(s->agents[g->agent_start + a].id, want))
                                                s->designated[i][j] = a;
                        }
                        p->designated = s->designated[i];
                        p->ndesignated = (int)n;
                }
                json_decref(list);
        }
        return 0;
}

/* What every scope of a pending session occupies now, anywhere. */
static int load_scope_usage(struct manager *m, struct snapshot *s, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        static const char kinds[] = "kupd";
        static const char *const cols[] = { "access_key", "user_id", "project_id", "domain_name" };
        int r = DBQ(m->db,
                    "SELECT access_key, user_id, project_id, domain_name, occupying_slots FROM sessions"
                    " WHERE status IN " OCCUPYING,
                    &rows, err);
        if (r < 0)
                return r;
        for (int i = 0; i < rows->nrows; i++) {
                struct sched_vec v;
                bool parsed = false;
                for (int k = 0; k < 4; k++) {
                        int sc = scope_of(s, kinds[k], db_getn(rows, i, cols[k]), NULL);
                        if (sc < 0)
                                continue;
                        if (!parsed && !vec_from_text(s, db_getn(rows, i, "occupying_slots"), &v, "occupancy"))
                                break;
                        parsed = true;
                        for (int q = 0; q < SCHED_NSLOTS; q++)
                                s->scopes[sc].used.v[q] += v.v[q];
                        s->scopes[sc].sessions++;
                }
        }
        return 0;
}

/* Dependencies of pending sessions: each must be TERMINATED with SUCCESS. */
static int load_dependencies(struct manager *m, struct snapshot *s, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct strmap idx;
        int r = DBQ(m->db,
                    "SELECT d.session_id, t.name, t.status, t.result FROM session_dependencies d"
                    " JOIN sessions s ON s.id = d.session_id JOIN sessions t ON t.id = d.depends_on"
                    " WHERE s.status = 'PENDING'",
                    &rows, err);
        if (r < 0 || rows->nrows == 0)
                return r;
        strmap_init(&idx);
        for (int i = 0; i < s->npending; i++)
                strmap_put(&idx, s->pending[i].id, i);
        for (int i = 0; i < rows->nrows; i++) {
                int p = strmap_get(&idx, db_getn(rows, i, "session_id"));
                const char *st = db_getn(rows, i, "status");
                if (p < 0 || s->pending[p].deps == SCHED_DEPS_FAILED)
                        continue;
                enum sched_deps d = streq(st, "TERMINATED") && streq(db_getn(rows, i, "result"), "SUCCESS")
                                            ? SCHED_DEPS_OK
                                    : streq(st, "TERMINATED") || streq(st, "CANCELLED") || streq(st, "ERROR")
                                            ? SCHED_DEPS_FAILED
                                            : SCHED_DEPS_WAITING;
                if (d == SCHED_DEPS_OK)
                        continue;
                s->pending[p].deps = d;
                free(s->deps_detail[p]);
                s->deps_detail[p] = xstrdup(db_getn(rows, i, "name"));
                s->pending[p].deps_detail = s->deps_detail[p];
        }
        strmap_free(&idx);
        return 0;
}

static void set_fair_share(const char *user_id, double usage, void *data)
{
        struct snapshot *s = data;
        int sc = scope_of(s, 'u', user_id, NULL);
        if (sc >= 0)
                s->scopes[sc].fair_share_usage = usage;
}

int snapshot_load(struct manager *m, struct snapshot *s, struct rgroup *groups, int ngroups, int64_t now,
                  const struct strmap *retries, struct tess_error **err)
{
        int r;

        *s = (struct snapshot){ .groups = groups, .ngroups = ngroups };
        sched_slots_init(&s->slots);
        strmap_init(&s->scope_idx);
        strmap_init(&s->arch_idx);
        for (int i = 0; i < ngroups; i++)
                groups[i].nagents = groups[i].npending = groups[i].agent_start = groups[i].pending_start = 0;
        if ((r = load_agents(m, s, err)) < 0 || (r = load_occupancy(m, s, err)) < 0 ||
            (r = load_pending(m, s, retries, err)) < 0 || (r = load_scope_usage(m, s, err)) < 0 ||
            (r = load_dependencies(m, s, err)) < 0)
                return r;
        if (s->any_fair_share) {
                int64_t half_life = 0;
                for (int i = 0; i < ngroups && !half_life; i++)
                        if (groups[i].policy.order == SCHED_FAIR_SHARE)
                                half_life = groups[i].policy.fair_share_half_life;
                r = usage_fair_share(m, now, half_life, LOOKBACK_USEC, set_fair_share, s, err);
        }
        return r;
}

void snapshot_input(struct snapshot *s, struct rgroup *g, int64_t now, struct sched_input *in)
{
        *in = (struct sched_input){
                .slots = &s->slots,
                .policy = g->policy,
                .agents = s->agents + g->agent_start,
                .nagents = g->nagents,
                .scopes = s->scopes,
                .nscopes = s->nscopes,
                .pending = s->pending + g->pending_start,
                .npending = g->npending,
                .now = now,
                .rr_cursor = g->nagents ? g->rr_cursor % g->nagents : 0,
        };
}

void snapshot_free(struct snapshot *s)
{
        for (int i = 0; i < s->nagents; i++) {
                for (int d = 0; s->device_ids[i] && s->device_ids[i][d]; d++)
                        free(s->device_ids[i][d]);
                free(s->device_ids[i]);
        }
        for (int i = 0; i < s->npending; i++) {
                free(s->designated[i]);
                free(s->deps_detail[i]);
        }
        free(s->device_ids);
        free(s->alloc_gen);
        free(s->agent_touched);
        free(s->agents);
        free(s->pending);
        free(s->designated);
        free(s->deps_detail);
        free(s->scopes);
        db_rows_free(s->agent_rows);
        db_rows_free(s->pending_rows);
        strmap_free(&s->scope_idx);
        strmap_free(&s->arch_idx);
        *s = (struct snapshot){ 0 };
}
