/* scheduler_write.c - write one resource group's pass to the database.
 *
 * One transaction: every placed session PENDING -> SCHEDULED (compare-and-
 * set on its status) with its kernels' agents, slots and GPU devices; every
 * touched agent's occupied_slots, conditional on the allocation generation
 * read with the snapshot (a concurrent scheduler makes it -EAGAIN and
 * nothing is written); every waiting session's reason in
 * status_data.scheduler when it changed.  Rows of a kind go in batches
 * (db_batch.h): a few statements per pass, not one per row.  Events follow
 * the commit. */
#include "common/compat.h"

#include "common/log.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/db/db_batch.h"
#include "manager/scheduler/scheduler-internal.h"
#include "manager/sessions/session.h"

static char *vec_text(const struct snapshot *s, const struct sched_vec *v, int times)
{
        struct sched_vec t = *v;
        struct slots sl;

        for (int k = 0; k < SCHED_NSLOTS; k++)
                t.v[k] *= times;
        sched_vec_to_slots(&s->slots, &t, &sl);
        return slots_to_text(&sl);
}

static char *device_alloc_text(const struct snapshot *s, int agent, const struct sched_kernel_alloc *k)
{
        json_t *o = json_object();
        const struct sched_agent *a = &s->agents[agent];

        for (int j = 0; j < k->ndev; j++) {
                char amount[48];
                slot_format(s->slots.name[a->gpu_slot], k->dev[j].amount, amount, sizeof(amount));
                json_object_set_new(o, s->device_ids[agent][k->dev[j].dev], json_string(amount));
        }
        char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(o);
        return text;
}

/* status_data of a waiting session, Backend.AI's shape plus `msg`. */
static char *waiting_status_data(const struct sched_decision *d)
{
        json_t *passed = json_array(), *failed = json_array();
        bool before = true;

        for (int i = 0; sched_predicate_names[i]; i++) {
                if (d->predicate && streq(sched_predicate_names[i], d->predicate))
                        before = false;
                if (before)
                        json_array_append_new(passed, json_string(sched_predicate_names[i]));
        }
        json_array_append_new(failed, json_pack("{s:s, s:s}", "name", d->predicate, "msg", d->msg));
        json_t *o = json_pack("{s:{s:o, s:o, s:s}}", "scheduler", "passed_predicates", passed, "failed_predicates",
                              failed, "msg", d->msg);
        char *text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return text;
}

/* The pass's writes, one batch per kind of row. */
struct pass_writes {
        struct db_batch sessions; /* id, status_history, occupying_slots */
        struct db_batch kernels;  /* session_id, cluster_idx, agent_id, occupied_slots, device_alloc */
        struct db_batch waiting;  /* id, status_data */
};

static void pass_writes_init(struct pass_writes *w, int64_t now)
{
        db_batch_init(&w->sessions,
                      "UPDATE sessions SET status = 'SCHEDULED', status_info = 'scheduled', status_history = v.column2,"
                      " status_changed_at = ?, occupying_slots = v.column3, occupied_at = ?, status_data = '{}' FROM",
                      "WHERE sessions.id = v.column1 AND sessions.status = 'PENDING'", 3);
        db_batch_fixed(&w->sessions, DB_INT(now));
        db_batch_fixed(&w->sessions, DB_INT(now));
        db_batch_init(&w->kernels,
                      "UPDATE kernels SET status = 'SCHEDULED', status_info = 'scheduled', agent_id = v.column3,"
                      " occupied_slots = v.column4, device_alloc = v.column5 FROM",
                      "WHERE kernels.session_id = v.column1 AND kernels.cluster_idx = CAST(v.column2 AS BIGINT)", 5);
        db_batch_init(&w->waiting, "UPDATE sessions SET status_data = v.column2 FROM",
                      "WHERE sessions.id = v.column1 AND sessions.status = 'PENDING'", 2);
}

static void pass_writes_done(struct pass_writes *w)
{
        db_batch_done(&w->sessions);
        db_batch_done(&w->kernels);
        db_batch_done(&w->waiting);
}

static void add_placed(struct pass_writes *w, struct snapshot *s, struct rgroup *g, const struct sched_decision *d,
                       int64_t now)
{
        int p = g->pending_start + d->session;
        const struct sched_session *ses = &s->pending[p];
        char *hist = session_history_add(db_getn(s->pending_rows, p, "status_history"), SESSION_SCHEDULED, now);

        db_batch_row(&w->sessions, (struct db_arg[]){ DB_TEXT(ses->id), DB_TEXT(db_batch_keep(&w->sessions, hist)),
                                                      DB_TEXT(db_batch_keep(&w->sessions,
                                                                            vec_text(s, &ses->req, ses->cluster_size))) });
        const char *per = db_batch_keep(&w->kernels, vec_text(s, &ses->req, 1));
        for (int i = 0; i < ses->cluster_size; i++) {
                int a = g->agent_start + d->kernels[i].agent;
                s->agent_touched[a] = true;
                db_batch_row(&w->kernels,
                             (struct db_arg[]){ DB_TEXT(ses->id), DB_INT(i + 1), DB_TEXT(s->agents[a].id), DB_TEXT(per),
                                                DB_TEXT(db_batch_keep(&w->kernels,
                                                                      device_alloc_text(s, a, &d->kernels[i]))) });
        }
}

/* Whether the reason d's session waits changed (then it is written). */
static bool add_waiting(struct pass_writes *w, struct snapshot *s, struct rgroup *g, const struct sched_decision *d)
{
        int p = g->pending_start + d->session;
        char *data = waiting_status_data(d);

        if (streq(db_getn(s->pending_rows, p, "status_data"), data)) {
                free(data);
                return false;
        }
        db_batch_row(&w->waiting,
                     (struct db_arg[]){ DB_TEXT(s->pending[p].id), DB_TEXT(db_batch_keep(&w->waiting, data)) });
        return true;
}

/* Store the occupancy of agents a pass placed kernels on (`touched`), or of
 * the others when it differs from what is stored (sessions ended);
 * conditional on the allocation generation read with the snapshot: an agent
 * changed meanwhile makes it -EAGAIN. */
static int write_agents(struct manager *m, struct snapshot *s, int from, int to, bool touched,
                        struct tess_error **err)
{
        struct db_batch b;

        db_batch_init(&b, "UPDATE agents SET occupied_slots = v.column2, alloc_gen = alloc_gen + 1 FROM",
                      "WHERE agents.id = v.column1 AND agents.alloc_gen = CAST(v.column3 AS BIGINT)"
                      " AND agents.status = 'ALIVE'",
                      3);
        for (int a = from; a < to; a++) {
                if (s->agent_touched[a] != touched)
                        continue;
                char *used = vec_text(s, &s->agents[a].used, 1);
                if (!touched && streq(db_getn(s->agent_rows, a, "occupied_slots"), used)) {
                        free(used);
                        continue;
                }
                db_batch_row(&b, (struct db_arg[]){ DB_TEXT(s->agents[a].id), DB_TEXT(db_batch_keep(&b, used)),
                                                    DB_INT(s->alloc_gen[a]) });
                s->alloc_gen[a]++; /* on failure the snapshot is dropped */
        }
        int r = db_batch_run(m->db, &b, err);
        if (r >= 0 && r != b.nrows)
                r = tess_err(err, EAGAIN, "an agent changed during the pass");
        db_batch_done(&b);
        return r < 0 ? r : 0;
}

int snapshot_write_occupancy(struct manager *m, struct snapshot *s, struct tess_error **err)
{
        int r = db_begin(m->db, err);

        if (r >= 0)
                r = write_agents(m, s, 0, s->nagents, false, err);
        if (r >= 0)
                return db_commit(m->db, err);
        db_rollback(m->db);
        return r;
}

static int run_pass_writes(struct manager *m, struct snapshot *s, struct rgroup *g, struct pass_writes *w,
                           struct tess_error **err)
{
        int r = db_batch_run(m->db, &w->sessions, err);

        if (r >= 0 && r != w->sessions.nrows)
                return tess_err(err, EAGAIN, "a session left PENDING during the pass");
        if (r >= 0)
                r = db_batch_run(m->db, &w->kernels, err);
        if (r >= 0)
                r = db_batch_run(m->db, &w->waiting, err);
        if (r >= 0)
                r = write_agents(m, s, g->agent_start, g->agent_start + g->nagents, true, err);
        return r < 0 ? r : 0;
}

int snapshot_write(struct manager *m, struct snapshot *s, struct rgroup *g, const struct sched_output *out,
                   int64_t now, struct tess_error **err)
{
        struct pass_writes w;
        int r = db_begin(m->db, err);

        if (r < 0)
                return r;
        pass_writes_init(&w, now);
        bool *changed = xcalloc((size_t)out->n + 1, sizeof(bool));
        for (int i = 0; i < out->n; i++) {
                const struct sched_decision *d = &out->d[i];
                if (d->outcome == SCHED_PLACED)
                        add_placed(&w, s, g, d, now);
                else /* waiting, or cancelled below: the reason is kept */
                        changed[i] = add_waiting(&w, s, g, d);
        }
        r = run_pass_writes(m, s, g, &w, err);
        pass_writes_done(&w);
        if (r >= 0)
                r = db_commit(m->db, err);
        else
                db_rollback(m->db);
        if (r < 0) {
                free(changed);
                return r;
        }
        for (int i = 0; i < out->n; i++) {
                int row = g->pending_start + out->d[i].session;
                if (out->d[i].outcome == SCHED_PLACED)
                        session_publish(m, s->pending_rows, row, "SCHEDULED", "scheduled");
                else if (changed[i] && out->d[i].outcome == SCHED_WAITING)
                        session_publish_named(m, s->pending_rows, row, "session_waiting", "PENDING", out->d[i].msg);
        }
        free(changed);
        /* can never start: cancelled one by one, after the placements */
        for (int i = 0; i < out->n; i++) {
                const struct sched_decision *d = &out->d[i];
                struct tess_error *cerr = NULL;
                if (d->outcome != SCHED_CANCEL)
                        continue;
                if (session_transition(m, s->pending[g->pending_start + d->session].id, SESSION_PENDING,
                                       SESSION_CANCELLED, "dependency-failed", &cerr) < 0) {
                        log_warn("scheduler: cancelling %s: %s", s->pending[g->pending_start + d->session].id,
                                 cerr->msg);
                        tess_error_free(cerr);
                }
        }
        return 0;
}
