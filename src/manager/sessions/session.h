/* session.h - compute sessions: the state machine and its storage.
 *
 * States and transitions (the table is in session.c; every transition is a
 * compare-and-set on the status column, stamped in status_history and
 * published as an event after the database change):
 *
 *   PENDING ----> SCHEDULED ----> PREPARING <--> PULLING ----> CREATING ----> RUNNING
 *     |  ^            |              |             |              |             |
 *     |  +------------+--------------+-------------+ (reschedule) |             |
 *     v                                                           v             v
 *   CANCELLED              ERROR <--- (any non-terminal) ---  TERMINATING ---> TERMINATED
 *
 * Terminal: TERMINATED, CANCELLED, ERROR.  A session name is unique among
 * one owner's non-terminal sessions (a partial unique index). */
#ifndef TESS_SESSION_H
#define TESS_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"

struct manager;
struct db_rows;

enum session_status {
        SESSION_PENDING,
        SESSION_SCHEDULED,
        SESSION_PREPARING,
        SESSION_PULLING,
        SESSION_CREATING,
        SESSION_RUNNING,
        SESSION_TERMINATING,
        SESSION_TERMINATED,
        SESSION_CANCELLED,
        SESSION_ERROR,
        _SESSION_STATUS_MAX,
        _SESSION_STATUS_INVALID = -EINVAL,
};

const char *session_status_to_string(enum session_status s);
enum session_status session_status_from_string(const char *s);
bool session_status_is_terminal(enum session_status s);
/* The event name published on entering a status ("session_enqueued"...). */
const char *session_status_event(enum session_status s);
bool session_transition_allowed(enum session_status from, enum session_status to);

/* Move session `id` from `from` to `to` (compare-and-set), record the time
 * in status_history and the reason in status_info; for terminal states set
 * terminated_at and the kernels' status.  -EAGAIN if the session was no
 * longer in `from`; -EINVAL if the table forbids the transition.  The
 * event is published after the change is committed. */
int session_transition(struct manager *m, const char *id, enum session_status from, enum session_status to,
                       const char *reason, struct tess_error **err);

/* The database side of a transition of the session in `rows` row `row`
 * (read with session_select()) to `to`, inside the caller's transaction:
 * compare-and-set on the status it was read in (-EAGAIN if it moved),
 * status_history stamped, kernels follow, and when the session stops
 * holding resources its occupancy interval goes to usage accounting.  The
 * caller publishes the event after committing. */
int session_apply_transition(struct manager *m, const struct db_rows *rows, int row, enum session_status to,
                             const char *reason, struct tess_error **err);
/* The owner used session `id` (API, terminal or app traffic): it is not
 * idle.  At most one write per second per session; errors only logged. */
void session_touch(struct manager *m, const char *id, int64_t now);

/* status_history JSON text with `to` stamped at `now` (caller frees). */
char *session_history_add(const char *history, enum session_status to, int64_t now);

/* Every session query reads session_columns FROM session_from (sessions s,
 * projects p, users u and the main kernel k; one row per session);
 * session_select() builds "SELECT <columns> FROM ... WHERE <where>"
 * (caller frees).  session_info_json() is the JSON answer of
 * GET /session/{name} built from one row of them. */
extern const char session_columns[];
extern const char session_from[];
char *session_select(const char *where);
json_t *session_info_json(const struct db_rows *rows, int row);

/* Publish an event for the session in `rows` row `row` entering status. */
void session_publish(struct manager *m, const struct db_rows *rows, int row, const char *status, const char *reason);
/* The same with an event name of its own: "session_waiting" when the
 * reason a PENDING session waits changed (the scheduler's message). */
void session_publish_named(struct manager *m, const struct db_rows *rows, int row, const char *name,
                           const char *status, const char *reason);

/* statusData.<key> = value (a reference taken; NULL removes the key),
 * keeping the rest (session_status_data.c). */
int session_set_status_data(struct manager *m, const char *id, const char *key, json_t *value,
                            struct tess_error **err);
/* statusData's key of the mark below */
#define SESSION_UNREACHABLE_KEY "agentUnreachable"
/* The live sessions with a kernel on `agent`, silent since `since`, get the
 * mark "agent-unreachable"; when it answers again they lose it
 * (session_status_data.c says what the mark is). */
int session_mark_agent_unreachable(struct manager *m, const char *agent, int64_t since, struct tess_error **err);
int session_unmark_agent_unreachable(struct manager *m, const char *agent, struct tess_error **err);
/* A session row's statusInfo as it was before a mark (what an end keeps:
 * a kernel's report can come before its agent's heartbeat takes the mark
 * off); NULL when none.  Caller frees. */
char *session_info_unmarked(const struct db_rows *rows, int row);

#endif
