/* api_events.c - GET /events/session: session events as server-sent events.
 *
 * Query: sessionName (a name, or "*" for all the caller may see), sessionId,
 * ownerAccessKey (admins), groupName ("*" or a project name), scope.
 * Whatever the filters, a stream carries only the events of sessions the
 * caller may see (authz.h: a domain admin's never a superadmin's).
 * Each event is `event: <name>` and `data: {sessionId, sessionName,
 * ownerAccessKey, status, reason, exitCode}`; the stream opens with a
 * comment (`: open`, api_event_stream_start) and a comment every 15 s
 * keeps proxies from closing it.  Names are Backend.AI's
 * (session_enqueued, _scheduled, _preparing, _pulling, _creating,
 * _started, _terminating, _terminated, _cancelled, ...), and, for streams
 * that ask with ?waiting=1, one of Tessera's: session_waiting, when the
 * scheduler's reason a PENDING session waits changed (`reason` is its
 * message, as statusData has it); Backend.AI's clients never see it.
 *
 * With several managers on one PostgreSQL a stream has the events of all
 * of them (cluster_events.c).  Each event's `id:` is the one its manager
 * gave it (events.h: the microsecond time of its publication, unique per
 * manager), the same on every stream of every manager: a client that
 * reconnects, to the same manager or another one behind the same front,
 * can tell an event it has already seen.  Nothing is replayed: a new
 * stream starts with the events published after it opened, and
 * Last-Event-ID is ignored; a client that must not miss a change reads the
 * session (GET /session/{name}, /sessions) once its stream is open.
 *
 * A stream is held (held_conn.h): it ends when the credential that opened
 * it is revoked. */
#include "common/compat.h"

#include <inttypes.h>

#include "common/buf.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/authz.h"
#include "manager/api/held_conn.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"

#define KEEPALIVE_USEC (15 * USEC_PER_SEC)

struct sse_sub {
        struct api_ctx *c;
        uint64_t held;
        char *session_name; /* NULL = any */
        char *session_id;
        char *access_key;   /* NULL = any visible */
        char *project_id;   /* NULL = any */
        bool waiting;       /* also session_waiting (?waiting=1) */
};

static void sub_free(void *p)
{
        struct sse_sub *s = p;
        held_conn_drop(s->c->m, s->held);
        free(s->session_name);
        free(s->session_id);
        free(s->access_key);
        free(s->project_id);
        free(s);
}

static bool visible(const struct sse_sub *s, const struct session_event *ev)
{
        if (!authz_sees(s->c, &(struct authz_owner){ ev->user_id, ev->domain, NULL }))
                return false;
        if (s->session_name && !streq(s->session_name, ev->session_name))
                return false;
        if (s->session_id && !streq(s->session_id, ev->session_id))
                return false;
        if (s->access_key && !streq(s->access_key, ev->access_key))
                return false;
        if (s->project_id && !streq(s->project_id, ev->project_id))
                return false;
        return true;
}

static void on_event(const struct session_event *ev, void *data)
{
        struct sse_sub *s = data;
        struct buf b = BUF_INIT;

        if (!visible(s, ev) || (!s->waiting && streq(ev->name, "session_waiting")))
                return;
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:o}", "sessionId", ev->session_id, "sessionName",
                              ev->session_name, "ownerAccessKey", ev->access_key, "status", ev->status, "reason",
                              ev->reason, "exitCode", ev->exit_code >= 0 ? json_integer(ev->exit_code) : json_null());
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        buf_printf(&b, "id: %" PRIu64 "\nevent: %s\ndata: %s\n\n", ev->id, ev->name, text);
        free(text);
        http_stream_write(s->c->req, b.data, b.len);
        buf_release(&b);
}

static void on_keepalive(struct loop *l, void *data)
{
        struct sse_sub *s = data;
        http_stream_write(s->c->req, ": keep-alive\n\n", 14);
        s->c->timer_id = loop_add_timer(l, KEEPALIVE_USEC, on_keepalive, s);
}

static void revoke_access(void *data)
{
        struct sse_sub *s = data;
        http_stream_end(s->c->req);
}

static char *nonempty_not_star(const char *v)
{
        return v && *v && !streq(v, "*") ? xstrdup(v) : NULL;
}

void api_events_session(struct api_ctx *c)
{
        struct sse_sub *s = xcalloc(1, sizeof(*s));
        struct tess_error *err = NULL;
        const char *owner = http_query(c->req, "ownerAccessKey");
        const char *group = http_query(c->req, "groupName");

        s->c = c;
        c->state = s;
        c->state_free = sub_free;
        s->session_name = nonempty_not_star(http_query(c->req, "sessionName"));
        s->session_id = nonempty_not_star(http_query(c->req, "sessionId"));
        const char *waiting = http_query(c->req, "waiting");
        s->waiting = waiting && (streq(waiting, "1") || streq(waiting, "true"));
        if (owner && *owner && !streq(owner, c->who.access_key)) {
                struct principal p;
                if (authz_owner_keypair(c, owner, AUTHZ_READ, &p, &err) < 0)
                        return api_fail(c, err);
                s->access_key = xstrdup(owner);
        } else if (s->session_name || c->who.role == ROLE_USER) {
                /* a session name is meaningful per owner: default to the caller */
                if (!(api_is_admin(c) && !s->session_name))
                        s->access_key = xstrdup(c->who.access_key);
        }
        if (group && *group && !streq(group, "*")) {
                _cleanup_rows_ struct db_rows *rows = NULL;
                if (DBQ(c->m->db, "SELECT id FROM projects WHERE domain_name = ? AND name = ?", &rows, &err,
                        DB_TEXT(c->who.domain), DB_TEXT(group)) < 0)
                        return api_fail(c, err);
                if (rows->nrows == 0)
                        return api_problem(c, 404, "object-not-found", "project '%s' not found", group);
                s->project_id = xstrdup(db_get(rows, 0, 0));
        }
        api_event_stream_start(c);
        c->listener_id = events_listen(c->m->events, on_event, s);
        c->timer_id = loop_add_timer(c->m->loop, KEEPALIVE_USEC, on_keepalive, s);
        struct held_cred cred;
        held_cred_of(c, &cred);
        s->held = held_conn_add(c->m, &cred, revoke_access, s);
}
