/* events.c - see events.h. */
#include "common/compat.h"

#include "common/timeutil.h"
#include "manager/core/events.h"

struct listener {
        uint64_t id;
        events_fn fn;           /* session events; NULL for a task listener */
        events_task_fn task_fn; /* task events */
        void *data;
};

struct events {
        struct listener *l;
        int n, cap;
        uint64_t next_listener;
        uint64_t last_id;             /* the id of the last event published here */
        uint64_t published, received; /* counts, for /metrics */
        events_relay_fn relay;
        void *relay_data;
        int publishing;   /* nesting depth of events_publish */
        bool removed;     /* a listener was removed while publishing */
};

struct events *events_new(void)
{
        return xcalloc(1, sizeof(struct events));
}

struct events *events_free(struct events *e)
{
        if (e) {
                free(e->l);
                free(e);
        }
        return NULL;
}

static void compact(struct events *e)
{
        int w = 0;
        for (int i = 0; i < e->n; i++)
                if (e->l[i].fn || e->l[i].task_fn)
                        e->l[w++] = e->l[i];
        e->n = w;
        e->removed = false;
}

/* Deliver one event to the listeners of its kind: session_ev or task_ev. */
static void deliver(struct events *e, const struct session_event *session_ev, const struct task_event *task_ev)
{
        e->publishing++;
        /* listeners added during delivery (index >= n at start) miss this event */
        int n = e->n;
        for (int i = 0; i < n; i++) {
                if (session_ev && e->l[i].fn)
                        e->l[i].fn(session_ev, e->l[i].data);
                else if (task_ev && e->l[i].task_fn)
                        e->l[i].task_fn(task_ev, e->l[i].data);
        }
        if (--e->publishing == 0 && e->removed)
                compact(e);
}

/* The time now in microseconds, or one more than the last id if the clock
 * has not moved (or went back). */
static uint64_t next_id(struct events *e)
{
        int64_t now = now_usec();
        e->last_id = now > 0 && (uint64_t)now > e->last_id ? (uint64_t)now : e->last_id + 1;
        e->published++;
        return e->last_id;
}

void events_publish(struct events *e, struct session_event *ev)
{
        ev->id = next_id(e);
        deliver(e, ev, NULL);
        if (e->relay)
                e->relay(ev, NULL, e->relay_data);
}

void events_publish_task(struct events *e, struct task_event *ev)
{
        ev->id = next_id(e);
        deliver(e, NULL, ev);
        if (e->relay)
                e->relay(NULL, ev, e->relay_data);
}

void events_receive(struct events *e, const struct session_event *ev)
{
        e->received++;
        deliver(e, ev, NULL);
}

void events_receive_task(struct events *e, const struct task_event *ev)
{
        e->received++;
        deliver(e, NULL, ev);
}

void events_set_relay(struct events *e, events_relay_fn fn, void *data)
{
        e->relay = fn;
        e->relay_data = data;
}

static uint64_t add_listener(struct events *e, events_fn fn, events_task_fn task_fn, void *data)
{
        if (e->n == e->cap) {
                e->cap = e->cap ? e->cap * 2 : 16;
                e->l = xrealloc(e->l, sizeof(*e->l) * (size_t)e->cap);
        }
        e->l[e->n++] = (struct listener){ ++e->next_listener, fn, task_fn, data };
        return e->next_listener;
}

uint64_t events_listen(struct events *e, events_fn fn, void *data)
{
        return add_listener(e, fn, NULL, data);
}

uint64_t events_listen_tasks(struct events *e, events_task_fn fn, void *data)
{
        return add_listener(e, NULL, fn, data);
}

void events_unlisten(struct events *e, uint64_t id)
{
        for (int i = 0; i < e->n; i++) {
                if (e->l[i].id == id) {
                        e->l[i].fn = NULL;
                        e->l[i].task_fn = NULL;
                        e->removed = true;
                        break;
                }
        }
        if (!e->publishing && e->removed)
                compact(e);
}

uint64_t events_published(const struct events *e)
{
        return e->published;
}

uint64_t events_received(const struct events *e)
{
        return e->received;
}
