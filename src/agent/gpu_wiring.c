/* gpu_wiring.c - see gpu_wiring.h.
 *
 * cuda plugin: /dev/nvidiactl, /dev/nvidia-uvm(-tools) and /dev/nvidia<minor>
 * of each GPU held; the host's libcuda.so.1, libnvidia-ml.so.1 and
 * libnvidia-ptxjitcompiler.so.1 bound read-only into GPU_LIB_DIR.  The
 * container sees only its GPUs, in PCI order (CUDA_DEVICE_ORDER), so its
 * ordinals are 0..n-1 in the order alloc.c lists them.
 * mock plugin: the fake driver and NVML (libtessera-fake-cuda.so,
 * libtessera-fake-nvml.so) bound in their place, told by environment how
 * many GPUs of what size to show.
 * Fractions (cuda.shares): libtessera-fgpu.so preloaded (a read-only
 * /etc/ld.so.preload, and LD_PRELOAD), its config file with each visible
 * GPU's memory and SM share (fgpu.md's mapping) at the path the hook
 * trusts over the environment, and a directory for the region all the
 * container's processes share.
 * Whole GPUs (cuda.device): state_dir/gpu/<id>/devices lists them for the
 * agent's measurements (gpu_stats.c); with mock GPUs the fake driver's
 * state file there, bound read-write into the container and named by
 * TESSERA_FAKE_CUDA_STATE, makes the container's processes share their
 * GPUs' memory as on a real GPU, and is what the agent reads of them. */
#include "common/compat.h"

#include <dlfcn.h>
#include <libgen.h>
#include <link.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/timeutil.h"
#include "agent/gpu.h"
#include "fgpu/fgpu.h"
#include "fakecuda/fake.h"
#include "fgpu/region.h"
#include "agent/gpu_wiring.h"

#define MIB           (1024ull * 1024)
#define UTIL_FRESH_NS (5 * 1000 * 1000 * 1000LL) /* gpu_util.c writes once a second */

uint64_t gpu_share_memory(uint64_t memory, uint64_t reserved, int64_t share, int64_t per_gpu)
{
        if (memory <= reserved || share <= 0 || per_gpu <= 0)
                return 0;
        unsigned __int128 m = (unsigned __int128)(memory - reserved) * (uint64_t)share / (uint64_t)per_gpu;
        return (uint64_t)m / MIB * MIB;
}

unsigned gpu_share_sm(int64_t share, int64_t per_gpu)
{
        int64_t pct = per_gpu > 0 ? share * 100 / per_gpu : 0;
        return pct < 1 ? 1 : pct > 100 ? 100 : (unsigned)pct;
}

static const char *own(struct gpu_wiring *w, char *s)
{
        if (w->nowned < ARRAY_SIZE(w->owned))
                w->owned[w->nowned++] = s;
        return s;
}

static void add_mount(struct gpu_wiring *w, char *source, const char *dest, bool readonly)
{
        if (w->nmounts < ARRAY_SIZE(w->mounts))
                w->mounts[w->nmounts++] =
                        (struct container_mount){ .source = own(w, source), .destination = dest, .readonly = readonly };
        else
                free(source);
}

static void add_device(struct gpu_wiring *w, const char *path)
{
        struct stat st;
        if (stat(path, &st) == 0 && S_ISCHR(st.st_mode) && w->ndevices < ARRAY_SIZE(w->devices))
                w->devices[w->ndevices++] = (struct container_device){ .path = own(w, xstrdup(path)) };
}

static void add_env(struct gpu_wiring *w, char *kv)
{
        if (w->nenv + 1 < ARRAY_SIZE(w->env))
                w->env[w->nenv++] = kv;
        else
                free(kv);
}

/* path of a file beside the running tessera binary */
static char *beside_exe(const char *name)
{
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return xasprintf("/usr/lib/tessera/%s", name);
        exe[n] = '\0';
        return xasprintf("%s/%s", dirname(exe), name);
}

char *gpu_wiring_mock_nvml(const struct agent_conf *conf)
{
        return conf->mock_nvml_library ? xstrdup(conf->mock_nvml_library) : beside_exe("libtessera-fake-nvml.so");
}

/* The host file the dynamic linker finds for soname, or NULL. */
static char *host_library(const char *soname)
{
        void *h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
        struct link_map *map = NULL;
        char *path = NULL;

        if (!h)
                return NULL;
        if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
                path = realpath(map->l_name, NULL);
        dlclose(h);
        return path;
}

static int need_file(const char *path, const char *what, struct tess_error **err)
{
        if (access(path, R_OK) < 0)
                return tess_err(err, ENOENT, "%s '%s' is missing (build it, or set its path in the agent's config)",
                                what, path);
        return 0;
}

static char *mock_cuda(const struct agent_conf *conf)
{
        return conf->mock_cuda_library ? xstrdup(conf->mock_cuda_library) : beside_exe("libtessera-fake-cuda.so");
}

static char *fgpu_library(const struct agent_conf *conf)
{
        return conf->fgpu_library ? xstrdup(conf->fgpu_library) : beside_exe("libtessera-fgpu.so");
}

int gpu_wiring_check(const struct agent_conf *conf, const struct agent_devices *d, struct tess_error **err)
{
        int r = 0;

        if (d->ngpu == 0)
                return 0;
        if (streq(d->gpu_plugin, "mock")) {
                _cleanup_free_ char *cuda = mock_cuda(conf);
                _cleanup_free_ char *nvml = gpu_wiring_mock_nvml(conf);
                r = need_file(cuda, "the mock GPUs' driver", err);
                if (r >= 0)
                        r = need_file(nvml, "the mock GPUs' NVML", err);
        }
        if (r >= 0 && streq(d->gpu_slot, "cuda.shares")) {
                _cleanup_free_ char *lib = fgpu_library(conf);
                r = need_file(lib, "the fGPU library", err);
        }
        return r;
}

static int wire_cuda(const struct agent_ctx *ctx, const struct kernel_alloc *a, struct gpu_wiring *w,
                     struct tess_error **err)
{
        static const char *const libs[] = { "libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1" };

        add_device(w, "/dev/nvidiactl");
        add_device(w, "/dev/nvidia-uvm");
        add_device(w, "/dev/nvidia-uvm-tools");
        for (int i = 0; i < a->ngpus; i++) {
                char node[64];
                snprintf(node, sizeof(node), "/dev/nvidia%d", ctx->devices->gpu[a->gpus[i].index].minor);
                add_device(w, node);
        }
        for (size_t i = 0; i < ARRAY_SIZE(libs); i++) {
                char *host = host_library(libs[i]);
                if (!host && i < 2)
                        return tess_err(err, ENOENT, "the NVIDIA driver's %s is not on this node", libs[i]);
                if (host)
                        add_mount(w, host, own(w, xasprintf("%s/%s", GPU_LIB_DIR, libs[i])), true);
        }
        add_env(w, xstrdup("CUDA_DEVICE_ORDER=PCI_BUS_ID"));
        return 0;
}

static int wire_mock(const struct agent_ctx *ctx, const struct kernel_alloc *a, struct gpu_wiring *w,
                     struct tess_error **err)
{
        const struct gpu_info *g = &ctx->devices->gpu[a->gpus[0].index];
        char *cuda = mock_cuda(ctx->conf);
        char *nvml = gpu_wiring_mock_nvml(ctx->conf);

        if (need_file(cuda, "the mock GPUs' driver", err) < 0 || need_file(nvml, "the mock GPUs' NVML", err) < 0) {
                free(cuda);
                free(nvml);
                return -ENOENT;
        }
        add_mount(w, cuda, GPU_LIB_DIR "/libcuda.so.1", true);
        add_mount(w, nvml, GPU_LIB_DIR "/libnvidia-ml.so.1", true);
        add_env(w, xasprintf("TESSERA_FAKE_CUDA_DEVICES=%d", a->ngpus));
        add_env(w, xasprintf("TESSERA_FAKE_CUDA_MEMORY=%llu", (unsigned long long)g->memory));
        add_env(w, xasprintf("TESSERA_FAKE_CUDA_SM_COUNT=%u", g->sm));
        add_env(w, xasprintf("TESSERA_FAKE_CUDA_MODEL=%s", g->model));
        /* which of the node's GPUs the container's are: the fake NVML the
         * agent samples credits their launches to those */
        struct buf indices = BUF_INIT;
        buf_printf(&indices, "TESSERA_FAKE_CUDA_INDICES=");
        for (int i = 0; i < a->ngpus; i++)
                buf_printf(&indices, "%s%d", i ? "," : "", ctx->devices->gpu[a->gpus[i].index].index);
        add_env(w, xstrdup(indices.data));
        buf_release(&indices);
        return 0;
}

char *gpu_wiring_fgpu_dir(const struct agent_ctx *ctx, const char *id)
{
        return xasprintf("%s/fgpu/%s", ctx->conf->state_dir, id);
}

/* The hook's config and region directory for a fractional allocation. */
static int wire_fgpu(const struct agent_ctx *ctx, const char *id, const struct kernel_alloc *a, struct gpu_wiring *w,
                     struct tess_error **err)
{
        const struct agent_devices *dev = ctx->devices;
        char *lib = fgpu_library(ctx->conf);
        _cleanup_free_ char *dir = gpu_wiring_fgpu_dir(ctx, id);
        _cleanup_free_ char *run = xasprintf("%s/run", dir);
        _cleanup_free_ char *conf = xasprintf("%s/fgpu.conf", dir);
        _cleanup_free_ char *devices_file = xasprintf("%s/%s", dir, GPU_WIRING_DEVICES_FILE);
        _cleanup_free_ char *preload = xasprintf("%s/ld.so.preload", dir);
        static const char preload_text[] = FGPU_DIR "/libtessera-fgpu.so\n";
        struct buf text = BUF_INIT, devices = BUF_INIT;
        int r;

        if (need_file(lib, "the fGPU library", err) < 0) {
                free(lib);
                return -ENOENT;
        }
        buf_printf(&text, "# written by the tessera agent for kernel %s\nregion = %s/region\n", id, FGPU_RUN_DIR);
        for (int i = 0; i < a->ngpus; i++) {
                const struct gpu_info *g = &dev->gpu[a->gpus[i].index];
                buf_printf(&text, "memory_limit_%d = %llu\nsm_limit_%d = %u\n", i,
                           (unsigned long long)gpu_share_memory(g->memory, ctx->conf->reserved_gpu_mem,
                                                                a->gpus[i].share, dev->gpu_per_device),
                           i, gpu_share_sm(a->gpus[i].share, dev->gpu_per_device));
                buf_printf(&devices, "%d\n", g->index);
        }
        r = fs_mkdir_p(run, 0755, err);
        if (r >= 0)
                r = fs_write_file_atomic(conf, text.data, text.len, 0644, err);
        if (r >= 0)
                r = fs_write_file_atomic(devices_file, devices.data, devices.len, 0644, err);
        if (r >= 0)
                r = fs_write_file_atomic(preload, preload_text, sizeof(preload_text) - 1, 0644, err);
        if (r >= 0) { /* the region, made here so the agent can write measurements into it */
                _cleanup_free_ char *region = xasprintf("%s/region", run);
                struct fgpu_region *reg = NULL;
                char why[256];
                if (fgpu_region_open(region, true, &reg, why, sizeof(why)) < 0)
                        r = tess_err(err, EIO, "%s", why);
                fgpu_region_close(reg);
        }
        buf_release(&text);
        buf_release(&devices);
        if (r < 0) {
                free(lib);
                return r;
        }
        add_mount(w, lib, FGPU_DIR "/libtessera-fgpu.so", true);
        add_mount(w, xstrdup(conf), FGPU_CONFIG, true);
        add_mount(w, xstrdup(run), FGPU_RUN_DIR, false);
        /* the loader preloads the hook into every process, also one whose
         * environment lost LD_PRELOAD; the variable stays for loaders
         * that do not read /etc/ld.so.preload */
        add_mount(w, xstrdup(preload), "/etc/ld.so.preload", true);
        add_env(w, xstrdup("LD_PRELOAD=" FGPU_DIR "/libtessera-fgpu.so"));
        add_env(w, xstrdup("TESSERA_FGPU_REAL_LIBCUDA=" GPU_LIB_DIR "/libcuda.so.1"));
        add_env(w, xstrdup("TESSERA_FGPU_REAL_LIBNVML=" GPU_LIB_DIR "/libnvidia-ml.so.1"));
        return 0;
}

char *gpu_wiring_gpu_dir(const struct agent_ctx *ctx, const char *id)
{
        return xasprintf("%s/gpu/%s", ctx->conf->state_dir, id);
}

int gpu_wiring_devices(const char *dir, int *idx, int max)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, GPU_WIRING_DEVICES_FILE);
        _cleanup_free_ char *text = NULL;
        size_t len;
        int n = 0;

        if (fs_read_file(path, 4096, &text, &len, NULL) < 0)
                return 0;
        for (char *p = text, *end; n < max; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p || v < 0 || v >= FGPU_REGION_DEVICES)
                        break;
                idx[n++] = (int)v;
        }
        return n;
}

/* The devices file of a whole-GPU kernel and, for mock GPUs, the fake
 * driver's state (every device's bytes in use, zero at the start). */
static int wire_whole(const struct agent_ctx *ctx, const char *id, const struct kernel_alloc *a,
                      struct gpu_wiring *w, struct tess_error **err)
{
        static const uint64_t unused[FAKE_MAX_DEVICES];
        _cleanup_free_ char *dir = gpu_wiring_gpu_dir(ctx, id);
        _cleanup_free_ char *devices_file = xasprintf("%s/%s", dir, GPU_WIRING_DEVICES_FILE);
        struct buf devices = BUF_INIT;
        int r;

        for (int i = 0; i < a->ngpus; i++)
                buf_printf(&devices, "%d\n", ctx->devices->gpu[a->gpus[i].index].index);
        r = fs_mkdir_p(dir, 0755, err);
        if (r >= 0)
                r = fs_write_file_atomic(devices_file, devices.data, devices.len, 0644, err);
        buf_release(&devices);
        if (r < 0 || !streq(ctx->devices->gpu_plugin, "mock"))
                return r;
        char *state = xasprintf("%s/%s", dir, GPU_WIRING_FAKE_STATE_FILE);
        r = fs_write_file_atomic(state, unused, sizeof(unused), 0666, err); /* any user in the container */
        if (r < 0) {
                free(state);
                return r;
        }
        add_mount(w, state, GPU_FAKE_STATE, false);
        add_env(w, xstrdup("TESSERA_FAKE_CUDA_STATE=" GPU_FAKE_STATE));
        return 0;
}

int gpu_wiring_prepare(const struct agent_ctx *ctx, const char *id, const struct kernel_alloc *a,
                       struct gpu_wiring *ret, struct tess_error **err)
{
        int r = 0;

        *ret = (struct gpu_wiring){ 0 };
        if (a->ngpus == 0)
                return 0;
        if (streq(ctx->devices->gpu_plugin, "cuda"))
                r = wire_cuda(ctx, a, ret, err);
        else if (streq(ctx->devices->gpu_plugin, "mock"))
                r = wire_mock(ctx, a, ret, err);
        if (r >= 0)
                add_env(ret, xstrdup("LD_LIBRARY_PATH=" GPU_LIB_DIR));
        if (r >= 0 && streq(ctx->devices->gpu_slot, "cuda.shares"))
                r = wire_fgpu(ctx, id, a, ret, err);
        else if (r >= 0 && streq(ctx->devices->gpu_slot, "cuda.device"))
                r = wire_whole(ctx, id, a, ret, err);
        if (r < 0)
                gpu_wiring_release(ret);
        return r;
}

void gpu_wiring_release(struct gpu_wiring *w)
{
        for (size_t i = 0; i < w->nowned; i++)
                free(w->owned[i]);
        for (size_t i = 0; i < w->nenv; i++)
                free(w->env[i]);
        *w = (struct gpu_wiring){ 0 };
}

void gpu_wiring_remove(const struct agent_ctx *ctx, const char *id)
{
        _cleanup_free_ char *dir = gpu_wiring_fgpu_dir(ctx, id);
        _cleanup_free_ char *whole = gpu_wiring_gpu_dir(ctx, id);
        fs_remove_tree(dir, NULL);
        fs_remove_tree(whole, NULL);
}

bool gpu_wiring_usage(const struct agent_ctx *ctx, const char *id, uint64_t *used, uint64_t *limit, int *devices,
                      int *util)
{
        _cleanup_free_ char *dir = gpu_wiring_fgpu_dir(ctx, id);
        _cleanup_free_ char *conf = xasprintf("%s/fgpu.conf", dir);
        _cleanup_free_ char *region = xasprintf("%s/run/region", dir);
        _cleanup_free_ char *text = NULL;
        struct fgpu_config c;
        struct fgpu_region *r = NULL;
        char why[256];
        size_t len;

        if (fs_read_file(conf, 64 * 1024, &text, &len, NULL) < 0)
                return false;
        fgpu_config_parse_file(text, len, &c);
        *used = *limit = 0;
        *devices = 0;
        *util = -1;
        for (int d = 0; d < FGPU_MAX_DEVICES; d++) {
                *limit += c.memory[d];
                *devices += c.memory[d] > 0;
        }
        if (fgpu_region_open(region, false, &r, why, sizeof(why)) == 0) {
                int64_t now = monotonic_usec() * 1000;
                for (int d = 0; d < FGPU_REGION_DEVICES; d++) {
                        *used += fgpu_region_used(r, d);
                        if (r->dev[d].util_ns && now - r->dev[d].util_ns < UTIL_FRESH_NS)
                                *util = (*util < 0 ? 0 : *util) + (int)r->dev[d].util;
                }
                fgpu_region_close(r);
        }
        return true;
}
