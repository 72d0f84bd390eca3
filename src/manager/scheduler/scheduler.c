/* scheduler.c - when the manager schedules, and the order of a tick (see
 * scheduler.h).  Events ask for a tick through a short timer so that a
 * burst of them makes one tick, and waits at least as long as the last
 * tick took, so that behind a deep queue the scheduler takes at most about
 * half of the manager's time and API requests keep being answered; the
 * periodic timer catches what no event announces (batch start times,
 * timeouts, silent agents). */
#include "common/compat.h"

#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/core/metrics.h"
#include "manager/db/db.h"
#include "manager/scheduler/scheduler-internal.h"
#include "manager/scheduler/scheduler.h"

#define SCHED_LOCK_KEY 7419002 /* pg advisory lock: one scheduling manager */
#define KICK_DELAY_USEC (1 * USEC_PER_MSEC)
/* the periodic pass, never more often than every 100 ms */
#define MAX_USEC(interval) ((interval) > 100 * USEC_PER_MSEC ? (interval) : 100 * USEC_PER_MSEC)

struct scheduler {
        struct manager *m;
        int64_t test_delay; /* TESSERA_TEST_SCHED_DELAY_MS: widen the race window in tests */
        uint64_t listener;
        uint64_t kick_timer, period_timer;
        struct strmap retries;   /* session id -> failed placements */
        struct beats_seen beats; /* agents' heartbeats as this manager saw them */
        struct strmap rr_cursor; /* resource group -> roundrobin position */
        int64_t last_tick_usec; /* how long the last tick took */
        bool in_tick;
};

static void tick(struct scheduler *s);

static void on_kick(struct loop *l UNUSED, void *data)
{
        struct scheduler *s = data;
        s->kick_timer = 0;
        tick(s);
}

static void on_period(struct loop *l UNUSED, void *data)
{
        struct scheduler *s = data;
        s->period_timer = loop_add_timer(s->m->loop, MAX_USEC(s->m->conf.scheduler_interval), on_period, s);
        tick(s);
}

void scheduler_kick(struct manager *m)
{
        struct scheduler *s = m->scheduler;
        if (s && !s->kick_timer)
                s->kick_timer = loop_add_timer(
                        m->loop, s->last_tick_usec > KICK_DELAY_USEC ? s->last_tick_usec : KICK_DELAY_USEC, on_kick, s);
}

/* Anything but our own placements may open or use room. */
static void on_event(const struct session_event *ev, void *data)
{
        struct scheduler *s = data;
        /* a placement or an end frees or needs room; a pass's own reasons do not */
        if (!streq(ev->status, "SCHEDULED") && !streq(ev->name, "session_waiting"))
                scheduler_kick(s->m);
}

static bool take_lock(struct manager *m)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (db_kind(m->db) != DB_POSTGRES)
                return true;
        if (DBQ(m->db, "SELECT pg_try_advisory_lock(?) AS ok", &rows, &err, DB_INT(SCHED_LOCK_KEY)) < 0) {
                log_warn("scheduler: %s", err->msg);
                tess_error_free(err);
                return false;
        }
        const char *ok = db_getn(rows, 0, "ok");
        return ok && (streq(ok, "t") || streq(ok, "1") || streq(ok, "true"));
}

static void release_lock(struct manager *m)
{
        if (db_kind(m->db) == DB_POSTGRES)
                DBQ(m->db, "SELECT pg_advisory_unlock(?)", NULL, NULL, DB_INT(SCHED_LOCK_KEY));
}

/* Run the pass of every group with pending sessions; false if a write
 * lost a race (the next tick starts over from a fresh snapshot). */
static int schedule(struct scheduler *sc, struct rgroup *groups, int ngroups, int64_t now, int *placed,
                    struct tess_error **err)
{
        struct snapshot snap;
        struct strmap retries;
        int r = snapshot_load(sc->m, &snap, groups, ngroups, now, &sc->retries, err);

        strmap_init(&retries);
        for (int i = 0; r >= 0 && i < ngroups; i++) {
                struct rgroup *g = &groups[i];
                struct sched_input in;
                struct sched_output out;
                if (g->npending == 0)
                        continue;
                g->rr_cursor = strmap_get(&sc->rr_cursor, g->name) > 0 ? strmap_get(&sc->rr_cursor, g->name) : 0;
                snapshot_input(&snap, g, now, &in);
                r = sched_pass(&in, &out, err);
                if (sc->test_delay > 0)
                        usleep((useconds_t)sc->test_delay);
                if (r >= 0)
                        r = snapshot_write(sc->m, &snap, g, &out, now, err);
                if (r >= 0) {
                        *placed += out.placed;
                        strmap_put(&sc->rr_cursor, g->name, in.rr_cursor);
                        for (int j = 0; j < out.n; j++) {
                                const struct sched_session *p = &in.pending[out.d[j].session];
                                if (out.d[j].outcome == SCHED_WAITING && p->retries > 0)
                                        strmap_put(&retries, p->id, p->retries);
                        }
                }
                sched_output_free(&out);
        }
        if (r >= 0)
                r = snapshot_write_occupancy(sc->m, &snap, err);
        if (r >= 0) {
                strmap_free(&sc->retries);
                sc->retries = retries;
        } else {
                strmap_free(&retries);
        }
        snapshot_free(&snap);
        return r;
}

static void tick(struct scheduler *s)
{
        struct manager *m = s->m;
        struct tess_error *err = NULL;
        struct rgroup *groups = NULL;
        int ngroups = 0, placed = 0, r;
        int64_t start = monotonic_usec(), now = now_usec();

        if (s->in_tick || !take_lock(m))
                return;
        s->in_tick = true; /* session_transition publishes events, which kick */
        r = rgroups_load(m, &groups, &ngroups, &err);
        if (r >= 0)
                r = judge_agents(m, &s->beats, now, &err);
        if (r >= 0)
                r = reap_expired_sessions(m, groups, ngroups, now, &err);
        if (r >= 0)
                r = reap_inactive_owners(m, &err);
        if (r >= 0)
                r = reap_terminations(m, &err);
        if (r >= 0)
                r = schedule(s, groups, ngroups, now, &placed, &err);
        release_lock(m);
        s->in_tick = false;
        rgroups_free(groups, ngroups);
        if (r == -EAGAIN) {
                log_info("scheduler: %s; trying again", err->msg);
                scheduler_kick(m);
        } else if (r < 0) {
                log_error("scheduler: %s", err->msg);
        }
        tess_error_free(err);
        s->last_tick_usec = monotonic_usec() - start;
        if (placed > 0)
                log_info("scheduler: placed %d sessions in %.1f ms", placed, (double)s->last_tick_usec / USEC_PER_MSEC);
}

struct scheduler *scheduler_start(struct manager *m)
{
        struct scheduler *s = xcalloc(1, sizeof(*s));

        s->m = m;
        if (getenv("TESSERA_TEST_SCHED_DELAY_MS"))
                s->test_delay = strtoll(getenv("TESSERA_TEST_SCHED_DELAY_MS"), NULL, 10) * USEC_PER_MSEC;
        strmap_init(&s->retries);
        beats_seen_init(&s->beats);
        strmap_init(&s->rr_cursor);
        s->listener = events_listen(m->events, on_event, s);
        s->period_timer = loop_add_timer(m->loop, MAX_USEC(m->conf.scheduler_interval), on_period, s);
        s->kick_timer = loop_add_timer(m->loop, KICK_DELAY_USEC, on_kick, s); /* a first tick at start */
        return s;
}

struct scheduler *scheduler_stop(struct scheduler *s)
{
        if (!s)
                return NULL;
        events_unlisten(s->m->events, s->listener);
        if (s->kick_timer)
                loop_cancel_timer(s->m->loop, s->kick_timer);
        if (s->period_timer)
                loop_cancel_timer(s->m->loop, s->period_timer);
        strmap_free(&s->retries);
        beats_seen_release(&s->beats);
        strmap_free(&s->rr_cursor);
        free(s);
        return NULL;
}
