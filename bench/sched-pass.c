/* bench/sched-pass.c - the scheduling library alone (src/sched), no
 * database, no daemon.  Not a test: nothing fails on timing.
 *
 * The cluster of issue 3: 2,000 agents with 8 GPUs each (half offering
 * fractional GPUs, cuda.shares with 1 fGPU per GPU, half whole GPUs,
 * cuda.device), 64 cores and 512 GiB each; 10,000 pending sessions mixing
 * fractional GPUs (0.1 to 1 fGPU, some 2-4), whole GPUs (1, 2, 4, 8),
 * CPU only, and a few cluster sessions, from 200 users.  It measures
 *   (a) one pass over the 10,000 pending on the 2,000 empty agents;
 *   (b) placements per second: (a)'s placements over its time, and a
 *       steady state where every round 500 running sessions end, 500 new
 *       ones arrive and a pass runs over the whole pending queue;
 *   (c) a pass over 10,000 pending when the cluster is already full
 *       (nothing fits);
 * for every policy and agent selection, through the agent index (what
 * sched_pass() does for long queues) and by scanning every agent (what it
 * does for short ones), and the crossover for short queues.
 *
 * Build and run: bench/sched-pass.sh.  Options: -r ROUNDS (repeats of each
 * measurement, default 5; the median is printed), -q (one policy only),
 * -n (no scanning runs: for profiling the index), -w (warm heap: keep freed
 * memory in the process, as a long-running manager's heap would be; by
 * default glibc returns a pass's ~8 MB to the kernel and the next pass
 * page-faults it back in, which on this virtual machine costs more than
 * the scheduling itself). */
#include "common/compat.h"

#include <malloc.h>
#include <time.h>

#include "sched/sched-internal.h"

#define NAGENTS 2000
#define NPENDING 10000
#define NUSERS 200

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
        uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static int64_t rnd(int64_t lo, int64_t hi)
{
        return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1));
}

static double now_sec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct sched_slots slots;
static struct sched_agent agents0[NAGENTS]; /* empty */
static char agent_ids[NAGENTS][16];
static struct sched_scope scopes0[NUSERS];
static struct sched_session queue0[NPENDING];

static void make_cluster(void)
{
        sched_slots_init(&slots);
        for (int i = 0; i < NAGENTS; i++) {
                struct sched_agent *a = &agents0[i];
                snprintf(agent_ids[i], sizeof(agent_ids[i]), "agent-%04d", i);
                *a = (struct sched_agent){ .id = agent_ids[i], .schedulable = true };
                a->cap.v[SCHED_CPU] = 64 * 1000;
                a->cap.v[SCHED_MEM] = 512LL << 30;
                if (i % 2)
                        sched_agent_set_gpus(a, SCHED_GPU_SHARES, 8, 100);
                else
                        sched_agent_set_gpus(a, SCHED_GPU_DEVICE, 8, 1);
        }
        for (int u = 0; u < NUSERS; u++) {
                scopes0[u] = (struct sched_scope){ .kind = SCHED_USER, .max_sessions = -1, .max_containers = -1 };
                sched_vec_unlimited(&scopes0[u].limit);
                scopes0[u].fair_share_usage = (double)rnd(0, 100000);
        }
}

static void make_session(struct sched_session *s, int i, int64_t t)
{
        static char names[NPENDING * 4][16];
        static int nnames;
        int kind = (int)rnd(0, 99);

        snprintf(names[nnames % (NPENDING * 4)], 16, "s%d", i);
        *s = (struct sched_session){ .id = names[nnames % (NPENDING * 4)], .name = names[nnames % (NPENDING * 4)],
                                     .enqueued_at = t, .cluster_size = 1, .rg_allowed = true };
        nnames++;
        for (int k = 0; k < _SCHED_SCOPE_KINDS; k++)
                s->scope[k] = -1;
        s->scope[SCHED_USER] = (int)rnd(0, NUSERS - 1);
        s->priority = rnd(0, 9) == 0 ? 10 : 0;
        s->req.v[SCHED_CPU] = rnd(1, 16) * 1000;
        s->req.v[SCHED_MEM] = rnd(4, 64) << 30;
        if (kind < 40)
                s->req.v[SCHED_GPU_SHARES] = rnd(0, 9) == 0 ? rnd(2, 4) * 100 : rnd(1, 10) * 10;
        else if (kind < 70)
                s->req.v[SCHED_GPU_DEVICE] = (int64_t[]){ 1, 1, 1, 2, 2, 4, 8 }[rnd(0, 6)];
        if (rnd(0, 19) == 0) {
                s->cluster_size = (int)rnd(2, 4);
                s->multi_node = rnd(0, 1);
        }
}

static void make_queue(void)
{
        for (int i = 0; i < NPENDING; i++)
                make_session(&queue0[i], i, i);
}

static struct sched_agent agents[NAGENTS];
static struct sched_scope scopes[NUSERS];
static struct sched_session queue[NPENDING];

static void reset(void)
{
        memcpy(agents, agents0, sizeof(agents));
        memcpy(scopes, scopes0, sizeof(scopes));
        memcpy(queue, queue0, sizeof(queue));
}

static void fill_cluster(void)
{
        for (int i = 0; i < NAGENTS; i++) {
                agents[i].used = agents[i].cap;
                for (int d = 0; d < agents[i].ndev; d++)
                        agents[i].dev[d].used = agents[i].dev[d].cap;
        }
}

static struct sched_input input(struct sched_policy p, int npending)
{
        return (struct sched_input){ .slots = &slots, .policy = p, .agents = agents, .nagents = NAGENTS,
                                     .scopes = scopes, .nscopes = NUSERS, .pending = queue, .npending = npending };
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(double), cmp_double);
        return v[n / 2];
}

/* One pass from a fresh state; returns seconds, *placed. */
static double one_pass(struct sched_policy p, enum sched_search how, bool full, bool quiet, int npending, int *placed)
{
        struct sched_output out;
        struct tess_error *err = NULL;

        reset();
        if (full)
                fill_cluster();
        struct sched_input in = input(p, npending);
        in.no_messages = quiet;
        double t0 = now_sec();
        if (sched_pass_search(&in, how, &out, &err) < 0) {
                fprintf(stderr, "sched-pass: %s\n", err->msg);
                exit(1);
        }
        double t = now_sec() - t0;
        *placed = out.placed;
        sched_output_free(&out);
        return t;
}

/* Steady state: the cluster as (a) left it; then `rounds` times: end 500
 * running sessions, enqueue 500 new ones, one pass over all pending. */
struct running {
        struct sched_session s;
        struct sched_kernel_alloc *k;
};

static void steady(struct sched_policy p, enum sched_search how, int rounds, double *ret_rate, double *ret_pass,
                   int *ret_pending)
{
        static struct running run[NPENDING * 2];
        static struct sched_session pend[NPENDING * 2];
        int nrun = 0, npend = 0, placed_total = 0, arrivals = NPENDING, pending_sum = 0;
        double t_total = 0;
        struct sched_output out;
        struct tess_error *err = NULL;

        reset();
        memcpy(pend, queue0, sizeof(queue0));
        npend = NPENDING;
        for (int r = 0; r <= rounds; r++) {
                if (r > 0) {
                        /* 500 end, 500 arrive */
                        for (int e = 0; e < 500 && nrun > 0; e++) {
                                int i = (int)rnd(0, nrun - 1);
                                struct running *x = &run[i];
                                for (int k = 0; k < x->s.cluster_size; k++) {
                                        struct sched_agent *a = &agents[x->k[k].agent];
                                        for (int j = 0; j < SCHED_NSLOTS; j++)
                                                a->used.v[j] -= x->s.req.v[j];
                                        for (int j = 0; j < x->k[k].ndev; j++)
                                                a->dev[x->k[k].dev[j].dev].used -= x->k[k].dev[j].amount;
                                }
                                for (int j = 0; j < SCHED_NSLOTS; j++)
                                        scopes[x->s.scope[SCHED_USER]].used.v[j] -= x->s.req.v[j] * x->s.cluster_size;
                                scopes[x->s.scope[SCHED_USER]].sessions--;
                                free(x->k);
                                run[i] = run[--nrun];
                        }
                        for (int e = 0; e < 500 && npend < NPENDING * 2; e++, arrivals++)
                                make_session(&pend[npend++], arrivals, arrivals);
                }
                struct sched_input in = { .slots = &slots, .policy = p, .agents = agents, .nagents = NAGENTS,
                                          .scopes = scopes, .nscopes = NUSERS, .pending = pend, .npending = npend };
                double t0 = now_sec();
                if (sched_pass_search(&in, how, &out, &err) < 0) {
                        fprintf(stderr, "sched-pass: %s\n", err->msg);
                        exit(1);
                }
                double t = now_sec() - t0;
                if (r > 0) {
                        t_total += t;
                        placed_total += out.placed;
                        pending_sum += npend;
                }
                /* move the placed to running, compact the queue */
                bool *gone = xcalloc((size_t)npend, sizeof(bool));
                for (int i = 0; i < out.n; i++) {
                        if (out.d[i].outcome == SCHED_PLACED && nrun < NPENDING * 2) {
                                run[nrun].s = pend[out.d[i].session];
                                run[nrun++].k = TAKE_PTR(out.d[i].kernels);
                                gone[out.d[i].session] = true;
                        }
                }
                int m = 0;
                for (int i = 0; i < npend; i++)
                        if (!gone[i])
                                pend[m++] = pend[i];
                npend = m;
                free(gone);
                sched_output_free(&out);
        }
        for (int i = 0; i < nrun; i++)
                free(run[i].k);
        *ret_rate = t_total > 0 ? placed_total / t_total : 0;
        *ret_pass = rounds > 0 ? t_total / rounds : 0;
        *ret_pending = rounds > 0 ? pending_sum / rounds : 0;
}

static bool no_scan;

static void row(const char *order, const char *select, struct sched_policy p, int reps)
{
        double ta[2][16], tc[2][16], tq[16], rate[2] = { 0 }, steady_pass[2] = { 0 };
        int placed = 0, full_placed = 0, steady_pending = 0;

        memset(ta, 0, sizeof(ta));
        memset(tc, 0, sizeof(tc));
        for (int h = 0; h < 2 - no_scan; h++) {
                enum sched_search how = h ? SCHED_SEARCH_SCAN : SCHED_SEARCH_INDEX;
                for (int r = 0; r < reps; r++) {
                        ta[h][r] = one_pass(p, how, false, false, NPENDING, &placed);
                        tc[h][r] = one_pass(p, how, true, false, NPENDING, &full_placed);
                        if (h == 0)
                                tq[r] = one_pass(p, how, true, true, NPENDING, &full_placed);
                }
                steady(p, how, 10, &rate[h], &steady_pass[h], &steady_pending);
        }
        double a_idx = median(ta[0], reps), a_scan = median(ta[1], reps);
        double c_idx = median(tc[0], reps), c_scan = median(tc[1], reps), c_quiet = median(tq, reps);
        printf("%-10s %-12s | %6.1f ms %5d placed %7.0f/s | %5.1f ms %5d %7.0f/s | %5.1f ms %5.1f ms |", order, select,
               a_idx * 1e3, placed, placed / a_idx, steady_pass[0] * 1e3, steady_pending, rate[0], c_idx * 1e3,
               c_quiet * 1e3);
        if (no_scan)
                printf("\n");
        else
                printf(" %7.1f ms %6.0f/s %6.1f ms\n", a_scan * 1e3, rate[1], c_scan * 1e3);
        (void)full_placed;
}

int main(int argc, char **argv)
{
        int reps = 5;
        bool quick = false, warm = false;

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "-r") && i + 1 < argc)
                        reps = (int)strtol(argv[++i], NULL, 10);
                else if (streq(argv[i], "-q"))
                        quick = true;
                else if (streq(argv[i], "-n"))
                        no_scan = true;
                else if (streq(argv[i], "-w"))
                        warm = true;
                else {
                        fprintf(stderr, "usage: sched-pass [-r ROUNDS] [-q] [-n] [-w]\n");
                        return 2;
                }
        }
        if (reps < 1 || reps > 16)
                reps = 5;
        if (warm) {
                /* keep freed memory in the process: no page faults for
                 * the memory a pass allocates (glibc otherwise gives the
                 * ~8 MB of a 10,000-decision pass back to the kernel) */
                mallopt(M_TRIM_THRESHOLD, 1 << 30);
                mallopt(M_MMAP_THRESHOLD, 1 << 30);
        }
        make_cluster();
        make_queue();
        printf("# %d agents x 8 GPUs (half cuda.shares, half cuda.device), %d pending (40%% fractional, 30%% whole"
               " GPUs, 30%% CPU only, 5%% clusters), %d users; median of %d; %s heap\n",
               NAGENTS, NPENDING, NUSERS, reps, warm ? "warm" : "cold (glibc default)");
        printf("# targets: (a) one pass <= 100 ms; (b) >= 5,000 placements/s; anchors: Nomad 3,750/s,"
               " kube-scheduler 680-810/s, Slurm 500/s\n");
        printf("# (a) one pass over the 10,000 pending on 2,000 empty agents, and its placements per second\n"
               "# (b) steady state: per round 500 sessions end and 500 arrive, then a pass over the whole queue\n"
               "# (c) one pass over the 10,000 on a full cluster; quiet: with no_messages\n"
               "# scan: (a), (b) and (c) scanning every agent instead of the index\n");
        printf("%-10s %-12s | %-33s | %-23s | %-16s |%s\n", "order", "selection", "(a) one pass", "(b) steady pass, rate",
               "(c) full, quiet", no_scan ? "" : " scan: (a)    (b)      (c)");
        static const char *const orders[] = { "fifo", "lifo", "drf", "fair-share" };
        static const char *const selects[] = { "concentrated", "dispersed", "roundrobin" };
        for (size_t o = 0; o < ARRAY_SIZE(orders); o++) {
                for (size_t s = 0; s < ARRAY_SIZE(selects); s++) {
                        struct sched_policy p;
                        json_t *opts = json_pack("{ss}", "agent_selection", selects[s]);
                        if (sched_policy_parse(orders[o], opts, &p, NULL) < 0)
                                return 1;
                        json_decref(opts);
                        /* fifo's head-of-line blocking would stop (c) at the
                         * first session; measure the work of trying every one */
                        p.retries_to_skip = 0;
                        row(orders[o], selects[s], p, reps);
                        if (quick)
                                break;
                }
                if (quick)
                        break;
        }

        /* short queues: where the index starts to pay for itself */
        printf("\n# short queues on the same 2,000 empty agents (drf, concentrated): one pass, median of 21\n");
        printf("%-8s | %-10s | %-10s\n", "pending", "index", "scan");
        static const int shorts[] = { 1, 2, 4, 8, 16, 32, 64 };
        struct sched_policy p;
        sched_policy_parse("drf", NULL, &p, NULL);
        for (size_t i = 0; i < ARRAY_SIZE(shorts); i++) {
                double t[2][21];
                int placed;
                for (int h = 0; h < 2; h++)
                        for (int r = 0; r < 21; r++)
                                t[h][r] = one_pass(p, h ? SCHED_SEARCH_SCAN : SCHED_SEARCH_INDEX, false, false,
                                                   shorts[i], &placed);
                printf("%-8d | %7.1f us | %7.1f us\n", shorts[i], median(t[0], 21) * 1e6, median(t[1], 21) * 1e6);
        }
        return 0;
}
