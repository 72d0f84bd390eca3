/* events.h - the in-process event bus for session events.
 *
 * Session state changes are published here after they are committed to the
 * database; listeners are the server-sent-event streams of
 * /events/session and the `POST /session` requests that wait for a session
 * to start.  Each event gets a manager-local increasing id (the SSE `id:`). */
#ifndef TESS_EVENTS_H
#define TESS_EVENTS_H

#include <stdint.h>

struct session_event {
        uint64_t id;
        const char *name;        /* "session_enqueued", "session_cancelled", ... */
        const char *session_id;
        const char *session_name;
        const char *access_key;  /* owner */
        const char *user_id;
        const char *domain;
        const char *project_id;
        const char *status;      /* the status reached */
        const char *reason;      /* may be NULL */
        int64_t exit_code;       /* -1 when unknown */
};

typedef void (*events_fn)(const struct session_event *ev, void *data);

struct events;

struct events *events_new(void);
struct events *events_free(struct events *e);
/* Deliver ev to every listener (ev->id is assigned here). */
void events_publish(struct events *e, struct session_event *ev);
uint64_t events_listen(struct events *e, events_fn fn, void *data);
void events_unlisten(struct events *e, uint64_t id);
uint64_t events_published(const struct events *e);

#endif
