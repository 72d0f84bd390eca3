/* events.h - the in-process event bus for session and background-task
 * events.
 *
 * Session state changes are published here after they are committed to the
 * database; listeners are the server-sent-event streams of
 * /events/session and the `POST /session` requests that wait for a session
 * to start.  Background tasks (bgtask.h) publish their progress and end
 * the same way, to the streams of /events/background-task.  A listener
 * hears one kind of event.
 *
 * Several managers on one PostgreSQL are one bus: a relay (set by the
 * program, cluster_events.c) sends each event published here to the other
 * managers, and the events they publish come back through
 * events_receive(), to the same listeners, without being relayed again.
 *
 * Each event's id (the SSE `id:`) is given once, by the manager that
 * publishes it, and is the same on every manager: the wall-clock time of
 * its publication in microseconds, made strictly increasing per manager.
 * Ids of one manager's events increase; across managers they follow the
 * clocks, so a stream may see an event of another manager with an id a
 * little below the one before it. */
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

struct task_event {
        uint64_t id;
        const char *name;    /* "bgtask_updated", "bgtask_done", "bgtask_failed", "bgtask_cancelled" */
        const char *task_id;
        const char *status;  /* "ongoing", "done", "failed", "cancelled" */
        int64_t current_progress, total_progress;
        const char *message;
        const char *user_id; /* who started it */
        const char *domain;
};

typedef void (*events_fn)(const struct session_event *ev, void *data);
typedef void (*events_task_fn)(const struct task_event *ev, void *data);

struct events;

struct events *events_new(void);
struct events *events_free(struct events *e);
/* Deliver ev to every listener and to the relay (ev->id is assigned here). */
void events_publish(struct events *e, struct session_event *ev);
void events_publish_task(struct events *e, struct task_event *ev);
/* Deliver an event another manager published (its id is kept) to every
 * listener, not to the relay. */
void events_receive(struct events *e, const struct session_event *ev);
void events_receive_task(struct events *e, const struct task_event *ev);

/* The relay: called after the local listeners with each event published
 * here, exactly one of session_ev and task_ev set; fn NULL removes it. */
typedef void (*events_relay_fn)(const struct session_event *session_ev, const struct task_event *task_ev, void *data);
void events_set_relay(struct events *e, events_relay_fn fn, void *data);

uint64_t events_listen(struct events *e, events_fn fn, void *data);
uint64_t events_listen_tasks(struct events *e, events_task_fn fn, void *data);
void events_unlisten(struct events *e, uint64_t id);
/* Events published here, and received from other managers. */
uint64_t events_published(const struct events *e);
uint64_t events_received(const struct events *e);

#endif
