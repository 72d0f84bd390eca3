/* test_sched_policy.c - a resource group's scheduler settings, and the
 * scheduler's answer to malformed input. */
#include "common/compat.h"

#include "../lib/test.h"
#include "sched/sched.h"

static int parse(const char *scheduler, const char *opts, struct sched_policy *p, char **ret_msg)
{
        struct tess_error *err = NULL;
        json_t *j = opts ? json_loads(opts, JSON_DECODE_ANY, NULL) : NULL;
        int r = sched_policy_parse(scheduler, j, p, &err);

        if (ret_msg)
                *ret_msg = err ? xstrdup(err->msg) : NULL;
        tess_error_free(err);
        json_decref(j);
        return r;
}

static void test_policy_defaults(void)
{
        struct sched_policy p;

        CHECK_INTEQ(parse(NULL, NULL, &p, NULL), 0);
        CHECK(p.order == SCHED_FIFO && p.select == SCHED_CONCENTRATED);
        CHECK_INTEQ(p.retries_to_skip, 5);
        CHECK_INTEQ(p.reserve_after, 50);
        CHECK(!p.allow_fragmentation);
        CHECK_INTEQ(p.fair_share_half_life, 7LL * 24 * 3600 * 1000000);
        CHECK_INTEQ(parse("fair-share", "null", &p, NULL), 0);
        CHECK(p.order == SCHED_FAIR_SHARE);
        CHECK_STREQ(sched_order_name(p.order), "fair-share");
        CHECK_STREQ(sched_select_name(SCHED_ROUNDROBIN), "roundrobin");
}

static void test_policy_options(void)
{
        struct sched_policy p;

        CHECK_INTEQ(parse("drf",
                          "{\"agent_selection\": \"dispersed\", \"num_retries_to_skip\": 2,"
                          " \"reserve_after_retries\": 0, \"allow_fragmentation\": true,"
                          " \"pending_timeout\": 60, \"fair_share_half_life\": 3600}",
                          &p, NULL),
                    0);
        CHECK(p.order == SCHED_DRF && p.select == SCHED_DISPERSED);
        CHECK_INTEQ(p.retries_to_skip, 2);
        CHECK_INTEQ(p.reserve_after, 0);
        CHECK(p.allow_fragmentation);
        CHECK_INTEQ(p.pending_timeout, 60LL * 1000000);
        CHECK_INTEQ(p.fair_share_half_life, 3600LL * 1000000);
}

/* A bad value names the option, and the caller's policy is left as it was. */
static void test_policy_errors(void)
{
        static const struct {
                const char *scheduler, *opts, *needle;
        } bad[] = {
                { "sjf", NULL, "unknown scheduler 'sjf'" },
                { "fifo", "[]", "must be an object" },
                { "fifo", "{\"agent_selection\": \"random\"}", "agent_selection" },
                { "fifo", "{\"num_retries_to_skip\": -1}", "num_retries_to_skip" },
                { "fifo", "{\"num_retries_to_skip\": \"5\"}", "num_retries_to_skip" },
                { "fifo", "{\"allow_fragmentation\": 1}", "allow_fragmentation" },
                { "fifo", "{\"fair_share_half_life\": 0}", "fair_share_half_life must be positive" },
                { "lifo", "{\"agent_selection\": \"dispersed\", \"typo\": 1}", "unknown scheduler option 'typo'" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct sched_policy p = { .order = SCHED_LIFO, .retries_to_skip = 77 };
                char *msg = NULL;
                CHECK(parse(bad[i].scheduler, bad[i].opts, &p, &msg) == -EINVAL);
                CHECK(msg && strstr(msg, bad[i].needle));
                if (!msg || !strstr(msg, bad[i].needle))
                        printf("# %s %s: %s\n", bad[i].scheduler, bad[i].opts ? bad[i].opts : "", msg ? msg : "(none)");
                CHECK(p.order == SCHED_LIFO && p.retries_to_skip == 77 && p.select == SCHED_CONCENTRATED);
                free(msg);
        }
}

/* sched_pass() refuses malformed input with a message and changes nothing. */
static void test_pass_rejects_bad_input(void)
{
        struct sched_slots slots;
        struct sched_agent agent = { .id = "a1", .schedulable = true, .gpu_slot = -1 };
        struct sched_session s = { .id = "s1", .name = "s1", .cluster_size = 0, .rg_allowed = true,
                                   .scope = { -1, -1, -1, -1 } };
        struct sched_input in = { .slots = &slots, .agents = &agent, .nagents = 1, .pending = &s, .npending = 1 };
        struct sched_output out;
        struct tess_error *err = NULL;

        sched_slots_init(&slots);
        agent.cap.v[SCHED_CPU] = 4000;
        s.req.v[SCHED_CPU] = 1000;
        CHECK(sched_pass(&in, &out, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "cluster size 0"));
        CHECK(out.n == 0 && out.d == NULL);
        sched_output_free(&out);
        err = tess_error_free(err);

        s.cluster_size = 1;
        s.scope[SCHED_PROJECT] = 3; /* no scopes given */
        CHECK(sched_pass(&in, &out, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "project scope 3 out of range"));
        err = tess_error_free(err);

        s.scope[SCHED_PROJECT] = -1;
        agent.ndev = 2; /* devices but no GPU slot */
        CHECK(sched_pass(&in, &out, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "agent 'a1'"));
        err = tess_error_free(err);
        CHECK(agent.used.v[SCHED_CPU] == 0 && s.retries == 0);

        agent.ndev = 0;
        CHECK(sched_pass(&in, &out, &err) == 0);
        CHECK(out.n == 1 && out.placed == 1 && out.d[0].outcome == SCHED_PLACED && out.d[0].kernels[0].agent == 0);
        CHECK(agent.used.v[SCHED_CPU] == 1000);
        sched_output_free(&out);
}

/* A session's slot table, vectors and their text. */
static void test_vec(void)
{
        struct sched_slots t;
        struct sched_vec v;
        struct slots sl;
        struct tess_error *err = NULL;
        char buf[128];

        sched_slots_init(&t);
        CHECK_INTEQ(sched_slots_find(&t, "cuda.shares"), SCHED_GPU_SHARES);
        CHECK_INTEQ(sched_slots_find(&t, "tpu.device"), -1);
        slots_init(&sl);
        slots_set(&sl, "cpu", 2000, NULL);
        slots_set(&sl, "mem", 4LL << 30, NULL);
        slots_set(&sl, "cuda.shares", 150, NULL);
        slots_set(&sl, "tpu.device", 1000, NULL);
        CHECK_INTEQ(sched_vec_from_slots(&t, &sl, &v, &err), 0);
        CHECK_INTEQ(t.n, SCHED_FIRST_EXTRA + 1);
        CHECK_STREQ(sched_vec_format(&t, &v, buf, sizeof(buf)), "cpu 2, mem 4 GiB, 1.5 fGPU, tpu.device 1");
        for (int i = t.n; i < SCHED_NSLOTS; i++) {
                char name[16];
                snprintf(name, sizeof(name), "x%d", i);
                CHECK(sched_slots_intern(&t, name, &err) == i);
        }
        CHECK(sched_slots_intern(&t, "one-too-many", &err) == -ENOSPC);
        CHECK(err && strstr(err->msg, "one-too-many"));
        tess_error_free(err);
        memset(&v, 0, sizeof(v));
        CHECK(sched_vec_is_zero(&v));
        CHECK_STREQ(sched_vec_format(&t, &v, buf, sizeof(buf)), "nothing");
}

static const struct test tests[] = {
        TEST(test_policy_defaults),
        TEST(test_policy_options),
        TEST(test_policy_errors),
        TEST(test_pass_rejects_bad_input),
        TEST(test_vec),
        {},
};

int main(void)
{
        return test_main(tests);
}
