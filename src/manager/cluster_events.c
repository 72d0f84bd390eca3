/* cluster_events.c - several managers on one PostgreSQL are one event bus.
 *
 * Every event published on this manager's bus (core/events.h) is sent to
 * the others with NOTIFY on channel tessera_events, on the connection that
 * made the change.  Events are published once their change is committed;
 * those of one turn of the loop (a scheduling pass publishes hundreds) go
 * out together at its end, one statement and one commit for all, in the
 * order they were published.  A second connection LISTENs (db/db_listen.h)
 * and hands the other managers' events to this bus's listeners: the
 * streams of /events/session and /events/background-task, the agents' sync
 * long polls, the scheduler, the requests waiting for a session to start.
 *
 * A payload is JSON of at most 8000 bytes (PostgreSQL's limit):
 *   {"m": INSTANCE, "k": "session", "id": N, "name": ..., "sessionId": ...}
 * with the event's fields (a reason or message longer than FIELD_MAX bytes
 * is cut), or {"m": INSTANCE, "k": "resync"} when an event could not be
 * sent whole.  INSTANCE is a UUID drawn at each start: a manager skips its
 * own events, which its listeners have already had.
 *
 * When the listening connection was lost and is back, the events of the
 * time between are lost: the manager acts as if anything may have changed
 * (a scheduler pass, every waiting agent answered; each agent's answer is
 * the whole of what it should run, so nothing is missed).  SQLite
 * managers are alone: nothing here runs. */
#include "common/compat.h"

#include <jansson.h>

#include "common/crypto.h"
#include "common/log.h"
#include "common/loop.h"
#include "manager/agents/agent_sync.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/db/db_listen.h"
#include "manager/main.h"
#include "manager/scheduler/scheduler.h"

#define CHANNEL     "tessera_events"
#define FIELD_MAX   1024 /* bytes of a reason or message on the wire */
#define PAYLOAD_MAX 7999 /* PostgreSQL refuses 8000 and more */
#define BATCH_MAX   256  /* events sent by one statement */

struct cluster_events {
        struct manager *m;
        struct db_listen *listen;
        char instance[UUID_STR_LEN];
        json_t *pending;     /* payloads not sent yet (strings), in order */
        uint64_t send_timer; /* sends them on the loop's next turn */
        bool send_failing;   /* the last send failed (logged once per run of failures) */
};

/* s cut to at most FIELD_MAX bytes, at a character's start; *cut is
 * freed by the caller. */
static const char *bounded(const char *s, char **cut)
{
        size_t n;

        *cut = NULL;
        if (!s || strlen(s) <= FIELD_MAX)
                return s;
        n = FIELD_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                n--;
        *cut = xstrndup(s, n);
        return *cut;
}

static json_t *session_payload(const struct cluster_events *ce, const struct session_event *ev)
{
        _cleanup_free_ char *cut = NULL;
        return json_pack("{s:s, s:s, s:I, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:s, s:s?, s:I}", "m", ce->instance,
                         "k", "session", "id", (json_int_t)ev->id, "name", ev->name, "sessionId", ev->session_id,
                         "sessionName", ev->session_name, "accessKey", ev->access_key, "userId", ev->user_id, "domain",
                         ev->domain, "projectId", ev->project_id, "status", ev->status, "reason",
                         bounded(ev->reason, &cut), "exitCode", (json_int_t)ev->exit_code);
}

static json_t *task_payload(const struct cluster_events *ce, const struct task_event *ev)
{
        _cleanup_free_ char *cut = NULL;
        return json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:I, s:I, s:s?, s:s?, s:s?}", "m", ce->instance, "k", "task",
                         "id", (json_int_t)ev->id, "name", ev->name, "taskId", ev->task_id, "status", ev->status,
                         "current", (json_int_t)ev->current_progress, "total", (json_int_t)ev->total_progress,
                         "message", bounded(ev->message, &cut), "userId", ev->user_id, "domain", ev->domain);
}

/* Send the pending payloads in one statement (one round trip and one
 * commit for a scheduling pass's hundreds of events, instead of one each). */
static void send_pending(struct cluster_events *ce)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *batch = NULL;

        if (ce->send_timer)
                loop_cancel_timer(ce->m->loop, ce->send_timer);
        ce->send_timer = 0;
        if (json_array_size(ce->pending) == 0)
                return;
        batch = json_dumps(ce->pending, JSON_COMPACT);
        json_array_clear(ce->pending);
        if (DBQ(ce->m->db, "SELECT pg_notify(?, value) FROM json_array_elements_text(?)", NULL, &err, DB_TEXT(CHANNEL),
                DB_TEXT(batch)) < 0) {
                if (!ce->send_failing)
                        log_warn("cluster events: sending events to the other managers failed: %s", err->msg);
                tess_error_free(err);
                ce->send_failing = true;
                return;
        }
        if (ce->send_failing)
                log_notice("cluster events: sending events to the other managers works again");
        ce->send_failing = false;
}

static void on_send_timer(struct loop *l UNUSED, void *data)
{
        struct cluster_events *ce = data;
        ce->send_timer = 0;
        send_pending(ce);
}

/* events_relay_fn: an event published here, to the other managers, with
 * the others published in this turn of the loop (events are published
 * after their change is committed). */
static void relay(const struct session_event *session_ev, const struct task_event *task_ev, void *data)
{
        struct cluster_events *ce = data;
        json_t *j = session_ev ? session_payload(ce, session_ev) : task_payload(ce, task_ev);
        _cleanup_free_ char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

        json_decref(j);
        if (!text || strlen(text) > PAYLOAD_MAX) {
                log_warn("cluster events: event '%s' does not fit a notification; the other managers resync",
                         session_ev ? session_ev->name : task_ev->name);
                free(text);
                j = json_pack("{s:s, s:s}", "m", ce->instance, "k", "resync");
                text = json_dumps(j, JSON_COMPACT);
                json_decref(j);
        }
        json_array_append_new(ce->pending, json_string(text));
        if (json_array_size(ce->pending) >= BATCH_MAX)
                send_pending(ce);
        else if (!ce->send_timer)
                ce->send_timer = loop_add_timer(ce->m->loop, 0, on_send_timer, ce);
}

/* Anything may have changed: schedule, and answer every waiting agent. */
static void resync(struct cluster_events *ce)
{
        scheduler_kick(ce->m);
        if (ce->m->agent_sync)
                agent_sync_wake_all(ce->m->agent_sync);
}

static const char *str_of(json_t *j, const char *key)
{
        return json_string_value(json_object_get(j, key));
}

/* A string every listener compares: "" when the publisher had none. */
static const char *text_of(json_t *j, const char *key)
{
        const char *s = str_of(j, key);
        return s ? s : "";
}

static void receive_session(struct cluster_events *ce, json_t *j)
{
        json_t *code = json_object_get(j, "exitCode");
        struct session_event ev = {
                .id = (uint64_t)json_integer_value(json_object_get(j, "id")),
                .name = str_of(j, "name"),
                .session_id = str_of(j, "sessionId"),
                .session_name = text_of(j, "sessionName"),
                .access_key = text_of(j, "accessKey"),
                .user_id = text_of(j, "userId"),
                .domain = text_of(j, "domain"),
                .project_id = text_of(j, "projectId"),
                .status = str_of(j, "status"),
                .reason = str_of(j, "reason"),
                .exit_code = json_is_integer(code) ? json_integer_value(code) : -1,
        };
        if (!ev.name || !ev.session_id || !ev.status) {
                log_warn("cluster events: a session event without name, sessionId or status, ignored");
                return;
        }
        events_receive(ce->m->events, &ev);
}

static void receive_task(struct cluster_events *ce, json_t *j)
{
        struct task_event ev = {
                .id = (uint64_t)json_integer_value(json_object_get(j, "id")),
                .name = str_of(j, "name"),
                .task_id = str_of(j, "taskId"),
                .status = str_of(j, "status"),
                .current_progress = json_integer_value(json_object_get(j, "current")),
                .total_progress = json_integer_value(json_object_get(j, "total")),
                .message = str_of(j, "message"),
                .user_id = text_of(j, "userId"),
                .domain = text_of(j, "domain"),
        };
        if (!ev.name || !ev.task_id || !ev.status) {
                log_warn("cluster events: a task event without name, taskId or status, ignored");
                return;
        }
        events_receive_task(ce->m->events, &ev);
}

static void on_notify(const char *payload, void *data)
{
        struct cluster_events *ce = data;
        json_t *j = json_loads(payload, 0, NULL);
        const char *origin = str_of(j, "m"), *kind = str_of(j, "k");

        if (!origin || !kind)
                log_warn("cluster events: a notification on %s that is not a manager's event, ignored", CHANNEL);
        else if (streq(origin, ce->instance))
                ; /* ours: delivered when published */
        else if (streq(kind, "session"))
                receive_session(ce, j);
        else if (streq(kind, "task"))
                receive_task(ce, j);
        else if (streq(kind, "resync"))
                resync(ce);
        else
                log_debug("cluster events: event kind '%s' unknown here, ignored", kind);
        json_decref(j);
}

static void on_up(bool again, void *data)
{
        struct cluster_events *ce = data;

        if (!again) {
                log_info("cluster events: listening for the other managers' events (instance %s)", ce->instance);
                return;
        }
        log_notice("cluster events: listening again; events of the time between may be lost, resyncing");
        resync(ce);
}

static void on_down(const char *why, void *data UNUSED)
{
        log_warn("cluster events: not listening for the other managers' events (%s); reconnecting", why);
}

int cluster_events_start(struct manager *m, struct tess_error **err)
{
        static const struct db_listen_handlers handlers = { on_notify, on_up, on_down };
        struct cluster_events *ce;
        int r;

        if (db_kind(m->db) != DB_POSTGRES)
                return 0;
        ce = xcalloc(1, sizeof(*ce));
        ce->m = m;
        ce->pending = json_array();
        uuid_generate_str(ce->instance);
        r = db_listen_start(m->loop, m->conf.database, CHANNEL, &handlers, ce, &ce->listen, err);
        if (r < 0) {
                json_decref(ce->pending);
                free(ce);
                return r;
        }
        events_set_relay(m->events, relay, ce);
        m->cluster_events = ce;
        return 0;
}

void cluster_events_stop(struct manager *m)
{
        struct cluster_events *ce = m->cluster_events;

        if (!ce)
                return;
        if (m->events)
                events_set_relay(m->events, NULL, NULL);
        send_pending(ce); /* the last turn's */
        json_decref(ce->pending);
        db_listen_stop(ce->listen);
        free(ce);
        m->cluster_events = NULL;
}

const char *cluster_events_state(const struct manager *m)
{
        if (!m->cluster_events)
                return "local";
        return db_listen_up(m->cluster_events->listen) ? "listening" : "reconnecting";
}
