/* test_sim_trace.c - the simulator's inputs: the CSV trace reader, the
 * Philly and Helios converters, the generator's options, and a few runs of
 * the engine small enough to check by hand.  Bad input must give one clear
 * error naming the line (or job), never a crash. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/buf.h"
#include "sim/sim-internal.h"
#include "sim/sim.h"

#define GIB ((int64_t)1 << 30)

/* Parse text as a trace; return 0 or the error's message in *ret_msg
 * (caller frees). */
static int parse(const char *text, struct sim_workload *w, char **ret_msg)
{
        struct tess_error *err = NULL;
        int r = sim_trace_parse("t.csv", text, strlen(text), w, &err);

        if (r < 0) {
                CHECK(err && err->code == EINVAL && err->msg);
                if (ret_msg)
                        *ret_msg = xstrdup(err ? err->msg : "");
                tess_error_free(err);
        } else {
                CHECK(err == NULL);
        }
        return r;
}

/* The trace must fail with a message containing `needle`. */
static void check_bad(const char *text, const char *needle)
{
        struct sim_workload w;
        char *msg = NULL;

        sim_workload_init(&w);
        if (parse(text, &w, &msg) == 0) {
                test_fail(__FILE__, __LINE__, "parsed, expected an error with \"%s\":\n%s", needle, text);
        } else if (!strstr(msg, needle)) {
                test_fail(__FILE__, __LINE__, "error \"%s\" lacks \"%s\"", msg, needle);
        }
        free(msg);
        sim_workload_release(&w);
}

static void test_trace_good(void)
{
        struct sim_workload w;
        const char *text = "\xef\xbb\xbf# a comment\r\n"
                           "user, arrival ,duration,gpu,mem,cpu,nodes,priority,id,project\r\n"
                           "\r\n"
                           "alice,12.5,3600,0.5,16g,2,1,0,a-1,vision\r\n"
                           "\"bob\",0,0.000001,,,,,,,\n"
                           "  carol  ,7,60,8,1073741824,0.25,2,-3,\"c 3\",nlp";

        sim_workload_init(&w);
        CHECK(parse(text, &w, NULL) == 0);
        CHECK_INTEQ(w.n, 3);
        if (w.n == 3) {
                const struct sim_job *a = &w.jobs[0], *b = &w.jobs[1], *c = &w.jobs[2];
                CHECK_INTEQ(a->arrival, 12500000);
                CHECK_INTEQ(a->duration, 3600LL * 1000000);
                CHECK_INTEQ(a->gpu, 50);
                CHECK_INTEQ(a->mem, 16 * GIB);
                CHECK_INTEQ(a->cpu, 2000);
                CHECK_STREQ(a->id, "a-1");
                CHECK_STREQ(w.users.v[a->user], "alice");
                CHECK_STREQ(w.projects.v[a->project], "vision");
                /* empty fields take the defaults */
                CHECK_STREQ(w.users.v[b->user], "bob");
                CHECK_INTEQ(b->duration, 1);
                CHECK_INTEQ(b->cpu, 1000);
                CHECK_INTEQ(b->mem, GIB);
                CHECK_INTEQ(b->gpu, 0);
                CHECK_INTEQ(b->nodes, 1);
                CHECK_STREQ(b->id, "line-5");
                CHECK_STREQ(w.projects.v[b->project], "default");
                CHECK_STREQ(w.users.v[c->user], "carol");
                CHECK_INTEQ(c->cpu, 250);
                CHECK_INTEQ(c->gpu, 800);
                CHECK_INTEQ(c->nodes, 2);
                CHECK_INTEQ(c->priority, -3);
                CHECK_STREQ(c->id, "c 3");
        }
        sim_workload_sort(&w);
        CHECK(w.n == 3 && w.jobs[0].arrival == 0 && w.jobs[1].arrival == 7000000 && w.jobs[2].arrival == 12500000);
        sim_workload_release(&w);
}

static void test_trace_round_trip(void)
{
        struct sim_workload w, back;
        struct buf b = BUF_INIT;

        sim_workload_init(&w);
        sim_workload_init(&back);
        CHECK(parse("arrival,duration,user,cpu,mem,gpu\n0.25,1.000001,u,0.125,1536m,0.01\n9,0,v,64,1t,32\n"
                    "9,0,v,1,80000008000000000,0\n", &w,
                    NULL) == 0);
        sim_trace_format(&b, &w);
        CHECK(parse(b.data, &back, NULL) == 0);
        CHECK_INTEQ(back.n, w.n);
        for (size_t i = 0; i < w.n && i < back.n; i++) {
                CHECK_INTEQ(back.jobs[i].arrival, w.jobs[i].arrival);
                CHECK_INTEQ(back.jobs[i].duration, w.jobs[i].duration);
                CHECK_INTEQ(back.jobs[i].cpu, w.jobs[i].cpu);
                CHECK_INTEQ(back.jobs[i].mem, w.jobs[i].mem);
                CHECK_INTEQ(back.jobs[i].gpu, w.jobs[i].gpu);
                CHECK_STREQ(back.jobs[i].id, w.jobs[i].id);
        }
        CHECK(strstr(b.data, ",1536m,") != NULL);
        CHECK(strstr(b.data, ",80000008000000000,") != NULL); /* too large for "78125007812500k" */
        buf_release(&b);
        sim_workload_release(&w);
        sim_workload_release(&back);
}

static void test_trace_bad_input(void)
{
        check_bad("", "no header line");
        check_bad("# only a comment\n\n", "no header line");
        check_bad("arrival,user\n", "t.csv:1: the header has no 'duration' column");
        check_bad("arrival,duration,user,colour\n", "t.csv:1: unknown column 'colour'");
        check_bad("arrival,duration,user,user\n", "t.csv:1: column 'user' appears twice");
        check_bad("arrival,duration,user\n0,1,a\n0,1\n", "t.csv:3: 2 fields, but the header names 3");
        check_bad("arrival,duration,user\n# c\n\n-1,1,a\n", "t.csv:4: column 'arrival': '-1' is not");
        check_bad("arrival,duration,user\n0,1e3,a\n", "t.csv:2: column 'duration'");
        check_bad("arrival,duration,user\n0,99999999999999999999,a\n", "t.csv:2: column 'duration'");
        check_bad("arrival,duration,user\n0,4000000000,a\n", "t.csv:2: column 'duration'"); /* > a century */
        check_bad("arrival,duration,user,gpu\n0,1,a,0.125\n", "t.csv:2: column 'gpu': '0.125'");
        check_bad("arrival,duration,user,cpu\n0,1,a,0.0001\n", "t.csv:2: column 'cpu'");
        check_bad("arrival,duration,user,mem\n0,1,a,4q\n", "t.csv:2: column 'mem': slot 'mem'");
        check_bad("arrival,duration,user,mem\n0,1,a,inf\n", "t.csv:2: column 'mem'");
        check_bad("arrival,duration,user,nodes\n0,1,a,0\n", "t.csv:2: column 'nodes'");
        check_bad("arrival,duration,user,nodes\n0,1,a,2000\n", "t.csv:2: column 'nodes'");
        check_bad("arrival,duration,user,priority\n0,1,a,1.5\n", "t.csv:2: column 'priority'");
        check_bad("arrival,duration,user\n0,1,\n", "t.csv:2: column 'user' is empty");
        check_bad("arrival,duration,user\n0,,a\n", "t.csv:2: column 'duration' is empty");
        check_bad("arrival,duration,user\n0,1,\"a\n", "t.csv:2: field 3: unterminated quote");
        check_bad("arrival,duration,user\n0,1,\"a\"b\n", "t.csv:2: field 3: text after the closing quote");
        check_bad("arrival,duration,user\n0,1,a\"b\n", "t.csv:2: field 3: a quote inside");
        check_bad("arrival,duration,user\n0,1,\"a,b\"\n", "t.csv:2: column 'user': 'a,b' is not a name");
        check_bad("arrival,duration,user\n0,1,\x01\n", "t.csv:2: column 'user'");
        check_bad("arrival,duration,user,id\n0,1,a,\"\"\"\"\n", "t.csv:2: column 'id'");

        /* a NUL byte, a huge line, too many fields */
        static const char nul[] = "arrival,duration,user\n0,1,a\0b\n";
        struct sim_workload w;
        struct tess_error *err = NULL;
        sim_workload_init(&w);
        CHECK(sim_trace_parse("t.csv", nul, sizeof(nul) - 1, &w, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "t.csv:2: NUL byte"));
        err = tess_error_free(err);
        sim_workload_release(&w);

        struct buf b = BUF_INIT;
        buf_puts(&b, "arrival,duration,user\n0,1,");
        for (int i = 0; i < SIM_CSV_MAX_LINE; i++)
                buf_putc(&b, 'x');
        check_bad(b.data, "t.csv:2: line longer than");
        buf_reset(&b);
        buf_puts(&b, "arrival,duration,user");
        for (int i = 0; i < SIM_CSV_MAX_FIELDS; i++)
                buf_puts(&b, ",x");
        check_bad(b.data, "t.csv:1: more than 64 fields");
        buf_reset(&b);
        buf_puts(&b, "arrival,duration,user\n0,1,");
        for (int i = 0; i < SIM_NAME_MAX; i++)
                buf_putc(&b, 'n');
        check_bad(b.data, "t.csv:2: column 'user'");
        buf_release(&b);
}

static void test_trace_load_missing_file(void)
{
        struct sim_workload w;
        struct tess_error *err = NULL;

        sim_workload_init(&w);
        CHECK(sim_trace_load("/nonexistent/trace.csv", &w, &err) < 0);
        CHECK(err && strstr(err->msg, "reading the trace") && strstr(err->msg, "/nonexistent/trace.csv"));
        tess_error_free(err);
        sim_workload_release(&w);
}

/* ---- converters ---- */

static int convert(enum sim_source src, const char *text, struct sim_workload *w, size_t *skipped, char **ret_msg)
{
        struct sim_convert_opts o;
        struct tess_error *err = NULL;

        sim_convert_opts_default(&o);
        int r = sim_convert(src, "log", text, strlen(text), &o, w, skipped, &err);
        if (r < 0) {
                CHECK(err && err->code == EINVAL);
                *ret_msg = xstrdup(err ? err->msg : "");
                tess_error_free(err);
        }
        return r;
}

static void check_convert_bad(enum sim_source src, const char *text, const char *needle)
{
        struct sim_workload w;
        char *msg = NULL;
        size_t skipped = 0;

        sim_workload_init(&w);
        if (convert(src, text, &w, &skipped, &msg) == 0)
                test_fail(__FILE__, __LINE__, "converted, expected an error with \"%s\":\n%s", needle, text);
        else if (!strstr(msg, needle))
                test_fail(__FILE__, __LINE__, "error \"%s\" lacks \"%s\"", msg, needle);
        free(msg);
        sim_workload_release(&w);
}

#define HELIOS_HEADER "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"

static void test_convert_helios(void)
{
        struct sim_workload w;
        size_t skipped = 0;
        char *msg = NULL;

        sim_workload_init(&w);
        CHECK(convert(SIM_SOURCE_HELIOS,
                      HELIOS_HEADER
                      "2,uB,vc1,16,64,2,COMPLETED,2020-06-09 18:43:10,2020-06-09 18:50:10,"
                      "2020-06-09 20:50:10,7200,420\n"
                      "1,uA,vc1,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n"
                      "3,uA,vc2,2,4,1,CANCELLED,2020-06-09 18:45:00,,,,\n",
                      &w, &skipped, &msg) == 0);
        CHECK_INTEQ(w.n, 2);
        CHECK_INTEQ(skipped, 1);
        if (w.n == 2) {
                /* sorted by arrival, relative to the first */
                CHECK_STREQ(w.jobs[0].id, "1");
                CHECK_INTEQ(w.jobs[0].arrival, 0);
                CHECK_INTEQ(w.jobs[0].duration, 36848LL * 1000000);
                CHECK_INTEQ(w.jobs[0].gpu, 100);
                CHECK_STREQ(w.jobs[1].id, "2");
                CHECK_INTEQ(w.jobs[1].arrival, 129LL * 1000000);
                CHECK_INTEQ(w.jobs[1].nodes, 2);
                CHECK_INTEQ(w.jobs[1].gpu, 800);
                CHECK_INTEQ(w.jobs[1].cpu, 32000);
                CHECK_INTEQ(w.jobs[1].mem, 8 * 32 * GIB);
                CHECK_STREQ(w.projects.v[w.jobs[1].project], "vc1");
        }
        sim_workload_release(&w);

        check_convert_bad(SIM_SOURCE_HELIOS, "", "empty file");
        check_convert_bad(SIM_SOURCE_HELIOS, "job_id,user\n", "log:1: no 'vc' column");
        check_convert_bad(SIM_SOURCE_HELIOS, HELIOS_HEADER "1,u,v,1,1,1,X,yesterday,,,10,0\n",
                          "log:2: submit_time 'yesterday' is not a date");
        check_convert_bad(SIM_SOURCE_HELIOS, HELIOS_HEADER "1,u,v,-1,1,1,X,2020-06-09 18:41:01,,,10,0\n",
                          "log:2: gpu_num '-1'");
        check_convert_bad(SIM_SOURCE_HELIOS, HELIOS_HEADER "1,u,v,1,1,1,X,2020-06-09 18:41:01,,,ten,0\n",
                          "log:2: duration 'ten'");
        check_convert_bad(SIM_SOURCE_HELIOS, HELIOS_HEADER "1,u,v,1,1,1,X,2020-06-09 18:41:01,,,10\n",
                          "log:2: 11 fields, but the header names 12");
        check_convert_bad(SIM_SOURCE_HELIOS,
                          HELIOS_HEADER "1,u,v,1,1,1,X,1900-01-01 00:00:00,,,10,0\n"
                                        "2,u,v,1,1,1,X,2020-01-01 00:00:00,,,10,0\n",
                          "more than a century");
}

static const char philly[] =
        "[{\"status\": \"Pass\", \"vc\": \"ee9e8c\", \"jobid\": \"app_1\", \"user\": \"ce2f4c\","
        "  \"submitted_time\": \"2017-10-07 01:11:39\","
        "  \"attempts\": [{\"start_time\": \"2017-10-07 01:12:09\", \"end_time\": \"2017-10-07 01:13:23\","
        "                  \"detail\": [{\"ip\": \"m47\", \"gpus\": [\"gpu0\", \"gpu1\"]}]},"
        "                 {\"start_time\": \"2017-10-07 01:13:30\", \"end_time\": \"2017-10-07 02:13:30\","
        "                  \"detail\": [{\"ip\": \"m4\", \"gpus\": [\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"]},"
        "                              {\"ip\": \"m5\", \"gpus\": [\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"]}]}]},"
        " {\"status\": \"Killed\", \"vc\": \"ee9e8c\", \"jobid\": \"app_2\", \"user\": \"aa\","
        "  \"submitted_time\": \"2017-10-07 01:11:00\", \"attempts\": []},"
        " {\"status\": \"Pass\", \"vc\": \"ee9e8c\", \"jobid\": \"app_3\", \"user\": \"aa\","
        "  \"submitted_time\": \"None\", \"attempts\": []},"
        " {\"status\": \"Pass\", \"jobid\": \"app_4\", \"user\": \"aa\","
        "  \"submitted_time\": \"2017-10-07 01:11:40\","
        "  \"attempts\": [{\"start_time\": \"2017-10-07 01:12:00\", \"end_time\": \"2017-10-07 01:12:30\","
        "                  \"detail\": []}]}]";

static void test_convert_philly(void)
{
        struct sim_workload w;
        size_t skipped = 0;
        char *msg = NULL;

        sim_workload_init(&w);
        CHECK(convert(SIM_SOURCE_PHILLY, philly, &w, &skipped, &msg) == 0);
        CHECK_INTEQ(w.n, 2);
        CHECK_INTEQ(skipped, 2);
        if (w.n == 2) {
                const struct sim_job *a = &w.jobs[0], *b = &w.jobs[1];
                CHECK_STREQ(a->id, "app_1");
                CHECK_INTEQ(a->arrival, 0);
                CHECK_INTEQ(a->duration, (74 + 3600) * 1000000LL);
                CHECK_INTEQ(a->nodes, 2);
                CHECK_INTEQ(a->gpu, 400);
                CHECK_INTEQ(a->cpu, 4 * 4000);
                CHECK_INTEQ(a->mem, 4 * 32 * GIB);
                CHECK_STREQ(b->id, "app_4");
                CHECK_INTEQ(b->arrival, 1000000);
                CHECK_INTEQ(b->gpu, 0);
                CHECK_INTEQ(b->cpu, 1000);
                CHECK_STREQ(w.projects.v[b->project], "default");
        }
        sim_workload_release(&w);

        /* the same jobs as a stream of objects */
        sim_workload_init(&w);
        skipped = 0;
        CHECK(convert(SIM_SOURCE_PHILLY,
                      "{\"jobid\": \"x\", \"user\": \"u\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\":"
                      " [{\"start_time\": \"2017-10-07 01:12:09\", \"end_time\": \"2017-10-07 01:13:09\"}]}\n"
                      "{\"jobid\": \"y\", \"user\": \"u\", \"submitted_time\": \"2017-10-07 01:12:39\", \"attempts\":"
                      " [{\"start_time\": \"2017-10-07 01:13:00\", \"end_time\": null}]}\n",
                      &w, &skipped, &msg) == 0);
        CHECK_INTEQ(w.n, 1);
        CHECK_INTEQ(skipped, 1);
        CHECK(w.n == 1 && w.jobs[0].duration == 60 * 1000000LL);
        sim_workload_release(&w);

        check_convert_bad(SIM_SOURCE_PHILLY, "[{\"jobid\": \"x\",\n \"user\": }]", "log:2:");
        check_convert_bad(SIM_SOURCE_PHILLY, "[1, 2]", "log: job 1: not a JSON object");
        check_convert_bad(SIM_SOURCE_PHILLY, "[{\"user\": \"u\"}]", "log: job 1: no \"jobid\"");
        check_convert_bad(SIM_SOURCE_PHILLY, "[{\"jobid\": \"x\"}]", "job 1 ('x'): \"user\" and \"vc\"");
        check_convert_bad(SIM_SOURCE_PHILLY, "[{\"jobid\": \"x\", \"user\": \"u\", \"attempts\": 3}]",
                          "\"attempts\" is not a list");
        check_convert_bad(SIM_SOURCE_PHILLY,
                          "[{\"jobid\": \"x\", \"user\": \"u\", \"submitted_time\": \"2017-10-07 01:11:39\","
                          " \"attempts\": [{\"detail\": [{\"gpus\": 7}]}]}]",
                          "attempt 0: malformed detail");
        check_convert_bad(SIM_SOURCE_PHILLY, "{\"jobid\": \"a\", \"user\": \"u\", \"submitted_time\": \"None\"} x",
                          "log:1:");
        check_convert_bad(SIM_SOURCE_PHILLY, " \n", "log: empty file");
}

/* ---- the generator and the engine ---- */

static void test_generator(void)
{
        struct sim_gen g;
        struct sim_cluster c = { .nagents = 10, .gpus = 4, .fgpu = 100, .cpu = 32000, .mem = 256 * GIB };
        struct sim_workload a, b;
        struct tess_error *err = NULL;

        sim_gen_default(&g);
        g.jobs = 500;
        sim_workload_init(&a);
        sim_workload_init(&b);
        CHECK(sim_generate(&g, &c, &a, &err) == 0);
        CHECK(sim_generate(&g, &c, &b, &err) == 0);
        CHECK_INTEQ(a.n, 500);
        bool same = a.n == b.n;
        for (size_t i = 0; i < a.n && same; i++)
                same = a.jobs[i].arrival == b.jobs[i].arrival && a.jobs[i].gpu == b.jobs[i].gpu &&
                       a.jobs[i].duration == b.jobs[i].duration && a.jobs[i].user == b.jobs[i].user;
        CHECK(same);
        for (size_t i = 0; i < a.n; i++) {
                CHECK(a.jobs[i].gpu <= 400 && a.jobs[i].cpu <= c.cpu && a.jobs[i].mem <= c.mem);
                CHECK(i == 0 || a.jobs[i - 1].arrival <= a.jobs[i].arrival);
        }
        sim_workload_release(&a);
        sim_workload_release(&b);

        CHECK(sim_gen_parse_dist(&g, "lognormal:30m:1.5", &err) == 0 && g.dist == SIM_DIST_LOGNORMAL);
        CHECK(sim_gen_parse_dist(&g, "uniform:1m:2h", &err) == 0 && g.dist_a == 60 && g.dist_b == 7200);
        CHECK(sim_gen_parse_dist(&g, "45s", &err) == 0 && g.dist == SIM_DIST_FIXED && g.dist_a == 45);
        static const char *const bad_dists[] = { "", "exp", "exp:", "uniform:2h:1m", "lognormal:1m:x",
                                                 "lognormal:1m:9", "weibull:1:2", "exp:1m:2m:3m:4m", "::" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_dists); i++) {
                CHECK(sim_gen_parse_dist(&g, bad_dists[i], &err) == -EINVAL);
                CHECK(err && strstr(err->msg, "bad duration distribution"));
                err = tess_error_free(err);
        }
        CHECK(sim_gen_parse_mix(&g, "1:2:3", &err) == 0 && g.mix_frac == 2);
        static const char *const bad_mixes[] = { "", "1:2", "0:0:0", "1:2:3:4", "a:b:c", "-1:2:3" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_mixes); i++) {
                CHECK(sim_gen_parse_mix(&g, bad_mixes[i], &err) == -EINVAL);
                err = tess_error_free(err);
        }
        c.gpus = 0;
        sim_gen_default(&g);
        sim_workload_init(&a);
        CHECK(sim_generate(&g, &c, &a, &err) == -EINVAL);
        err = tess_error_free(err);
        sim_workload_release(&a);
}

static void config(struct sim_config *cfg, enum sim_gpu_mode mode, int agents, int gpus)
{
        struct sched_policy p;

        sched_policy_parse("fifo", NULL, &p, NULL);
        *cfg = (struct sim_config){
                .cluster = { .nagents = agents, .gpus = gpus, .fgpu = 100, .cpu = 64000, .mem = 512 * GIB },
                .mode = mode,
                .policy = p,
                .user_gpu_limit = -1,
        };
}

/* Four half-GPU jobs of an hour on one GPU: two at a time when fractional,
 * one at a time when whole. */
static void test_engine_whole_vs_fractional(void)
{
        static const char trace[] = "arrival,duration,user,gpu,id\n0,3600,a,0.5,j1\n0,3600,b,0.5,j2\n"
                                    "0,3600,a,0.5,j3\n0,3600,b,0.5,j4\n1,60,a,2,too-big\n";
        struct sim_workload w;
        struct sim_config cfg;
        struct sim_result r;
        struct sim_metrics m;
        struct tess_error *err = NULL;

        sim_workload_init(&w);
        CHECK(parse(trace, &w, NULL) == 0);
        config(&cfg, SIM_FRACTIONAL, 1, 1);
        CHECK(sim_engine_run(&cfg, &w, &r, &err) == 0);
        sim_metrics_compute(&w, &r, &m);
        CHECK_INTEQ(m.done, 4);
        CHECK_INTEQ(m.rejected, 1);
        CHECK_INTEQ(r.jobs[4].state, SIM_JOB_REJECTED);
        CHECK_INTEQ(r.jobs[0].start, 0);
        CHECK_INTEQ(r.jobs[1].start, 0);
        CHECK_INTEQ(r.jobs[2].start, 3600LL * 1000000);
        CHECK_INTEQ(r.makespan, 7200LL * 1000000);
        CHECK(m.gpu_util > 0.99 && m.gpu_util < 1.01);
        double frac_wait = m.wait_mean;
        sim_result_release(&r);

        config(&cfg, SIM_WHOLE, 1, 1);
        CHECK(sim_engine_run(&cfg, &w, &r, &err) == 0);
        sim_metrics_compute(&w, &r, &m);
        CHECK_INTEQ(m.done, 4);
        CHECK_INTEQ(r.jobs[1].start, 3600LL * 1000000);
        CHECK_INTEQ(r.makespan, 4 * 3600LL * 1000000);
        CHECK(m.gpu_util > 0.49 && m.gpu_util < 0.51);
        CHECK(m.gpu_alloc > 0.99);
        CHECK(m.wait_mean > frac_wait);
        sim_result_release(&r);

        /* a user limit of one GPU: whole mode runs one job at a time per user */
        config(&cfg, SIM_WHOLE, 1, 4);
        cfg.user_gpu_limit = 100;
        CHECK(sim_engine_run(&cfg, &w, &r, &err) == 0);
        CHECK_INTEQ(r.jobs[0].start, 0);
        CHECK_INTEQ(r.jobs[1].start, 0);
        CHECK_INTEQ(r.jobs[2].start, 3600LL * 1000000);
        CHECK_INTEQ(r.jobs[4].state, SIM_JOB_REJECTED);
        sim_result_release(&r);

        /* a pending timeout of 10 minutes: the second wave gives up */
        config(&cfg, SIM_FRACTIONAL, 1, 1);
        cfg.policy.pending_timeout = 600LL * 1000000;
        cfg.pass_interval = 60LL * 1000000;
        CHECK(sim_engine_run(&cfg, &w, &r, &err) == 0);
        CHECK_INTEQ(r.timed_out, 2);
        CHECK_INTEQ(r.jobs[2].state, SIM_JOB_TIMED_OUT);
        sim_result_release(&r);
        sim_workload_release(&w);
}

static void test_engine_policies_and_errors(void)
{
        struct sim_gen g;
        struct sim_config cfg;
        struct sim_workload w;
        struct sim_result r;
        struct sim_metrics m;
        struct tess_error *err = NULL;
        static const enum sched_order orders[] = { SCHED_FIFO, SCHED_LIFO, SCHED_DRF, SCHED_FAIR_SHARE };

        sim_gen_default(&g);
        g.jobs = 300;
        g.load = 1.5;
        sim_workload_init(&w);
        config(&cfg, SIM_FRACTIONAL, 3, 4);
        CHECK(sim_generate(&g, &cfg.cluster, &w, &err) == 0);
        for (size_t o = 0; o < ARRAY_SIZE(orders); o++) {
                for (int sel = SCHED_CONCENTRATED; sel <= SCHED_ROUNDROBIN; sel++) {
                        cfg.policy.order = orders[o];
                        cfg.policy.select = (enum sched_select)sel;
                        cfg.kick_delay = sel == SCHED_DISPERSED ? 5000 : 0;
                        CHECK(sim_engine_run(&cfg, &w, &r, &err) == 0);
                        sim_metrics_compute(&w, &r, &m);
                        CHECK_INTEQ(m.done, 300);
                        CHECK(m.jain > 0 && m.jain <= 1.0000001);
                        CHECK(m.wait_p50 <= m.wait_p95 && m.wait_p95 <= m.wait_p99);
                        CHECK(r.nsamples > 0 && r.nsamples < 2000);
                        sim_result_release(&r);
                }
        }
        cfg.cluster.gpus = 33;
        CHECK(sim_engine_run(&cfg, &w, &r, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "GPUs per agent"));
        err = tess_error_free(err);
        sim_result_release(&r);
        sim_workload_release(&w);
}

static void test_statistics(void)
{
        static const double v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
        static const double same[] = { 2, 2, 2 }, one[] = { 5, 0, 0, 0 };

        CHECK(sim_percentile(v, 10, 50) == 5);
        CHECK(sim_percentile(v, 10, 95) == 10);
        CHECK(sim_percentile(v, 10, 0) == 1);
        CHECK(sim_percentile(v, 0, 50) == 0);
        CHECK(sim_jain(same, 3) == 1);
        CHECK(sim_jain(one, 4) == 0.25);
        CHECK(sim_jain(NULL, 0) == 1);
}

static const struct test tests[] = {
        TEST(test_trace_good),
        TEST(test_trace_round_trip),
        TEST(test_trace_bad_input),
        TEST(test_trace_load_missing_file),
        TEST(test_convert_helios),
        TEST(test_convert_philly),
        TEST(test_generator),
        TEST(test_engine_whole_vs_fractional),
        TEST(test_engine_policies_and_errors),
        TEST(test_statistics),
        {},
};

int main(void)
{
        return test_main(tests);
}
