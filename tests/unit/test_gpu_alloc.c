/* test_gpu_alloc.c - the agent's map of GPU shares (alloc.c) and the
 * mapping from a share to memory and SM limits (gpu_wiring.c, fgpu.md). */
#include "common/compat.h"

#include "../lib/test.h"
#include "agent/alloc.h"
#include "agent/gpu.h"
#include "agent/gpu_wiring.h"
#include "common/fs.h"

#define GIB (1024ull * 1024 * 1024)

struct node {
        char dir[64];
        struct agent_conf conf;
        struct agent_devices dev;
        struct gpu_info gpus[2];
        struct agent_ctx ctx;
};

/* Two 16 GiB mock GPUs of fgpu_per_gpu = 1 (100 quanta of cuda.shares
 * each) and 4 cores, with its alloc files in a fresh directory. */
static bool node_init(struct node *n)
{
        *n = (struct node){ 0 };
        snprintf(n->dir, sizeof(n->dir), "/tmp/tessera-test-alloc.XXXXXX");
        if (!mkdtemp(n->dir))
                return false;
        n->conf.state_dir = n->dir;
        n->dev.ncores = 4;
        for (int i = 0; i < 4; i++)
                n->dev.cores[i] = i;
        for (int i = 0; i < 2; i++)
                n->gpus[i] = (struct gpu_info){ .index = i, .memory = 16 * GIB, .sm = 108 };
        n->dev.gpu = n->gpus;
        n->dev.ngpu = 2;
        n->dev.gpu_plugin = "mock";
        n->dev.gpu_slot = "cuda.shares";
        n->dev.gpu_per_device = 100;
        n->ctx.conf = &n->conf;
        n->ctx.devices = &n->dev;
        return true;
}

static void node_free(struct node *n)
{
        fs_remove_tree(n->dir, NULL);
}

static int64_t held(const struct kernel_alloc *a, int gpu)
{
        int64_t s = 0;
        for (int i = 0; i < a->ngpus; i++)
                if (a->gpus[i].index == gpu)
                        s += a->gpus[i].share;
        return s;
}

static void test_fractions_pack_onto_one_gpu(void)
{
        struct node n;
        struct kernel_alloc a, b, c;
        struct tess_error *err = NULL;

        if (!node_init(&n))
                SKIP("no temporary directory");
        CHECK(alloc_kernel(&n.ctx, "k1", 1, 50, &a, &err) == 0);
        CHECK(alloc_kernel(&n.ctx, "k2", 1, 30, &b, &err) == 0);
        CHECK_INTEQ(a.ngpus, 1);
        CHECK_INTEQ(b.ngpus, 1);
        CHECK_INTEQ(a.gpus[0].index, b.gpus[0].index); /* packed, keeping the other GPU whole */
        /* a whole GPU still fits: the other one */
        CHECK(alloc_kernel(&n.ctx, "k3", 1, 100, &c, &err) == 0);
        CHECK_INTEQ(c.ngpus, 1);
        CHECK(c.gpus[0].index != a.gpus[0].index);
        CHECK_INTEQ(c.gpus[0].share, 100);
        node_free(&n);
}

static void test_more_than_one_gpu_and_no_overcommit(void)
{
        struct node n;
        struct kernel_alloc a, b, c;
        struct tess_error *err = NULL;

        if (!node_init(&n))
                SKIP("no temporary directory");
        CHECK(alloc_kernel(&n.ctx, "big", 1, 150, &a, &err) == 0); /* 1.5 fGPU: one whole and a half */
        CHECK_INTEQ(a.ngpus, 2);
        CHECK_INTEQ(held(&a, 0) + held(&a, 1), 150);
        CHECK(held(&a, 0) == 100 || held(&a, 1) == 100);
        CHECK(alloc_kernel(&n.ctx, "half", 1, 50, &b, &err) == 0); /* the other half */
        CHECK_INTEQ(b.ngpus, 1);
        CHECK(alloc_kernel(&n.ctx, "more", 1, 1, &c, &err) == -ENOSPC); /* 0.01 more than there is */
        CHECK(err && strstr(err->msg, "no room"));
        err = tess_error_free(err);
        alloc_release(&n.ctx, "half");
        CHECK(alloc_kernel(&n.ctx, "more", 1, 50, &c, &err) == 0); /* released shares are free again */
        node_free(&n);
}

static void test_a_restart_keeps_what_a_kernel_holds(void)
{
        struct node n;
        struct kernel_alloc a, again;
        struct tess_error *err = NULL;

        if (!node_init(&n))
                SKIP("no temporary directory");
        CHECK(alloc_kernel(&n.ctx, "k1", 2, 70, &a, &err) == 0);
        /* asked again (a start retried after a restart): the same cores and GPU */
        CHECK(alloc_kernel(&n.ctx, "k1", 2, 70, &again, &err) == 0);
        CHECK_INTEQ(again.ncores, 2);
        CHECK_INTEQ(again.cores[0], a.cores[0]);
        CHECK_INTEQ(again.gpus[0].index, a.gpus[0].index);
        CHECK_INTEQ(again.gpus[0].share, 70);
        /* and the map counts it once: 30 left on that GPU, 100 on the other */
        struct kernel_alloc b;
        CHECK(alloc_kernel(&n.ctx, "k2", 1, 30, &b, &err) == 0);
        CHECK_INTEQ(b.gpus[0].index, a.gpus[0].index);
        node_free(&n);
}

static void test_share_to_limits(void)
{
        /* fgpu.md: floor((total - reserved) x f), aligned down to 1 MiB; 100 x f percent */
        CHECK(gpu_share_memory(16 * GIB, 0, 50, 100) == 8 * GIB);
        CHECK(gpu_share_memory(16 * GIB, 1 * GIB, 50, 100) == 15 * GIB / 2);
        CHECK(gpu_share_memory(10 * GIB + 12345, 0, 33, 100) == (10 * GIB + 12345) * 33 / 100 / (1 << 20) * (1 << 20));
        CHECK(gpu_share_memory(16 * GIB, 0, 100, 400) == 4 * GIB); /* fgpu_per_gpu = 4: 1 fGPU is a quarter */
        CHECK(gpu_share_memory(1 * GIB, 2 * GIB, 50, 100) == 0);
        CHECK_INTEQ(gpu_share_sm(50, 100), 50);
        CHECK_INTEQ(gpu_share_sm(25, 100), 25);
        CHECK_INTEQ(gpu_share_sm(100, 400), 25);
        CHECK_INTEQ(gpu_share_sm(1, 400), 1); /* never 0 % */
        CHECK_INTEQ(gpu_share_sm(100, 100), 100);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_fractions_pack_onto_one_gpu),
                TEST(test_more_than_one_gpu_and_no_overcommit),
                TEST(test_a_restart_keeps_what_a_kernel_holds),
                TEST(test_share_to_limits),
                { 0 },
        };
        return test_main(tests);
}
