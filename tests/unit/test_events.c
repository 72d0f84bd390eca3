/* test_events.c - the event bus: ids, the relay to other managers, events
 * received from them. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/timeutil.h"
#include "manager/core/events.h"

struct seen {
        int sessions, tasks;
        uint64_t last_id;
        char last_name[64];
};

static void on_session(const struct session_event *ev, void *data)
{
        struct seen *s = data;
        s->sessions++;
        s->last_id = ev->id;
        snprintf(s->last_name, sizeof(s->last_name), "%s", ev->name);
}

static void on_task(const struct task_event *ev, void *data)
{
        struct seen *s = data;
        s->tasks++;
        s->last_id = ev->id;
        snprintf(s->last_name, sizeof(s->last_name), "%s", ev->name);
}

static void on_relay(const struct session_event *session_ev, const struct task_event *task_ev, void *data)
{
        struct seen *s = data;
        CHECK((session_ev != NULL) != (task_ev != NULL));
        if (session_ev)
                on_session(session_ev, s);
        else
                on_task(task_ev, s);
}

static struct session_event session_ev(const char *name)
{
        return (struct session_event){
                .name = name, .session_id = "s-1", .session_name = "one", .status = "PENDING", .exit_code = -1
        };
}

/* Ids are microsecond times, strictly increasing even within one microsecond. */
static void test_events_ids_increase(void)
{
        struct events *e = events_new();
        int64_t before = now_usec();
        uint64_t last = 0;

        for (int i = 0; i < 1000; i++) {
                struct session_event ev = session_ev("session_enqueued");
                events_publish(e, &ev);
                CHECK(ev.id > last);
                last = ev.id;
        }
        struct task_event t = { .name = "bgtask_updated", .task_id = "t-1", .status = "ongoing" };
        events_publish_task(e, &t);
        CHECK(t.id > last);
        CHECK(t.id >= (uint64_t)before);
        CHECK(t.id < (uint64_t)now_usec() + 1000000);
        CHECK_INTEQ(events_published(e), 1001);
        events_free(e);
}

/* What is published goes to the listeners, then to the relay; what is
 * received goes to the listeners only, with the id it came with. */
static void test_events_relay_and_receive(void)
{
        struct events *e = events_new();
        struct seen listener = { 0 }, tasks = { 0 }, relay = { 0 };

        events_listen(e, on_session, &listener);
        events_listen_tasks(e, on_task, &tasks);
        events_set_relay(e, on_relay, &relay);

        struct session_event ev = session_ev("session_enqueued");
        events_publish(e, &ev);
        CHECK_INTEQ(listener.sessions, 1);
        CHECK_INTEQ(relay.sessions, 1);
        CHECK(relay.last_id == ev.id);
        CHECK_INTEQ(tasks.tasks, 0);

        struct task_event t = { .name = "bgtask_done", .task_id = "t-1", .status = "done" };
        events_publish_task(e, &t);
        CHECK_INTEQ(tasks.tasks, 1);
        CHECK_INTEQ(relay.tasks, 1);
        CHECK_INTEQ(listener.sessions, 1);

        struct session_event remote = session_ev("session_scheduled");
        remote.id = 42;
        events_receive(e, &remote);
        CHECK_INTEQ(listener.sessions, 2);
        CHECK(listener.last_id == 42);
        CHECK_STREQ(listener.last_name, "session_scheduled");
        CHECK_INTEQ(relay.sessions, 1); /* not sent back */

        struct task_event remote_task = { .id = 43, .name = "bgtask_failed", .task_id = "t-2", .status = "failed" };
        events_receive_task(e, &remote_task);
        CHECK_INTEQ(tasks.tasks, 2);
        CHECK(tasks.last_id == 43);
        CHECK_INTEQ(relay.tasks, 1);

        CHECK_INTEQ(events_published(e), 2);
        CHECK_INTEQ(events_received(e), 2);

        /* without a relay, publishing still reaches the listeners */
        events_set_relay(e, NULL, NULL);
        events_publish(e, &ev);
        CHECK_INTEQ(listener.sessions, 3);
        CHECK_INTEQ(relay.sessions, 1);
        events_free(e);
}

static const struct test tests[] = {
        TEST(test_events_ids_increase),
        TEST(test_events_relay_and_receive),
        {},
};

int main(void)
{
        return test_main(tests);
}
