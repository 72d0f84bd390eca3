/* agent_sync.c - what each agent should run: POST /agent/sync, a long poll.
 *
 * The manager never calls agents to start or stop containers; each agent
 * asks, and the answer is the whole desired state of that agent: every
 * kernel placed on it whose session still lives, each with `action`
 * "run" or "stop" and what the agent needs to run it.  A kernel the agent
 * has that is not in the list belongs to a session that ended: the agent
 * removes it.  Being level-triggered, nothing is lost when the manager or
 * the agent restarts: the next answer says the same.
 *
 *   POST /agent/sync   {"id": "node-1", "digest": "...", "wait": SECONDS}
 *   -> {"digest": "...", "kernels": [{"id": ..., "action": "run", ...}]}
 *
 * `digest` identifies an answer; when the agent sends the digest of the
 * current one, the request waits (up to `wait`, at most 30 s) until a
 * session event touches one of the agent's kernels, and then answers.
 * One listener serves all waiting agents: per event, one query finds the
 * agents that hold the session's kernels. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/sign.h"
#include "common/strmap.h"
#include "common/timeutil.h"
#include "manager/accounts/dotfiles.h"
#include "manager/agents/agent_sync.h"
#include "manager/agents/api_agent.h"
#include "manager/api/api.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

#define SYNC_MAX_WAIT_SEC 30

struct sync_wait {
        struct agent_sync *sync;
        struct api_ctx *c;
        char agent[AGENT_ID_MAX + 1];
        char digest[65];
        int slot; /* index in sync->waits */
};

struct agent_sync {
        struct manager *m;
        uint64_t listener;
        struct sync_wait **waits; /* dense; order does not matter */
        int nwaits, cap;
};

static const char desired_sql[] =
        "SELECT k.id, k.session_id, k.cluster_role, k.cluster_idx, k.cluster_hostname, k.occupied_slots,"
        " k.device_alloc, s.name AS session_name, s.status AS session_status, s.session_type, s.startup_command,"
        " s.bootstrap_script, s.environ, s.resource_opts, s.cluster_size, s.cluster_mode, s.image, s.architecture,"
        " s.access_key, s.user_id, s.mounts, s.vfolder_mounts, i.registry, i.digest AS image_digest,"
        " cr.username AS registry_user, cr.password_sealed AS registry_password"
        " FROM kernels k JOIN sessions s ON s.id = k.session_id"
        " LEFT JOIN images i ON i.name || ':' || i.tag = s.image AND i.architecture = s.architecture"
        " LEFT JOIN container_registries cr ON cr.name = i.registry"
        " WHERE k.agent_id = ? AND s.status IN ('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING',"
        " 'TERMINATING') AND k.exit_code IS NULL ORDER BY k.id";

static json_t *json_or_empty(const char *text, bool array)
{
        json_t *j = text ? json_loads(text, 0, NULL) : NULL;
        if (!j)
                j = array ? json_array() : json_object();
        return j;
}

/* The credentials of the image's registry, when it is a registered one
 * that has them, as "registry_auth": {username, password}: the agent pulls
 * with them (the channel is the cluster's, signed both ways). */
static int add_registry_auth(struct manager *m, const struct db_rows *rows, int i, json_t *k, struct tess_error **err)
{
        const char *user = db_getn(rows, i, "registry_user"), *sealed = db_getn(rows, i, "registry_password");
        _cleanup_free_ char *password = NULL;

        if ((!user || !*user) && (!sealed || !*sealed))
                return 0;
        if (sealed && *sealed && secret_open(m->master_key, sealed, &password, err) < 0)
                return tess_err_wrap(err, "the password of registry '%s'", db_getn(rows, i, "registry"));
        json_object_set_new(k, "registry_auth", json_pack("{s:s, s:s}", "username", user ? user : "", "password",
                                                          password ? password : ""));
        if (password)
                explicit_bzero(password, strlen(password));
        return 0;
}

/* The user's dotfiles as "dotfiles": [{path, permission, data}], for a
 * kernel whose container is not made yet: the agent writes them into its
 * home when it makes it (kernel_runtime.c).  Read then, as Backend.AI
 * does, and left out once the session runs, so that changing them moves
 * no running kernel's description.  `seen`: the users' read so far. */
static int add_dotfiles(struct manager *m, const struct db_rows *rows, int i, json_t *seen, json_t *k,
                        struct tess_error **err)
{
        static const char *const before_running[] = { "SCHEDULED", "PREPARING", "PULLING", "CREATING", NULL };
        const char *status = db_getn(rows, i, "session_status"), *user = db_getn(rows, i, "user_id");
        bool early = false;
        json_t *files;

        for (const char *const *s = before_running; *s && !early; s++)
                early = streq(status, *s);
        if (!early || !user)
                return 0;
        files = json_object_get(seen, user);
        if (!files) {
                if (dotfiles_list(m, user, &files, err) < 0)
                        return -1;
                json_object_set_new(seen, user, files);
        }
        if (json_array_size(files) > 0)
                json_object_set(k, "dotfiles", files);
        return 0;
}

/* The desired state of `agent` and its digest. */
static int desired_state(struct manager *m, const char *agent, json_t **ret, char digest[65], struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, desired_sql, &rows, err, DB_TEXT(agent));

        if (r < 0)
                return r;
        json_t *kernels = json_array(), *seen = json_object();
        for (int i = 0; i < rows->nrows; i++) {
                const char *status = db_getn(rows, i, "session_status");
                json_t *k = json_pack(
                        "{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s?, s:s?, s:o, s:I, s:s, s:s, s:s, s:s, s:s,"
                        " s:s?, s:s?, s:o, s:o, s:o, s:o}",
                        "id", db_getn(rows, i, "id"), "action", streq(status, "TERMINATING") ? "stop" : "run",
                        "session_id", db_getn(rows, i, "session_id"), "session_name",
                        db_getn(rows, i, "session_name"), "cluster_idx", (json_int_t)db_get_int(rows, i, "cluster_idx"),
                        "cluster_role", db_getn(rows, i, "cluster_role"), "cluster_hostname",
                        db_getn(rows, i, "cluster_hostname"), "session_type", db_getn(rows, i, "session_type"),
                        "session_status", status, "startup_command", db_getn(rows, i, "startup_command"),
                        "bootstrap_script", db_getn(rows, i, "bootstrap_script"), "environ",
                        json_or_empty(db_getn(rows, i, "environ"), false), "cluster_size",
                        (json_int_t)db_get_int(rows, i, "cluster_size"), "cluster_mode",
                        db_getn(rows, i, "cluster_mode"), "image", db_getn(rows, i, "image"), "architecture",
                        db_getn(rows, i, "architecture"), "access_key", db_getn(rows, i, "access_key"), "user_id",
                        db_getn(rows, i, "user_id"), "registry", db_getn(rows, i, "registry"), "image_digest",
                        db_getn(rows, i, "image_digest"), "slots", json_or_empty(db_getn(rows, i, "occupied_slots"), false),
                        "device_alloc", json_or_empty(db_getn(rows, i, "device_alloc"), false), "mounts",
                        json_or_empty(db_getn(rows, i, "mounts"), true), "vfolder_mounts",
                        json_or_empty(db_getn(rows, i, "vfolder_mounts"), true));
                if (!k) {
                        json_decref(kernels);
                        json_decref(seen);
                        return tess_err(err, EIO, "kernel %s: cannot describe it", db_getn(rows, i, "id"));
                }
                /* the writable layers' size the manager decided (0: the agent's own) */
                json_t *opts = json_or_empty(db_getn(rows, i, "resource_opts"), false);
                json_object_set_new(k, "disk_limit",
                                    json_integer(json_integer_value(json_object_get(opts, "disk"))));
                json_decref(opts);
                if (add_registry_auth(m, rows, i, k, err) < 0 || add_dotfiles(m, rows, i, seen, k, err) < 0) {
                        json_decref(k);
                        json_decref(kernels);
                        json_decref(seen);
                        return -EIO;
                }
                json_array_append_new(kernels, k);
        }
        json_decref(seen);
        _cleanup_free_ char *text = json_dumps(kernels, JSON_COMPACT | JSON_SORT_KEYS);
        sha256_hex(text, strlen(text), digest);
        digest[32] = '\0'; /* 128 bits name an answer; nothing secret */
        *ret = kernels;
        return 0;
}

static void answer(struct api_ctx *c, const char *agent)
{
        struct tess_error *err = NULL;
        json_t *kernels = NULL;
        char digest[65];

        if (desired_state(c->m, agent, &kernels, digest, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, json_pack("{s:s, s:o}", "digest", digest, "kernels", kernels));
}

static void wait_remove(struct sync_wait *w)
{
        struct agent_sync *s = w->sync;

        if (w->slot < 0)
                return;
        s->waits[w->slot] = s->waits[--s->nwaits];
        s->waits[w->slot]->slot = w->slot;
        w->slot = -1;
}

static void wait_free(void *data)
{
        struct sync_wait *w = data;
        wait_remove(w);
        free(w);
}

static void wait_finish(struct sync_wait *w)
{
        struct api_ctx *c = w->c;

        wait_remove(w);
        if (c->timer_id) {
                loop_cancel_timer(c->m->loop, c->timer_id);
                c->timer_id = 0;
        }
        answer(c, w->agent);
        http_resume(c->req);
}

static void on_wait_timeout(struct loop *l UNUSED, void *data)
{
        struct sync_wait *w = data;
        w->c->timer_id = 0;
        wait_finish(w);
}

static void on_wait_shutdown(struct api_ctx *c)
{
        wait_finish(c->state);
}

/* Wake the agents holding kernels of the session an event is about. */
static void on_event(const struct session_event *ev, void *data)
{
        struct agent_sync *s = data;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (s->nwaits == 0 || streq(ev->status, "PENDING"))
                return;
        if (DBQ(s->m->db, "SELECT DISTINCT agent_id FROM kernels WHERE session_id = ? AND agent_id IS NOT NULL",
                &rows, &err, DB_TEXT(ev->session_id)) < 0) {
                log_warn("agent sync: %s", err->msg);
                tess_error_free(err);
                return;
        }
        for (int i = 0; i < rows->nrows; i++)
                for (int j = s->nwaits - 1; j >= 0; j--)
                        if (streq(s->waits[j]->agent, db_get(rows, i, 0)))
                                wait_finish(s->waits[j]);
}

void agent_sync_wake_all(struct agent_sync *s)
{
        while (s->nwaits > 0)
                wait_finish(s->waits[s->nwaits - 1]);
}

struct agent_sync *agent_sync_new(struct manager *m)
{
        struct agent_sync *s = xcalloc(1, sizeof(*s));
        s->m = m;
        s->listener = events_listen(m->events, on_event, s);
        return s;
}

struct agent_sync *agent_sync_free(struct agent_sync *s)
{
        if (!s)
                return NULL;
        events_unlisten(s->m->events, s->listener);
        free(s->waits); /* parked requests were answered at shutdown */
        free(s);
        return NULL;
}

void api_agent_sync(struct api_ctx *c)
{
        struct agent_sync *s = c->m->agent_sync;
        const char *id = NULL, *known = NULL;
        int64_t wait = 0;
        struct tess_error *err = NULL;
        json_t *kernels = NULL;
        char digest[65];

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "a JSON body is required");
        if (api_get_string(c->body, NAMES("id"), AGENT_ID_MAX, &id, &err) < 0 ||
            api_get_string(c->body, NAMES("digest"), 64, &known, &err) < 0 ||
            api_get_int(c->body, NAMES("wait"), 0, SYNC_MAX_WAIT_SEC, &wait, &err) < 0)
                return api_fail(c, err);
        if (!id || !streq(id, c->who.user_id))
                return api_problem(c, 403, "forbidden", "the request is signed for agent '%s', not '%s'",
                                   c->who.user_id, id ? id : "");
        if (desired_state(c->m, id, &kernels, digest, &err) < 0)
                return api_fail(c, err);
        if (wait == 0 || !known || !streq(known, digest)) {
                api_json(c, 200, json_pack("{s:s, s:o}", "digest", digest, "kernels", kernels));
                return;
        }
        json_decref(kernels);
        /* one parked request per agent: a newer one replaces it */
        for (int j = s->nwaits - 1; j >= 0; j--)
                if (streq(s->waits[j]->agent, id))
                        wait_finish(s->waits[j]);
        struct sync_wait *w = xcalloc(1, sizeof(*w));
        w->sync = s;
        w->c = c;
        snprintf(w->agent, sizeof(w->agent), "%s", id);
        snprintf(w->digest, sizeof(w->digest), "%s", digest);
        if (s->nwaits == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 16;
                s->waits = xrealloc(s->waits, (size_t)s->cap * sizeof(*s->waits));
        }
        w->slot = s->nwaits;
        s->waits[s->nwaits++] = w;
        c->state = w;
        c->state_free = wait_free;
        c->on_shutdown = on_wait_shutdown;
        c->timer_id = loop_add_timer(c->m->loop, wait * USEC_PER_SEC, on_wait_timeout, w);
        http_suspend(c->req);
}
