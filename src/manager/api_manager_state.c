/* api_manager_state.c - Backend.AI's /manager routes: the announcement
 * every client shows, and the service's status (running or frozen for
 * maintenance, how many sessions are active).  The state itself is
 * api/server_state.h's. */
#include "common/compat.h"

#include <unistd.h>

#include "common/sign.h"
#include "common/version.h"
#include "manager/api/api.h"
#include "manager/api/server_state.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/main.h"
#include "manager/sessions/session.h"

#define ACTIVE_SESSIONS "status NOT IN ('TERMINATED', 'CANCELLED', 'ERROR')"

/* GET /manager/announcement: anyone signed in. */
void api_manager_announcement_get(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *message = NULL;
        bool enabled;

        if (server_announcement_get(c->m, &enabled, &message, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, json_pack("{s:b, s:s}", "enabled", enabled, "message", message));
}

/* POST /manager/announcement {enabled = true, message}: superadmins. */
void api_manager_announcement_set(struct api_ctx *c)
{
        static const char *const enabled_names[] = { "enabled", NULL }, *const message_names[] = { "message", NULL };
        struct tess_error *err = NULL;
        const char *message = NULL;
        bool enabled = true;

        if (api_get_bool(c->body, enabled_names, &enabled, &err) < 0 ||
            (json_is_null(api_field(c->body, message_names))
                     ? 0
                     : api_get_string(c->body, message_names, ANNOUNCEMENT_MAX, &message, &err)) < 0)
                return api_fail(c, err);
        if (enabled && (!message || !*message))
                return api_problem(c, 400, "invalid-api-params",
                                   "message: required to post an announcement (enabled false takes it down)");
        if (server_announcement_set(c->m, enabled, message, &err) < 0)
                return api_fail(c, err);
        api_audit_target(c, "announcement");
        http_reply(c->req, 204, NULL, "", 0);
}

static int count_active(struct manager *m, int64_t *n, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        if (db_query(m->db, "SELECT COUNT(*) AS n FROM sessions WHERE " ACTIVE_SESSIONS, NULL, 0, &rows, err) < 0)
                return -1;
        *n = db_get_int(rows, 0, "n");
        return 0;
}

/* GET /manager/status: superadmins.  Backend.AI's shape: this manager as
 * the one node, the status, the active sessions of the whole service. */
void api_manager_status_get(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *status = server_frozen(c->m) ? "frozen" : "running";
        char host[256] = "";
        int64_t active;

        if (count_active(c->m, &active, &err) < 0)
                return api_fail(c, err);
        gethostname(host, sizeof(host) - 1);
        json_t *node = json_pack("{s:s, s:i, s:s, s:b, s:I, s:s, s:s, s:s}", "id", host, "num_proc", 1, "service_addr",
                                 c->m->conf.listen, "ssl_enabled", false, "active_sessions", (json_int_t)active,
                                 "status", status, "version", TESSERA_VERSION, "api_version", API_VERSION_SERVED);
        api_json(
                c, 200,
                json_pack("{s:[o], s:s, s:I}", "nodes", node, "status", status, "active_sessions", (json_int_t)active));
}

/* Every session that is not over ends: PENDING ones are cancelled, the
 * others terminated as if their owners had destroyed them. */
static int end_every_session(struct manager *m, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        if (db_query(m->db, "SELECT id, status FROM sessions WHERE " ACTIVE_SESSIONS " AND status <> 'TERMINATING'",
                     NULL, 0, &rows, err) < 0)
                return -1;
        for (int i = 0; i < rows->nrows; i++) {
                enum session_status st = session_status_from_string(db_get(rows, i, 1));
                enum session_status to = st == SESSION_PENDING ? SESSION_CANCELLED : SESSION_TERMINATING;
                int r = session_transition(m, db_get(rows, i, 0), st, to, "force-killed-by-freeze", err);
                if (r == -EAGAIN) /* it moved on by itself meanwhile */
                        *err = tess_error_free(*err);
                else if (r < 0)
                        return -1;
        }
        return 0;
}

/* PUT /manager/status {status: running|frozen, force_kill}: superadmins. */
void api_manager_status_set(struct api_ctx *c)
{
        static const char *const status_names[] = { "status", NULL }, *const kill_names[] = { "force_kill", NULL };
        struct tess_error *err = NULL;
        const char *status = NULL;
        bool force_kill = false;

        if (api_get_string(c->body, status_names, 16, &status, &err) < 0 ||
            api_get_bool(c->body, kill_names, &force_kill, &err) < 0)
                return api_fail(c, err);
        if (!status || !(streq(status, "running") || streq(status, "frozen")))
                return api_problem(c, 400, "invalid-api-params", "status: must be \"running\" or \"frozen\"");
        bool freeze = streq(status, "frozen");
        if (force_kill && !freeze)
                return api_problem(c, 400, "invalid-api-params", "force_kill: only with status \"frozen\"");
        api_audit_target(c, "manager:%s", status);
        if (server_set_frozen(c->m, freeze, &err) < 0 || (force_kill && end_every_session(c->m, &err) < 0))
                return api_fail(c, err);
        http_reply(c->req, 204, NULL, "", 0);
}
