/* test_gpu_stats.c - what a kernel holding whole GPUs reports in lastStat
 * (agent/gpu_stats.c): its GPUs listed by gpu_wiring.c, their memory in
 * use as the fake driver's shared state holds it (mock plugin) or as NVML
 * says (cuda plugin, here the fake NVML), and utilization as NVML says. */
#include "common/compat.h"

#include <dlfcn.h>
#include <libgen.h>
#include <sys/stat.h>

#include "../lib/test.h"
#include "agent/gpu.h"
#include "agent/gpu_stats.h"
#include "agent/gpu_wiring.h"
#include "common/fs.h"

#define GIB (1024ull * 1024 * 1024)

struct node {
        char dir[64];
        char exe[4096];
        struct agent_conf conf;
        struct agent_devices dev;
        struct gpu_info gpus[2];
        struct agent_ctx ctx;
        struct kernel_alloc a;
};

/* Two 16 GiB mock GPUs of the cuda.device slot, a kernel holding both;
 * the driver libraries named are any readable file (nothing loads them). */
static bool node_init(struct node *n, const char *slot)
{
        ssize_t len;

        *n = (struct node){ 0 };
        snprintf(n->dir, sizeof(n->dir), "/tmp/tessera-test-gpu-stats.XXXXXX");
        len = readlink("/proc/self/exe", n->exe, sizeof(n->exe) - 1);
        if (len <= 0 || !mkdtemp(n->dir))
                return false;
        n->conf.state_dir = n->dir;
        n->conf.mock_cuda_library = n->conf.mock_nvml_library = n->conf.fgpu_library = n->exe;
        for (int i = 0; i < 2; i++)
                n->gpus[i] = (struct gpu_info){ .index = i, .memory = 16 * GIB, .sm = 108 };
        n->dev.gpu = n->gpus;
        n->dev.ngpu = 2;
        n->dev.gpu_plugin = "mock";
        n->dev.gpu_slot = slot;
        n->dev.gpu_per_device = streq(slot, "cuda.device") ? 1 : 100;
        n->ctx.conf = &n->conf;
        n->ctx.devices = &n->dev;
        n->a.ngpus = 2;
        n->a.gpus[0] = (struct gpu_share){ .index = 0, .share = n->dev.gpu_per_device };
        n->a.gpus[1] = (struct gpu_share){ .index = 1, .share = n->dev.gpu_per_device };
        return true;
}

static bool has_env(const struct gpu_wiring *w, const char *kv)
{
        for (size_t i = 0; i < w->nenv; i++)
                if (streq(w->env[i], kv))
                        return true;
        return false;
}

static const struct container_mount *mount_at(const struct gpu_wiring *w, const char *dest)
{
        for (size_t i = 0; i < w->nmounts; i++)
                if (streq(w->mounts[i].destination, dest))
                        return &w->mounts[i];
        return NULL;
}

/* Mock whole GPUs: the container gets the fake driver's state file,
 * read-write, and reports 0 bytes of 2 x 16 GiB, 0 % until it allocates. */
static void test_mock_whole_gpus_share_the_fake_state(void)
{
        struct node n;
        struct gpu_wiring w;
        struct stat st;
        uint64_t used = 1, total = 0;
        int devices = 0, util = -1;

        if (!node_init(&n, "cuda.device"))
                SKIP("no temporary directory");
        CHECK_INTEQ(gpu_wiring_prepare(&n.ctx, "k1", &n.a, &w, NULL), 0);
        _cleanup_free_ char *dir = gpu_wiring_gpu_dir(&n.ctx, "k1");
        _cleanup_free_ char *state = xasprintf("%s/%s", dir, GPU_WIRING_FAKE_STATE_FILE);
        CHECK(has_env(&w, "TESSERA_FAKE_CUDA_STATE=" GPU_FAKE_STATE));
        const struct container_mount *m = mount_at(&w, GPU_FAKE_STATE);
        CHECK(m && streq(m->source, state) && !m->readonly);
        CHECK(stat(state, &st) == 0 && (st.st_mode & 0777) == 0666 && st.st_size == 16 * sizeof(uint64_t));
        CHECK(gpu_stats_kernel(&n.ctx, NULL, "k1", &used, &total, &devices, &util));
        CHECK(used == 0 && total == 32 * GIB);
        CHECK_INTEQ(devices, 2);
        CHECK_INTEQ(util, 0);
        gpu_wiring_release(&w);
        gpu_wiring_remove(&n.ctx, "k1");
        CHECK(!gpu_stats_kernel(&n.ctx, NULL, "k1", &used, &total, &devices, &util));
        fs_remove_tree(n.dir, NULL);
}

/* A fraction is measured through its region (gpu_wiring_usage), not here:
 * no fake state, no devices file of whole GPUs. */
static void test_fractions_are_not_whole_gpus(void)
{
        struct node n;
        struct gpu_wiring w;
        uint64_t used, total;
        int devices, util;

        if (!node_init(&n, "cuda.shares"))
                SKIP("no temporary directory");
        n.a.gpus[0].share = n.a.gpus[1].share = 50;
        CHECK_INTEQ(gpu_wiring_prepare(&n.ctx, "k1", &n.a, &w, NULL), 0);
        CHECK(!mount_at(&w, GPU_FAKE_STATE));
        CHECK(!gpu_stats_kernel(&n.ctx, NULL, "k1", &used, &total, &devices, &util));
        gpu_wiring_release(&w);
        fs_remove_tree(n.dir, NULL);
}

/* The cuda plugin without NVML reports nothing rather than zeros. */
static void test_cuda_without_nvml_reports_nothing(void)
{
        struct node n;
        uint64_t used, total;
        int devices, util;

        if (!node_init(&n, "cuda.device"))
                SKIP("no temporary directory");
        n.dev.gpu_plugin = "cuda";
        _cleanup_free_ char *dir = gpu_wiring_gpu_dir(&n.ctx, "k1");
        _cleanup_free_ char *file = xasprintf("%s/%s", dir, GPU_WIRING_DEVICES_FILE);
        CHECK(fs_mkdir_p(dir, 0755, NULL) == 0 && fs_write_file_atomic(file, "1\n", 2, 0644, NULL) == 0);
        CHECK(!gpu_stats_kernel(&n.ctx, NULL, "k1", &used, &total, &devices, &util));
        CHECK(gpu_stats_open("/nonexistent/libnvidia-ml.so.1") == NULL);
        fs_remove_tree(n.dir, NULL);
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_ctx_create_fn)(void **, unsigned, int);
typedef int (*cu_mem_alloc_fn)(unsigned long long *, size_t);
typedef int (*cu_mem_free_fn)(unsigned long long);

/* A program in the container allocates 1 GiB on its second GPU through
 * the fake driver: the mock plugin reads it from the shared state, and
 * the cuda plugin's NVML (the fake NVML, on the same state) says the same. */
static void test_an_allocation_shows_in_both_plugins(void)
{
        struct node n;
        struct gpu_wiring w;
        uint64_t used = 0, total = 0;
        int devices = 0, util = -1, dev = -1;
        void *ctx = NULL;
        unsigned long long ptr = 0;

        if (!node_init(&n, "cuda.device"))
                SKIP("no temporary directory");
        _cleanup_free_ char *exe = xstrdup(n.exe);
        const char *tests_dir = dirname(exe); /* $(BUILD)/tests: the fake libraries are in $(BUILD) */
        _cleanup_free_ char *cuda_path = xasprintf("%s/../libtessera-fake-cuda.so", tests_dir);
        _cleanup_free_ char *nvml_path = xasprintf("%s/../libtessera-fake-nvml.so", tests_dir);
        if (access(cuda_path, R_OK) < 0 || access(nvml_path, R_OK) < 0) {
                fs_remove_tree(n.dir, NULL);
                SKIP("the fake driver is not built");
        }
        CHECK_INTEQ(gpu_wiring_prepare(&n.ctx, "k1", &n.a, &w, NULL), 0);
        gpu_wiring_release(&w);
        _cleanup_free_ char *dir = gpu_wiring_gpu_dir(&n.ctx, "k1");
        _cleanup_free_ char *state = xasprintf("%s/%s", dir, GPU_WIRING_FAKE_STATE_FILE);
        /* what the container's environment says, read once by each fake library */
        setenv("TESSERA_FAKE_CUDA_STATE", state, 1);
        setenv("TESSERA_FAKE_CUDA_DEVICES", "2", 1);
        setenv("TESSERA_FAKE_CUDA_MEMORY", "16g", 1);
        void *cuda = dlopen(cuda_path, RTLD_NOW | RTLD_LOCAL);
        CHECK(cuda != NULL);
        if (!cuda) {
                fs_remove_tree(n.dir, NULL);
                return;
        }
        CHECK_INTEQ(((cu_init_fn)dlsym(cuda, "cuInit"))(0), 0);
        CHECK_INTEQ(((cu_device_get_fn)dlsym(cuda, "cuDeviceGet"))(&dev, 1), 0);
        CHECK_INTEQ(((cu_ctx_create_fn)dlsym(cuda, "cuCtxCreate_v2"))(&ctx, 0, dev), 0);
        CHECK_INTEQ(((cu_mem_alloc_fn)dlsym(cuda, "cuMemAlloc_v2"))(&ptr, GIB), 0);

        CHECK(gpu_stats_kernel(&n.ctx, NULL, "k1", &used, &total, &devices, &util));
        CHECK(used == GIB && total == 32 * GIB && devices == 2 && util == 0);

        struct gpu_stats *s = gpu_stats_open(nvml_path);
        CHECK(s != NULL);
        n.dev.gpu_plugin = "cuda";
        used = total = 0;
        util = -1;
        CHECK(gpu_stats_kernel(&n.ctx, s, "k1", &used, &total, &devices, &util));
        CHECK(used == GIB && total == 32 * GIB && devices == 2 && util == 0);

        CHECK_INTEQ(((cu_mem_free_fn)dlsym(cuda, "cuMemFree_v2"))(ptr), 0);
        CHECK(gpu_stats_kernel(&n.ctx, s, "k1", &used, &total, &devices, &util) && used == 0);
        n.dev.gpu_plugin = "mock";
        CHECK(gpu_stats_kernel(&n.ctx, NULL, "k1", &used, &total, &devices, &util) && used == 0);
        gpu_stats_close(s);
        dlclose(cuda);
        fs_remove_tree(n.dir, NULL);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_mock_whole_gpus_share_the_fake_state),
                TEST(test_fractions_are_not_whole_gpus),
                TEST(test_cuda_without_nvml_reports_nothing),
                TEST(test_an_allocation_shows_in_both_plugins),
                { 0 },
        };
        return test_main(tests);
}
