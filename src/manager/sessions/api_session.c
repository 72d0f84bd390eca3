/* api_session.c - the Backend.AI session routes: create (or get), info,
 * destroy, logs, and Tessera's session list.
 *
 * Create validates the whole body first (every error a precise 400),
 * resolves project, resource group and image, checks the limits that are
 * known at enqueue time (pending count and slots: 412), then inserts the
 * session with its kernels and dependencies in one transaction as PENDING
 * and publishes session_enqueued.  Unless enqueueOnly, the answer waits up
 * to maxWaitSeconds for the session to start or end; maxWaitSeconds 0 (what
 * Backend.AI's SDK sends by default) waits without a limit, as Backend.AI
 * does; without maxWaitSeconds, session_wait_default.  A wait that runs
 * out answers the status TIMEOUT (the session stays queued). */
#include "common/compat.h"

#include <ctype.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/loop.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "manager/accounts/model.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/api/auth.h"
#include "manager/api/authz.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/images/session_image.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session.h"
#include "manager/sessions/session_apps.h"
#include "manager/sessions/session_list.h"
#include "manager/sessions/session_mounts.h"
#include "manager/sessions/session_request.h"

/* The keypair a request acts for: the caller, or owner_access_key (authz.h). */
static int resolve_owner(struct api_ctx *c, const char *owner_ak, struct principal *ret, struct tess_error **err)
{
        return authz_owner_keypair(c, owner_ak, authz_access_of(c), ret, err);
}

/* Limits known at enqueue: pending count and pending slots (412), from
 * the owner's keypair resource policy (loaded with the principal). */
static int check_pending_limits(struct manager *m, const struct principal *owner, const struct session_request *q,
                                struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *pend = NULL;
        int r;

        if (owner->max_pending_count < 0 && !owner->has_max_pending_slots)
                return 0;
        /* the owner's pending sessions on all its keypairs, as the scheduler counts running ones */
        r = DBQ(m->db, "SELECT requested_slots FROM sessions WHERE user_id = ? AND status = 'PENDING'", &pend, err,
                DB_TEXT(owner->user_id));
        if (r < 0)
                return r;
        if (owner->max_pending_count >= 0 && pend->nrows + 1 > owner->max_pending_count)
                return tess_err(err, EDQUOT, "keypair pending session limit: %d pending of %lld allowed", pend->nrows,
                                (long long)owner->max_pending_count);
        if (owner->has_max_pending_slots) {
                struct slots sum, one;
                slots_init(&sum);
                for (int i = 0; i < pend->nrows; i++) {
                        if (slots_from_text(&one, db_get(pend, i, 0), NULL) == 0)
                                slots_add(&sum, &one, NULL);
                }
                for (int k = 0; k < q->cluster_size; k++)
                        slots_add(&sum, &q->resources, NULL);
                const char *over;
                if (!slots_fit(&sum, &owner->max_pending_slots, true, &over)) {
                        char a[32], b[32];
                        return tess_err(err, EDQUOT, "keypair pending resource limit: %s would be %s of %s allowed",
                                        over, slot_format(over, slots_get(&sum, over), a, sizeof(a)),
                                        slot_format(over, slots_get(&owner->max_pending_slots, over), b, sizeof(b)));
                }
        }
        return 0;
}

static char *json_text_or(json_t *j, const char *fallback)
{
        if (!j)
                return xstrdup(fallback);
        char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!t)
                abort();
        return t;
}

#define LIVE " AND s.status NOT IN ('TERMINATED', 'CANCELLED', 'ERROR')"
#define LIVE_FIRST                                                                                \
        " ORDER BY CASE WHEN s.status IN ('TERMINATED', 'CANCELLED', 'ERROR') THEN 1 ELSE 0 END," \
        " s.created_at DESC LIMIT 1"

/* The lookups of one session, their SQL built once. */
enum lookup {
        LOOKUP_ID, /* any session by id: authz_check decides */
        LOOKUP_ID_LIVE,
        LOOKUP_OWNER_ID_OR_NAME, /* a UUID-looking reference of an owner */
        LOOKUP_OWNER_ID_OR_NAME_LIVE,
        LOOKUP_OWNER_NAME_LIVE,   /* the partial unique index: at most one row */
        LOOKUP_OWNER_NAME_LATEST, /* ended sessions of that name, newest first */
        _LOOKUP_MAX,
};

static const char *const lookup_where[_LOOKUP_MAX] = {
        [LOOKUP_ID] = "s.id = ?",
        [LOOKUP_ID_LIVE] = "s.id = ?" LIVE,
        [LOOKUP_OWNER_ID_OR_NAME] = "(s.id = ? OR s.name = ?) AND s.access_key = ?" LIVE_FIRST,
        [LOOKUP_OWNER_ID_OR_NAME_LIVE] = "(s.id = ? OR s.name = ?) AND s.access_key = ?" LIVE LIVE_FIRST,
        [LOOKUP_OWNER_NAME_LIVE] = "s.name = ? AND s.access_key = ?" LIVE,
        [LOOKUP_OWNER_NAME_LATEST] = "s.name = ? AND s.access_key = ? ORDER BY s.created_at DESC LIMIT 1",
};

static const char *lookup_sql(enum lookup k)
{
        static char *sql[_LOOKUP_MAX];
        if (!sql[k])
                sql[k] = session_select(lookup_where[k]);
        return sql[k];
}

/* Run lookup k; 1 with *ret when it found a session, 0 when not. */
static int lookup(struct api_ctx *c, enum lookup k, struct db_rows **ret, struct tess_error **err, const char *a,
                  const char *b, const char *ak)
{
        int r;

        *ret = db_rows_free(*ret);
        switch (k) {
        case LOOKUP_ID:
        case LOOKUP_ID_LIVE:
                r = DBQ(c->m->db, lookup_sql(k), ret, err, DB_TEXT(a));
                break;
        case LOOKUP_OWNER_ID_OR_NAME:
        case LOOKUP_OWNER_ID_OR_NAME_LIVE:
                r = DBQ(c->m->db, lookup_sql(k), ret, err, DB_TEXT(a), DB_TEXT(b), DB_TEXT(ak));
                break;
        default:
                r = DBQ(c->m->db, lookup_sql(k), ret, err, DB_TEXT(a), DB_TEXT(ak));
                break;
        }
        return r < 0 ? r : (*ret)->nrows == 1;
}

/* Whether the caller may have `access` to the session of *rows: 1, or 0
 * (rows freed) when it may not see it; -EACCES, -EIO. */
static int permitted(struct api_ctx *c, struct db_rows **rows, enum authz_access access, struct tess_error **err)
{
        struct authz_owner o = { db_getn(*rows, 0, "user_id"), db_getn(*rows, 0, "domain_name"),
                                 db_getn(*rows, 0, "user_role") };
        int r = authz_check(c, &o, access, err);

        if (r == 0)
                return 1;
        *rows = db_rows_free(*rows);
        if (r != -ENOENT)
                return r;
        tess_error_free(*err);
        *err = NULL;
        return 0;
}

/* Find the session `ref` (id or name) of `owner`; live ones first.  Every
 * way of naming a session ends in the same authorization (authz.h): by id
 * any session the caller may see, by name (or id) those of the keypair it
 * acts for (its own, or owner_ak's when it may act for that keypair). */
int api_find_session(struct api_ctx *c, const char *ref, const char *owner_ak, bool live_only, struct db_rows **ret,
                     struct tess_error **err)
{
        struct principal owner;
        enum authz_access access = authz_access_of(c);
        bool by_id = uuid_valid(ref);
        int r = authz_owner_keypair(c, owner_ak, access, &owner, err);
        const char *ak = owner.access_key;

        *ret = NULL;
        if (r < 0)
                return r;
        if (by_id && !owner_ak) {
                r = lookup(c, live_only ? LOOKUP_ID_LIVE : LOOKUP_ID, ret, err, ref, NULL, NULL);
                if (r == 1)
                        r = permitted(c, ret, access, err);
        }
        if (r == 0 && by_id) {
                r = lookup(c, live_only ? LOOKUP_OWNER_ID_OR_NAME_LIVE : LOOKUP_OWNER_ID_OR_NAME, ret, err, ref, ref,
                           ak);
                if (r == 1)
                        r = permitted(c, ret, access, err);
        }
        if (r == 0 && !by_id) {
                r = lookup(c, LOOKUP_OWNER_NAME_LIVE, ret, err, ref, NULL, ak);
                if (r == 0 && !live_only)
                        r = lookup(c, LOOKUP_OWNER_NAME_LATEST, ret, err, ref, NULL, ak);
                if (r == 1)
                        r = permitted(c, ret, access, err);
        }
        if (r == 1)
                return 0;
        *ret = db_rows_free(*ret);
        if (r < 0)
                return r;
        return tess_err(err, ENOENT, "session '%s' not found", ref);
}

/* A request of the owner of a session that holds resources keeps it from
 * the idle timeout; an administrator looking at it does not. */
void api_owner_activity(struct api_ctx *c, const struct db_rows *rows)
{
        if (streq(db_getn(rows, 0, "access_key"), c->who.access_key) && db_getn(rows, 0, "occupied_at"))
                session_touch(c->m, db_getn(rows, 0, "id"), now_usec());
}

struct create_wait {
        struct api_ctx *c;
        char session_id[UUID_STR_LEN];
        bool created;
        bool timed_out;
};

/* servicePorts: the image's apps once the session runs (as Backend.AI). */
static json_t *create_answer(struct manager *m, const char *id, const char *name, const char *status, bool created)
{
        json_t *ports = streq(status, "RUNNING") ? api_session_service_ports(m, id) : json_array();
        return json_pack("{s:s, s:s, s:s, s:o, s:b}", "sessionId", id, "sessionName", name, "status", status,
                         "servicePorts", ports, "created", created);
}

static void finish_wait(struct create_wait *w)
{
        struct api_ctx *c = w->c;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (c->listener_id) {
                events_unlisten(c->m->events, c->listener_id);
                c->listener_id = 0;
        }
        if (c->timer_id) {
                loop_cancel_timer(c->m->loop, c->timer_id);
                c->timer_id = 0;
        }
        if (DBQ(c->m->db, "SELECT name, status FROM sessions WHERE id = ?", &rows, &err, DB_TEXT(w->session_id)) < 0 ||
            rows->nrows == 0) {
                api_fail(c, err ? err : NULL);
        } else {
                /* a wait that ran out answers TIMEOUT (Backend.AI's SDK
                 * tells its user the session is still queued) */
                const char *status = db_get(rows, 0, 1);
                enum session_status st = session_status_from_string(status);
                if (w->timed_out && st != SESSION_RUNNING && !session_status_is_terminal(st))
                        status = "TIMEOUT";
                api_json(c, w->created ? 201 : 200,
                         create_answer(c->m, w->session_id, db_get(rows, 0, 0), status, w->created));
        }
        http_resume(c->req);
}

static void on_wait_event(const struct session_event *ev, void *data)
{
        struct create_wait *w = data;
        if (!streq(ev->session_id, w->session_id))
                return;
        enum session_status st = session_status_from_string(ev->status);
        if (st == SESSION_RUNNING || session_status_is_terminal(st))
                finish_wait(w);
}

static void on_wait_shutdown(struct api_ctx *c)
{
        finish_wait(c->state);
}

static void on_wait_timeout(struct loop *l UNUSED, void *data)
{
        struct create_wait *w = data;
        w->c->timer_id = 0;
        w->timed_out = true;
        finish_wait(w);
}

static void answer_or_wait(struct api_ctx *c, const struct session_request *q, const char *id, const char *name,
                           const char *status, bool created)
{
        bool no_limit = q->has_max_wait && q->max_wait == 0;
        int64_t wait = q->has_max_wait ? q->max_wait * USEC_PER_SEC : c->m->conf.session_wait_default;
        enum session_status st = session_status_from_string(status);

        if (q->enqueue_only || (wait <= 0 && !no_limit) || st == SESSION_RUNNING || session_status_is_terminal(st)) {
                api_json(c, created ? 201 : 200, create_answer(c->m, id, name, status, created));
                return;
        }
        struct create_wait *w = xcalloc(1, sizeof(*w));
        w->c = c;
        w->created = created;
        snprintf(w->session_id, sizeof(w->session_id), "%s", id);
        c->state = w;
        c->state_free = free;
        c->on_shutdown = on_wait_shutdown;
        c->listener_id = events_listen(c->m->events, on_wait_event, w);
        if (!no_limit)
                c->timer_id = loop_add_timer(c->m->loop, wait, on_wait_timeout, w);
        http_suspend(c->req);
}

/* resource_opts as stored: as asked, with `disk` the size decided in bytes
 * (session_request_check_disk), which the agents take (agent_sync.c). */
static char *resource_opts_text(const struct session_request *q)
{
        json_t *o = q->resource_opts ? json_deep_copy(q->resource_opts) : json_object();
        char *text;

        if (q->disk > 0)
                json_object_set_new(o, "disk", json_integer(q->disk));
        else
                json_object_del(o, "disk");
        text = json_text_or(o, "{}");
        json_decref(o);
        return text;
}

static int insert_session(struct api_ctx *c, const struct session_request *q, const struct principal *owner,
                          const char *project_id, const char *domain, const char *rg, const char *image_ref,
                          const json_t *vmounts, const char *id, struct tess_error **err)
{
        int64_t now = now_usec();
        char when[48];
        _cleanup_free_ char *slots_text = slots_to_text(&q->resources);
        json_t *names = session_mounts_names(vmounts); /* Backend.AI's `mounts`: the names */
        _cleanup_free_ char *environ = json_text_or(q->environ, "{}"), *mounts = json_text_or(names, "[]"),
                            *vfolder_mounts = json_text_or((json_t *)vmounts, "[]"),
                            *mount_map = json_text_or(q->mount_map, "{}"), *ropts = resource_opts_text(q),
                            *ports = json_text_or(q->preopen_ports, "[]"), *agents = json_text_or(q->agent_list, "[]");
        _cleanup_free_ char *hist = xasprintf("{\"PENDING\":\"%s\"}", time_format_iso(now, when, sizeof(when)));
        int r;

        json_decref(names);
        r = DBQ(c->m->db,
                "INSERT INTO sessions(id, name, session_type, priority, cluster_mode, cluster_size, domain_name,"
                " project_id, user_id, access_key, image, architecture, tag, resource_group, requested_slots,"
                " environ, resource_opts, mounts, vfolder_mounts, mount_map, preopen_ports, designated_agents, "
                "startup_command,"
                " bootstrap_script, callback_url, starts_at, batch_timeout, status, status_history,"
                " status_changed_at, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', "
                "?, ?, ?)",
                NULL, err, DB_TEXT(id), DB_TEXT(q->name), DB_TEXT(q->type), DB_INT(q->priority),
                DB_TEXT(q->cluster_mode), DB_INT(q->cluster_size), DB_TEXT(domain), DB_TEXT(project_id),
                DB_TEXT(owner->user_id), DB_TEXT(owner->access_key), DB_TEXT(image_ref), DB_TEXT(q->architecture),
                DB_TEXT(q->tag), DB_TEXT(rg), DB_TEXT(slots_text), DB_TEXT(environ), DB_TEXT(ropts), DB_TEXT(mounts),
                DB_TEXT(vfolder_mounts), DB_TEXT(mount_map), DB_TEXT(ports), DB_TEXT(agents),
                DB_TEXT(q->startup_command), DB_TEXT(q->bootstrap_script), DB_TEXT(q->callback_url),
                q->starts_at ? DB_INT(q->starts_at) : DB_NULLARG,
                q->batch_timeout ? DB_INT(q->batch_timeout) : DB_NULLARG, DB_TEXT(hist), DB_INT(now), DB_INT(now));
        if (r < 0)
                return r;
        for (int k = 0; k < q->cluster_size; k++) {
                char kid[UUID_STR_LEN], host[32];
                uuid_generate_str(kid);
                snprintf(host, sizeof(host), "%s%d", k == 0 ? "main" : "sub", k == 0 ? 1 : k);
                r = DBQ(c->m->db,
                        "INSERT INTO kernels(id, session_id, cluster_role, cluster_idx, cluster_hostname, image,"
                        " status, status_history, requested_slots, created_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, 'PENDING', ?, ?, ?)",
                        NULL, err, DB_TEXT(kid), DB_TEXT(id), DB_TEXT(k == 0 ? "main" : "sub"), DB_INT(k + 1),
                        DB_TEXT(host), DB_TEXT(image_ref), DB_TEXT(hist), DB_TEXT(slots_text), DB_INT(now));
                if (r < 0)
                        return r;
        }
        if (q->dependencies) {
                size_t i;
                json_t *v;
                json_array_foreach(q->dependencies, i, v) {
                        _cleanup_rows_ struct db_rows *dep = NULL;
                        r = api_find_session(c, json_string_value(v), owner->access_key, false, &dep, err);
                        if (r == -ENOENT)
                                return tess_err(err, EINVAL, "dependency '%s' is not a session of this owner",
                                                json_string_value(v));
                        if (r < 0)
                                return r;
                        r = DBQ(c->m->db,
                                "INSERT INTO session_dependencies(session_id, depends_on) VALUES (?, ?)"
                                " ON CONFLICT DO NOTHING",
                                NULL, err, DB_TEXT(id), DB_TEXT(db_getn(dep, 0, "id")));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* Answer with the owner's live session of that name: reused when the
 * image matches and reuse is allowed, else 409 naming it.  False if there
 * is no such session (any more). */
static bool answer_existing(struct api_ctx *c, const struct session_request *q, const char *owner_ak,
                            const char *image_ref)
{
        _cleanup_rows_ struct db_rows *existing = NULL;
        struct tess_error *err = NULL;

        if (api_find_session(c, q->name, owner_ak, true, &existing, &err) < 0) {
                tess_error_free(err);
                return false;
        }
        if (q->reuse && streq(db_getn(existing, 0, "image"), image_ref)) {
                answer_or_wait(c, q, db_getn(existing, 0, "id"), q->name, db_getn(existing, 0, "status"), false);
                return true;
        }
        json_t *p = json_pack("{s:s, s:s, s:i, s:s}", "type", "https://api.backend.ai/probs/session-already-exists",
                              "title", "a session with this name already exists", "status", 409, "existingSessionId",
                              db_getn(existing, 0, "id"));
        char *t = json_dumps(p, JSON_COMPACT);
        http_reply_take(c->req, 409, "application/problem+json", t, strlen(t));
        json_decref(p);
        return true;
}

void api_session_create(struct api_ctx *c)
{
        struct session_request q;
        struct principal owner;
        struct tess_error *err = NULL;
        _cleanup_rows_ struct db_rows *img = NULL;
        char rg[128], id[UUID_STR_LEN];
        int r;

        if ((r = session_request_parse(c->body, &q, &err)) < 0 ||
            (r = resolve_owner(c, q.owner_access_key, &owner, &err)) < 0)
                return api_fail(c, err);
        if (session_request_check_priority(&q, &c->who, &err) < 0 || session_request_check_disk(&q, &owner, &err) < 0)
                return api_fail(c, err);
        const char *domain = q.domain ? q.domain : owner.domain;
        if (!streq(domain, owner.domain))
                return api_problem(c, 400, "invalid-api-params", "domain '%s' is not the owner's domain", domain);
        char project_id[UUID_STR_LEN];
        r = model_active_project_id(c->m, domain, q.group, project_id, &err);
        if (r < 0)
                return api_fail(c, err);
        if (r == 0)
                return api_problem(c, 400, "invalid-api-params", "project '%s' not found in domain '%s'", q.group,
                                   domain);
        if (owner.role != ROLE_SUPERADMIN && owner.role != ROLE_ADMIN) {
                r = model_is_member(c->m, project_id, owner.user_id, &err);
                if (r < 0)
                        return api_fail(c, err);
                if (r == 0)
                        return api_problem(c, 400, "invalid-api-params", "the owner is not a member of project '%s'",
                                           q.group);
        }
        if (q.agent_list && json_array_size(q.agent_list) > 0 && !api_is_superadmin(c))
                return api_problem(c, 403, "forbidden", "only superadmins may designate agents (agent_list)");
        if (q.rg) {
                r = model_rg_allowed(c->m, q.rg, domain, project_id, owner.access_key, &err);
                if (r < 0)
                        return api_fail(c, err);
                if (r == 0)
                        return api_problem(c, 400, "invalid-api-params",
                                           "resource group '%s' does not exist or is not allowed here", q.rg);
                snprintf(rg, sizeof(rg), "%s", q.rg);
        } else if ((r = model_rg_default(c->m, domain, project_id, owner.access_key, rg, sizeof(rg), &err)) < 0) {
                if (r == -ENOENT)
                        err->code = EINVAL; /* no resource group is open to the caller: a bad request */
                return api_fail(c, err);
        }
        r = session_image_resolve(c->m, q.image, q.architecture, domain, &IMAGE_VIEWER_OF(c, owner.user_id), &img,
                                  &err);
        if (r < 0)
                return api_fail(c, err);
        _cleanup_free_ char *image_ref = xasprintf("%s:%s", db_getn(img, 0, "name"), db_getn(img, 0, "tag"));
        r = session_image_resources(&q, img, &err);
        if (r < 0)
                return api_fail(c, err);

        /* get-or-create: the partial unique index on live names decides;
         * a name in use turns into answering the existing session */
        r = check_pending_limits(c->m, &owner, &q, &err);
        if (r == -EDQUOT && answer_existing(c, &q, owner.access_key, image_ref)) {
                tess_error_free(err);
                return;
        }
        if (r < 0)
                return api_fail(c, err);
        /* the owner's folders: an admin creating for owner_access_key mounts the owner's */
        json_t *vmounts = NULL;
        r = session_mounts_resolve(c->m, &owner, project_id, q.mounts, q.mount_map, &vmounts, &err);
        if (r < 0)
                return api_fail(c, err);
        uuid_generate_str(id);
        r = db_begin(c->m->db, &err);
        if (r < 0) {
                json_decref(vmounts);
                return api_fail(c, err);
        }
        r = insert_session(c, &q, &owner, project_id, domain, rg, image_ref, vmounts, id, &err);
        json_decref(vmounts);
        if (r >= 0)
                r = db_commit(c->m->db, &err);
        else
                db_rollback(c->m->db);
        if (r == -EEXIST) {
                tess_error_free(err);
                if (!answer_existing(c, &q, owner.access_key, image_ref))
                        api_problem(c, 409, "session-already-exists", "a session named '%s' already exists", q.name);
                return;
        }
        if (r < 0)
                return api_fail(c, err);
        api_audit_target(c, "session:%s", id);
        struct session_event ev = {
                .name = session_status_event(SESSION_PENDING),
                .session_id = id,
                .session_name = q.name,
                .access_key = owner.access_key,
                .user_id = owner.user_id,
                .domain = domain,
                .project_id = project_id,
                .status = "PENDING",
                .exit_code = -1,
        };
        events_publish(c->m->events, &ev);
        answer_or_wait(c, &q, id, q.name, "PENDING", true);
}

void api_session_info(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (api_find_session(c, c->param[0], http_query(c->req, "owner_access_key"), false, &rows, &err) < 0)
                return api_fail(c, err);
        api_owner_activity(c, rows);
        json_t *info = session_info_json(rows, 0);
        json_object_set_new(info, "servicePorts", api_session_service_ports(c->m, db_getn(rows, 0, "id")));
        api_json(c, 200, info);
}

void api_session_destroy(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *forced = http_query(c->req, "forced");
        bool force = forced && (streq(forced, "true") || streq(forced, "1"));
        int r;

        if (api_find_session(c, c->param[0], http_query(c->req, "owner_access_key"), true, &rows, &err) < 0)
                return api_fail(c, err);
        const char *id = db_getn(rows, 0, "id");
        enum session_status st = session_status_from_string(db_getn(rows, 0, "status"));
        api_audit_target(c, "session:%s", id);
        if (st == SESSION_PENDING)
                r = session_transition(c->m, id, st, SESSION_CANCELLED, "user-requested", &err);
        else if (st == SESSION_TERMINATING && force)
                r = session_transition(c->m, id, st, SESSION_TERMINATED, "force-terminated", &err);
        else if (st == SESSION_TERMINATING)
                r = 0;
        else
                r = session_transition(c->m, id, st, SESSION_TERMINATING, "user-requested", &err);
        if (r == -EAGAIN) {
                tess_error_free(err);
                return api_problem(c, 409, "conflict", "the session changed status meanwhile; try again");
        }
        if (r < 0)
                return api_fail(c, err);
        api_json(c, 200, json_pack("{s:{}}", "stats"));
}

/* POST /session/{name}/rename?name=NEW (Backend.AI's; name in a JSON body
 * too): a session that has not ended takes a new name, unique among its
 * owner's live sessions (409 when taken). */
void api_session_rename(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *name = http_query(c->req, "name");

        if (!name)
                name = json_string_value(json_object_get(c->body, "name"));
        if (api_find_session(c, c->param[0], api_owner_access_key(c), true, &rows, &err) < 0)
                return api_fail(c, err);
        if (!name || !api_valid_session_name(name))
                return api_problem(c, 400, "invalid-api-params",
                                   "name: the new name, 4-64 letters, digits, '-', '_' or '.', is required");
        const char *id = db_getn(rows, 0, "id");
        api_audit_target(c, "session:%s", id);
        if (session_status_is_terminal(session_status_from_string(db_getn(rows, 0, "status"))))
                return api_problem(c, 409, "session-already-ended", "session '%s' has ended: it keeps its name",
                                   c->param[0]);
        int r = DBQ(c->m->db,
                    "UPDATE sessions SET name = ? WHERE id = ? AND status NOT IN ('TERMINATED', 'CANCELLED', 'ERROR')",
                    NULL, &err, DB_TEXT(name), DB_TEXT(id));
        if (r == -EEXIST) {
                tess_error_free(err);
                return api_problem(c, 409, "conflict", "a live session of this owner is already named '%s'", name);
        }
        if (r < 0)
                return api_fail(c, err);
        api_json(c, 200, json_pack("{s:s, s:s}", "sessionId", id, "sessionName", name));
}

/* A live session's output comes from its agent; if the agent cannot be
 * reached, or the session ended, what its agent sent at the end.  As
 * {"result": {"logs": TEXT}}, or (Backend.AI's task logs) the text
 * itself. */
struct logs_answer {
        char *saved; /* what the session's kernel left at its end */
        bool as_text;
};

static void logs_answer_free(void *data)
{
        struct logs_answer *a = data;
        free(a->saved);
        free(a);
}

static void logs_reply(struct api_ctx *c, const struct logs_answer *a, const char *text)
{
        if (a->as_text)
                return http_reply(c->req, 200, "text/plain; charset=utf-8", text, strlen(text));
        api_json(c, 200, json_pack("{s:{s:s}}", "result", "logs", text));
}

static void logs_done(struct api_ctx *c, struct agent_call *call)
{
        const struct logs_answer *a = call->user;
        json_t *j = call->err ? NULL : json_loadb(call->answer.data, call->answer.len, 0, NULL);
        const char *live = json_string_value(json_object_get(j, "logs"));

        logs_reply(c, a, live ? live : a->saved);
        json_decref(j);
}

/* GET /session/_/logs?taskId=ID (Backend.AI's batch task logs): the
 * session of that id, or of the kernel of that id. */
static int find_task_session(struct api_ctx *c, const char *task, struct db_rows **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;

        if (!task || !uuid_valid(task))
                return tess_err(err, EINVAL, "taskId: the id of a session (or of one of its kernels) is required");
        int r = DBQ(c->m->db, "SELECT session_id FROM kernels WHERE id = ?", &k, err, DB_TEXT(task));
        if (r < 0)
                return r;
        return api_find_session(c, k->nrows ? db_get(k, 0, 0) : task, api_owner_access_key(c), false, ret, err);
}

void api_session_logs(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL, *logs = NULL;
        struct tess_error *err = NULL;
        bool task = streq(c->param[0], "_");
        int r = task ? find_task_session(c, http_query(c->req, "taskId"), &rows, &err)
                     : api_find_session(c, c->param[0], api_owner_access_key(c), false, &rows, &err);

        if (r < 0)
                return api_fail(c, err);
        api_owner_activity(c, rows);
        if (DBQ(c->m->db,
                "SELECT k.container_log, k.id, k.agent_id, a.address FROM kernels k LEFT JOIN agents a"
                " ON a.id = k.agent_id WHERE k.session_id = ? ORDER BY k.cluster_idx LIMIT 1",
                &logs, &err, DB_TEXT(db_getn(rows, 0, "id"))) < 0)
                return api_fail(c, err);
        struct logs_answer *a = xcalloc(1, sizeof(*a));
        a->saved = xstrdup(logs->nrows && db_get(logs, 0, 0) ? db_get(logs, 0, 0) : "");
        a->as_text = task;
        enum session_status st = session_status_from_string(db_getn(rows, 0, "status"));
        const char *address = logs->nrows ? db_get(logs, 0, 3) : NULL;
        if (!session_status_is_terminal(st) && address && *address) {
                _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/logs", db_get(logs, 0, 1));
                struct agent_call *call =
                        agent_call_one(c, db_get(logs, 0, 2), address, "GET", target, NULL, 0, NULL, 30, logs_done);
                if (call) {
                        call->user = a;
                        call->user_free = logs_answer_free;
                } else {
                        logs_answer_free(a);
                }
                return;
        }
        logs_reply(c, a, a->saved);
        logs_answer_free(a);
}

/* GET /sessions?status=A,B&owner=&group=&type=&name=&resource_group=&domain=&limit=&offset=
 * (the SQL: session_list.c) */
void api_session_list(struct api_ctx *c)
{
        struct session_list_params p = {
                .who = &c->who,
                .status = http_query(c->req, "status"),
                .owner = http_query(c->req, "owner"),
                .group = http_query(c->req, "group"),
                .type = http_query(c->req, "type"),
                .name = http_query(c->req, "name"),
                .resource_group = http_query(c->req, "resource_group"),
                .domain_name = http_query(c->req, "domain"),
        };
        struct session_list_query q;
        struct tess_error *err = NULL;
        _cleanup_rows_ struct db_rows *rows = NULL, *count = NULL;

        if (api_page(c, &p.limit, &p.offset, &err) < 0 || session_list_build(&p, &q, &err) < 0)
                return api_fail(c, err);
        int r = db_query(c->m->db, q.count_sql, q.args, q.count_nargs, &count, &err);
        if (r >= 0)
                r = db_query(c->m->db, q.page_sql, q.args, q.nargs, &rows, &err);
        session_list_release(&q);
        if (r < 0)
                return api_fail(c, err);
        int64_t limit = p.limit, offset = p.offset;
        json_t *items = json_array();
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(items, session_info_json(rows, i));
        api_json(c, 200,
                 json_pack("{s:o, s:I, s:I, s:I}", "items", items, "total",
                           (json_int_t)strtoll(db_get(count, 0, 0), NULL, 10), "limit", (json_int_t)limit, "offset",
                           (json_int_t)offset));
}
