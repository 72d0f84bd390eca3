/* fuzz_sim_trace.c - the simulator's readers of outside files: the input as
 * a CSV trace, as a Helios cluster_log.csv and as a Philly cluster_job_log.
 * Whatever parses must hold jobs within the documented bounds, and a trace
 * must write and read back to the same jobs. */
#include "common/compat.h"

#include "common/buf.h"
#include "fuzz.h"
#include "sim/sim.h"

static void check_jobs(const struct sim_workload *w)
{
        for (size_t i = 0; i < w->n; i++) {
                const struct sim_job *j = &w->jobs[i];
                FUZZ_ASSERT(j->arrival >= 0 && j->arrival <= SIM_TIME_MAX);
                FUZZ_ASSERT(j->duration >= 0 && j->duration <= SIM_TIME_MAX);
                FUZZ_ASSERT(j->cpu >= 0 && j->mem >= 0 && j->gpu >= 0);
                FUZZ_ASSERT(j->nodes >= 1 && j->nodes <= SIM_MAX_NODES);
                FUZZ_ASSERT(j->user >= 0 && j->user < w->users.n);
                FUZZ_ASSERT(j->project >= 0 && j->project < w->projects.n);
                FUZZ_ASSERT(j->id && strlen(j->id) < SIM_NAME_MAX + 16);
        }
}

static void round_trip(const struct sim_workload *w)
{
        struct buf b = BUF_INIT;
        struct sim_workload back;
        struct tess_error *err = NULL;

        sim_trace_format(&b, w);
        sim_workload_init(&back);
        FUZZ_ASSERT(sim_trace_parse("again", b.data, b.len, &back, &err) == 0);
        FUZZ_ASSERT(back.n == w->n);
        for (size_t i = 0; i < w->n; i++) {
                const struct sim_job *a = &w->jobs[i], *c = &back.jobs[i];
                FUZZ_ASSERT(a->arrival == c->arrival && a->duration == c->duration && a->cpu == c->cpu &&
                            a->mem == c->mem && a->gpu == c->gpu && a->nodes == c->nodes &&
                            a->priority == c->priority && streq(a->id, c->id) &&
                            streq(w->users.v[a->user], back.users.v[c->user]) &&
                            streq(w->projects.v[a->project], back.projects.v[c->project]));
        }
        sim_workload_release(&back);
        buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data;
        struct sim_convert_opts o;
        struct sim_workload w;
        struct tess_error *err = NULL;
        size_t skipped;

        sim_workload_init(&w);
        if (sim_trace_parse("fuzz", p, size, &w, &err) == 0) {
                check_jobs(&w);
                round_trip(&w);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "fuzz", 4) == 0);
                err = tess_error_free(err);
        }
        sim_workload_release(&w);

        sim_convert_opts_default(&o);
        for (int src = SIM_SOURCE_PHILLY; src <= SIM_SOURCE_HELIOS; src++) {
                sim_workload_init(&w);
                if (sim_convert((enum sim_source)src, "fuzz", p, size, &o, &w, &skipped, &err) == 0) {
                        check_jobs(&w);
                        round_trip(&w);
                } else {
                        FUZZ_ASSERT(err && err->code == EINVAL);
                        err = tess_error_free(err);
                }
                sim_workload_release(&w);
        }
        return 0;
}
