/* test_fgpu_hook.c - the fGPU hook (libtessera-fgpu.so) preloaded into a
 * CUDA program (fgpu_client.c) in front of the fake driver and NVML
 * (src/fakecuda), checked as a user would: what the program's calls return,
 * what the container's shared region says it uses, what the driver really
 * holds, and which of the driver's functions ran.
 *
 *   abi          our declarations of the driver are NVIDIA's (where cuda.h is)
 *   routing      every wrapped symbol, by direct link, dlopen+dlsym and
 *                cuGetProcAddress(_v2) at the versions CUDA 11.3-13 ask for:
 *                the hook's wrapper runs (a charge, a refund, the limit
 *                reported, the limiter's state) and then the driver's function
 *   limits       per device; OOM exactly at the limit for every allocation
 *                family, nothing charged by a refusal; refunds on free
 *   info         cuMemGetInfo, cuDeviceTotalMem, NVML v1/v2 agree, across processes
 *   environment  limits, SM limits, the real libraries, the region, the
 *                config file over the environment, bad configs fail closed,
 *                no limit passes through untouched
 *   processes    8 at once never past the budget; kill -9 returns a charge
 *   threads      one process's threads at once, also under ThreadSanitizer
 *   launches     counted by the fake and seen by the limiter with an SM limit */
#include "common/compat.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../lib/test.h"
#include "fgpu/region.h"

#define MIB          (1024ll * 1024)
#define FAKE_MEMORY  (1024 * MIB)
#define CUDA_OOM           2
#define CUDA_NOT_FND       500
#define CUDA_NOT_PERMITTED 800

static char build[PATH_MAX], client[PATH_MAX + 64], hook[PATH_MAX + 32], fake_cuda[PATH_MAX + 32],
        fake_nvml[PATH_MAX + 32];
static char region_path[256], tmpdir[64];
static int nregion;

/* ---- running the client ---- */

/* A fresh region path for one test (removed by the next). */
static const char *fresh_region(void)
{
        if (region_path[0])
                unlink(region_path);
        snprintf(region_path, sizeof(region_path), "%s/region.%d", tmpdir, ++nregion);
        unlink(region_path);
        return region_path;
}

static bool overridden(const char *const *extra, const char *entry)
{
        size_t n = strcspn(entry, "=") + 1;
        for (; extra && *extra; extra++)
                if (strncmp(*extra, entry, n) == 0)
                        return true;
        return false;
}

/* Start the client (preload: the hook) with the base environment, extra
 * entries replacing its own; stdout and stderr into *fd. */
static pid_t spawn(const char *const *extra, const char *const *args, int *fd)
{
        char e_region[300], e_cuda[PATH_MAX + 64], e_nvml[PATH_MAX + 64], e_preload[PATH_MAX + 64];
        snprintf(e_region, sizeof(e_region), "TESSERA_FGPU_REGION=%s", region_path);
        snprintf(e_cuda, sizeof(e_cuda), "TESSERA_FGPU_REAL_LIBCUDA=%s", fake_cuda);
        snprintf(e_nvml, sizeof(e_nvml), "TESSERA_FGPU_REAL_LIBNVML=%s", fake_nvml);
        snprintf(e_preload, sizeof(e_preload), "LD_PRELOAD=%s", hook);
        const char *base[] = { "PATH=/usr/bin:/bin",
                               "TESSERA_FGPU_CONFIG=/nonexistent/fgpu.conf",
                               "TESSERA_FAKE_CUDA_DEVICES=2",
                               "TESSERA_FAKE_CUDA_MEMORY=1g",
                               e_region,
                               e_cuda,
                               e_nvml,
                               e_preload,
                               NULL };
        const char *env[64], *argv[1200];
        int n = 0, a = 0;
        for (int i = 0; base[i]; i++)
                if (!overridden(extra, base[i]))
                        env[n++] = base[i];
        for (int i = 0; extra && extra[i] && n < 63; i++)
                env[n++] = extra[i];
        env[n] = NULL;
        argv[a++] = client;
        for (int i = 0; args[i] && a < 1199; i++)
                argv[a++] = args[i];
        argv[a] = NULL;

        int p[2];
        if (pipe(p) < 0)
                return -1;
        pid_t pid = fork();
        if (pid == 0) {
                dup2(p[1], 1);
                dup2(p[1], 2);
                close(p[0]);
                close(p[1]);
                execve(argv[0], (char *const *)argv, (char *const *)env);
                _exit(127);
        }
        close(p[1]);
        *fd = p[0];
        return pid;
}

/* Read fd to its end into out. */
static void slurp(int fd, char *out, size_t len)
{
        size_t n = 0;
        ssize_t r;
        while (n + 1 < len && (r = read(fd, out + n, len - 1 - n)) > 0)
                n += (size_t)r;
        out[n] = '\0';
        close(fd);
}

/* Run the client to its end: its exit status (-1 if it did not exit). */
static int run(const char *const *extra, const char *const *args, char *out, size_t len)
{
        int fd, status;
        pid_t pid = spawn(extra, args, &fd);
        if (pid < 0)
                return -1;
        slurp(fd, out, len);
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                test_fail(__FILE__, __LINE__, "client ended with status %d:\n%.2000s", status, out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Line k (from 0) of out, in buf. */
static const char *line(const char *out, int k, char *buf, size_t len)
{
        for (; k > 0 && out; k--)
                out = strchr(out, '\n') ? strchr(out, '\n') + 1 : NULL;
        size_t n = out ? strcspn(out, "\n") : 0;
        snprintf(buf, len, "%.*s", (int)n, out ? out : "");
        return buf;
}

/* The value of key=N on a line (LLONG_MIN if it is not there). */
static long long val(const char *l, const char *key)
{
        char k[64];
        snprintf(k, sizeof(k), " %s=", key);
        const char *p = strstr(l, k);
        return p ? strtoll(p + strlen(k), NULL, 10) : LLONG_MIN;
}

/* Whether the line's reached= list names the fake's function. */
static bool reached(const char *l, const char *name)
{
        const char *p = strstr(l, " reached=");
        size_t n = strlen(name);
        for (p = p ? p + 9 : NULL; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (strncmp(p, name, n) == 0 && p[n] == ',')
                        return true;
        return false;
}

#define CHECK_VAL(l, key, expect)                                                                       \
        do {                                                                                            \
                long long v_ = val(l, key), e_ = (long long)(expect);                                   \
                if (v_ != e_)                                                                           \
                        test_fail(__FILE__, __LINE__, "%s=%lld, expected %lld in: %s", key, v_, e_, l); \
        } while (0)

/* ---- routing ---- */

enum kind {
        K_ALLOC,
        K_FREE,
        K_INFO,
        K_LAUNCH,
        K_PROCADDR,
        K_NVML
};

static const struct wrapped {
        const char *name, *base;
        enum kind kind;
        int since;       /* the CUDA version that introduced it */
        bool per_thread; /* the _ptsz variant */
} wrapped[] = {
        { "cuMemAlloc_v2", "cuMemAlloc", K_ALLOC, 3020, false },
        { "cuMemAllocPitch_v2", "cuMemAllocPitch", K_ALLOC, 3020, false },
        { "cuMemAllocManaged", "cuMemAllocManaged", K_ALLOC, 6000, false },
        { "cuMemFree_v2", "cuMemFree", K_FREE, 3020, false },
        { "cuMemAllocAsync", "cuMemAllocAsync", K_ALLOC, 11020, false },
        { "cuMemAllocAsync_ptsz", "cuMemAllocAsync", K_ALLOC, 11020, true },
        { "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", K_ALLOC, 11020, false },
        { "cuMemAllocFromPoolAsync_ptsz", "cuMemAllocFromPoolAsync", K_ALLOC, 11020, true },
        { "cuMemFreeAsync", "cuMemFreeAsync", K_FREE, 11020, false },
        { "cuMemFreeAsync_ptsz", "cuMemFreeAsync", K_FREE, 11020, true },
        { "cuMemCreate", "cuMemCreate", K_ALLOC, 10020, false },
        { "cuMemRelease", "cuMemRelease", K_FREE, 10020, false },
        { "cuArrayCreate_v2", "cuArrayCreate", K_ALLOC, 3020, false },
        { "cuArray3DCreate_v2", "cuArray3DCreate", K_ALLOC, 3020, false },
        { "cuArrayDestroy", "cuArrayDestroy", K_FREE, 2000, false },
        { "cuMipmappedArrayCreate", "cuMipmappedArrayCreate", K_ALLOC, 5000, false },
        { "cuMipmappedArrayDestroy", "cuMipmappedArrayDestroy", K_FREE, 5000, false },
        { "cuMemGetInfo_v2", "cuMemGetInfo", K_INFO, 3020, false },
        { "cuDeviceTotalMem_v2", "cuDeviceTotalMem", K_INFO, 3020, false },
        { "cuLaunchKernel", "cuLaunchKernel", K_LAUNCH, 4000, false },
        { "cuLaunchKernel_ptsz", "cuLaunchKernel", K_LAUNCH, 7000, true },
        { "cuLaunchKernelEx", "cuLaunchKernelEx", K_LAUNCH, 11060, false },
        { "cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", K_LAUNCH, 11060, true },
        { "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", K_LAUNCH, 9000, false },
        { "cuLaunchCooperativeKernel_ptsz", "cuLaunchCooperativeKernel", K_LAUNCH, 9000, true },
        { "cuGraphLaunch", "cuGraphLaunch", K_LAUNCH, 10000, false },
        { "cuGraphLaunch_ptsz", "cuGraphLaunch", K_LAUNCH, 10000, true },
        { "cuGetProcAddress", "cuGetProcAddress", K_PROCADDR, 11030, false },
        { "cuGetProcAddress_v2", "cuGetProcAddress", K_PROCADDR, 12000, false },
        { "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo", K_NVML, 0, false },
        { "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo_v2", K_NVML, 0, false },
};
#define NWRAPPED ARRAY_SIZE(wrapped)

#define ROUTE_LIMIT (256 * MIB)
static const char *const limited_env[] = { "CUDA_DEVICE_MEMORY_LIMIT=256m", "CUDA_DEVICE_SM_LIMIT=50", NULL };

/* A route line shows the wrapper of w ran, then the fake's function `expect`. */
static void check_route(const char *l, const struct wrapped *w, const char *expect, const char *how)
{
        bool ok = val(l, "rc") == 0 && reached(l, expect);
        switch (w->kind) {
        case K_ALLOC:
                ok = ok && val(l, "charged") > 0;
                break;
        case K_FREE:
                ok = ok && val(l, "charged") < 0;
                break;
        case K_INFO:
        case K_NVML:
                ok = ok && val(l, "total") == ROUTE_LIMIT;
                break;
        case K_LAUNCH:
                ok = ok && val(l, "limiter") == 1;
                break;
        case K_PROCADDR:
                ok = ok && val(l, "charged") > 0 && reached(l, "cuMemAlloc_v2");
                break;
        }
        if (!ok)
                test_fail(__FILE__, __LINE__, "%s via %s: the hook's wrapper then the fake's %s expected: %s", w->name,
                          how, expect, l);
}

/* Every wrapped symbol by its exported name, linked directly or dlsym'd. */
static void route_by_name(const char *path)
{
        static char out[1 << 18];
        char args[NWRAPPED][96], l[1024];
        const char *argv[NWRAPPED + 4] = { "init", "ctx:0" };
        int a = 2;

        fresh_region();
        for (size_t i = 0; i < NWRAPPED; i++) {
                snprintf(args[i], sizeof(args[i]), "route:%s:%s", path, wrapped[i].name);
                argv[a++] = args[i];
        }
        argv[a] = NULL;
        run(limited_env, argv, out, sizeof(out));
        for (size_t i = 0; i < NWRAPPED; i++)
                check_route(line(out, 2 + (int)i, l, sizeof(l)), &wrapped[i], wrapped[i].name, path);
}

static void test_routing_direct_link(void)
{
        route_by_name("direct");
}

static void test_routing_dlopen_dlsym(void)
{
        route_by_name("dlsym");
}

/* The name a real driver hands out for base at version with flags. */
static const struct wrapped *driver_choice(const char *base, int version, int flags)
{
        const struct wrapped *best = NULL, *best_pt = NULL;
        for (size_t i = 0; i < NWRAPPED; i++) {
                const struct wrapped *w = &wrapped[i];
                if (strcmp(w->base, base) != 0 || w->since > version || w->kind == K_NVML)
                        continue;
                const struct wrapped **slot = w->per_thread ? &best_pt : &best;
                if (!*slot || w->since > (*slot)->since)
                        *slot = w;
        }
        return (flags & 2) && best_pt ? best_pt : best;
}

/* Every base name through cuGetProcAddress or _v2 at each version and stream mode. */
static void route_by_procaddr(const char *path)
{
        static const int versions[] = { 11030, 11040, 11080, 12000, 12080, 13000 };
        static char out[1 << 20];
        static char args[1024][96];
        static const char *argv[1100];
        static const struct wrapped *expect[1024];
        char l[1024];
        int a = 0, n = 0;

        fresh_region();
        argv[a++] = "init";
        argv[a++] = "ctx:0";
        for (size_t i = 0; i < NWRAPPED; i++) {
                if (wrapped[i].per_thread || wrapped[i].kind == K_NVML ||
                    (i > 0 && !strcmp(wrapped[i].base, wrapped[i - 1].base)))
                        continue;
                for (size_t v = 0; v < ARRAY_SIZE(versions); v++)
                        for (int flags = 0; flags < 3; flags++) {
                                if (!strcmp(path, "procaddr_v2") && versions[v] < 12000)
                                        continue; /* _v2 is CUDA 12's */
                                snprintf(args[n], sizeof(args[n]), "route:%s:%s:%d:%d", path, wrapped[i].base,
                                         versions[v], flags);
                                expect[n] = driver_choice(wrapped[i].base, versions[v], flags);
                                argv[a++] = args[n++];
                        }
        }
        argv[a] = NULL;
        run(limited_env, argv, out, sizeof(out));
        for (int k = 0; k < n; k++) {
                line(out, 2 + k, l, sizeof(l));
                if (!expect[k]) { /* too new for the version asked: not found, passed through as such */
                        if (val(l, "found") != 0 || val(l, "rc") != CUDA_NOT_FND)
                                test_fail(__FILE__, __LINE__, "%s: not found expected: %s", args[k], l);
                        continue;
                }
                check_route(l, expect[k], expect[k]->name, args[k]);
        }
}

static void test_routing_cuGetProcAddress(void)
{
        route_by_procaddr("procaddr");
}

static void test_routing_cuGetProcAddress_v2(void)
{
        route_by_procaddr("procaddr_v2");
}

/* ---- the driver's ABI ---- */

/* Our own declarations of the driver (src/common/cuda_abi.h) are NVIDIA's:
 * the same prototypes (cuda_abi_nvidia compiles only if they are), and the
 * same constants and struct layouts (the two builds print the same). */
static void test_abi_matches_nvidia_cuda_h(void)
{
        static char ours[16384], theirs[16384];
        char path[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/tests/cuda_abi_nvidia", build);
        if (access(path, X_OK) < 0)
                SKIP("no CUDA toolkit's cuda.h here (CUDA_INC): cuda_abi_nvidia not built");
        const char *progs[] = { "cuda_abi_ours", "cuda_abi_nvidia" };
        char *outs[] = { ours, theirs };
        for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/tests/%s", build, progs[i]);
                FILE *f = popen(path, "r");
                CHECK(f != NULL);
                size_t n = f ? fread(outs[i], 1, sizeof(ours) - 1, f) : 0;
                outs[i][n] = '\0';
                CHECK(f && pclose(f) == 0);
        }
        CHECK(strlen(ours) > 1000); /* every value and layout printed */
        if (strcmp(ours, theirs) != 0) {
                const char *a = ours, *b = theirs;
                while (*a && *a == *b)
                        a++, b++;
                while (a > ours && a[-1] != '\n')
                        a--, b--;
                test_fail(__FILE__, __LINE__, "cuda_abi.h differs from cuda.h at:\n  ours:   %.*s\n  NVIDIA: %.*s",
                          (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
        }
}

/* ---- limits ---- */

/* The library exports what it wraps and dlsym, nothing else: a program
 * linked with -lcuda reaches every wrapper, and no helper of the hook's
 * shadows a symbol of the program's. */
static void test_exports_only_the_wrappers(void)
{
        char cmd[PATH_MAX + 64], name[256], extra[1024] = "";
        bool seen[NWRAPPED] = { false };
        int ndlsym = 0;

        snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", hook);
        FILE *nm = popen(cmd, "r");
        CHECK(nm != NULL);
        while (nm && fscanf(nm, "%*s %*s %255s", name) == 1) {
                bool known = false;
                for (size_t i = 0; i < NWRAPPED; i++)
                        if (streq(wrapped[i].name, name))
                                known = seen[i] = true;
                if (streq(name, "dlsym"))
                        known = ++ndlsym > 0;
                size_t used = strlen(extra);
                if (!known)
                        snprintf(extra + used, sizeof(extra) - used, " %s", name);
        }
        CHECK(nm && pclose(nm) == 0);
        if (extra[0])
                test_fail(__FILE__, __LINE__, "exported but not a wrapper:%s", extra);
        CHECK_INTEQ(ndlsym, 1);
        for (size_t i = 0; i < NWRAPPED; i++)
                if (!seen[i])
                        test_fail(__FILE__, __LINE__, "%s is wrapped but not exported", wrapped[i].name);
}

static void test_limits_per_device(void)
{
        static char out[8192];
        char l[512];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT_0=64m", "CUDA_DEVICE_MEMORY_LIMIT_1=32m", NULL };
        const char *args[] = { "init",          "ctx:0",   "info",
                               "total:0",       "total:1", "alloc:plain:33554432",
                               "ctx:1",         "info",    "alloc:plain:33554432",
                               "alloc:plain:1", "ctx:0",   "alloc:plain:33554432",
                               "alloc:plain:1", NULL };

        fresh_region();
        run(env, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "total", 64 * MIB);
        CHECK_VAL(l, "free", 64 * MIB);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "total", 64 * MIB);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "total", 32 * MIB);
        CHECK_VAL(line(out, 5, l, sizeof(l)), "rc", 0); /* device 0: 32 of 64 */
        CHECK_VAL(line(out, 7, l, sizeof(l)), "total", 32 * MIB);
        CHECK_VAL(l, "free", 32 * MIB); /* device 1's budget is its own */
        CHECK_VAL(line(out, 8, l, sizeof(l)), "rc", 0);
        CHECK_VAL(l, "charged", 32 * MIB);
        CHECK_VAL(line(out, 9, l, sizeof(l)), "rc", CUDA_OOM);
        CHECK_VAL(l, "charged", 0);
        CHECK_VAL(l, "fake", 0);
        CHECK_VAL(line(out, 11, l, sizeof(l)), "rc", 0); /* device 0: 64 of 64 */
        CHECK_VAL(line(out, 12, l, sizeof(l)), "rc", CUDA_OOM);
}

/* For one family: fill to the limit less R, then R + 1 byte fails (nothing
 * charged, the driver not asked), R works, one more byte fails, free
 * refunds all.  R = 4 MiB, as each family takes it. */
static void boundary(const char *family, const char *exact, const char *plus_one)
{
        static char out[8192];
        char l[512];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", NULL };
        char over_by_one[64], exactly[64], one_more[64];
        snprintf(exactly, sizeof(exactly), "alloc:%s:%s", family, exact);
        snprintf(over_by_one, sizeof(over_by_one), "alloc:%s:%s", family, plus_one);
        snprintf(one_more, sizeof(one_more), "alloc:%s:%s", family, !strcmp(family, "pitch") ? "1:1" : "1");
        const char *args[] = { "init",      "ctx:0",  "alloc:plain:62914560",
                               over_by_one, exactly,  one_more,
                               "info",      "used:0", "free",
                               "free",      "used:0", NULL };

        fresh_region();
        run(env, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "charged", 60 * MIB);
        line(out, 3, l, sizeof(l));
        if (val(l, "rc") != CUDA_OOM || val(l, "charged") != 0 || val(l, "fake") != 0)
                test_fail(__FILE__, __LINE__, "%s: one byte past the limit must fail, uncharged: %s", family, l);
        line(out, 4, l, sizeof(l));
        if (val(l, "rc") != 0 || val(l, "charged") != 4 * MIB || val(l, "fake") != 4 * MIB)
                test_fail(__FILE__, __LINE__, "%s: exactly the rest must work and be charged: %s", family, l);
        line(out, 5, l, sizeof(l));
        if (val(l, "rc") != CUDA_OOM || val(l, "charged") != 0 || val(l, "fake") != 0)
                test_fail(__FILE__, __LINE__, "%s: at the limit one more byte must fail: %s", family, l);
        CHECK_VAL(line(out, 6, l, sizeof(l)), "free", 0);
        CHECK_VAL(l, "total", 64 * MIB);
        CHECK_VAL(line(out, 7, l, sizeof(l)), "region", 64 * MIB);
        line(out, 8, l, sizeof(l));
        if (val(l, "rc") != 0 || val(l, "charged") != -4 * MIB || val(l, "fake") != -4 * MIB)
                test_fail(__FILE__, __LINE__, "%s: its free must refund what it charged: %s", family, l);
        CHECK_VAL(line(out, 9, l, sizeof(l)), "charged", -60 * MIB);
        CHECK_VAL(line(out, 10, l, sizeof(l)), "region", 0);
        CHECK_VAL(l, "here", 0);
}

static void test_oom_boundary_every_family(void)
{
        boundary("plain", "4194304", "4194305");
        boundary("managed", "4194304", "4194305");
        boundary("pitch", "4096:1024", "4097:1024"); /* rows of 4097 bytes take 4608 */
        boundary("async", "4194304", "4194305");
        boundary("async_ptsz", "4194304", "4194305");
        boundary("pool", "4194304", "4194305");
        boundary("pool_ptsz", "4194304", "4194305");
        boundary("create", "4194304", "4194305");
        boundary("array", "4096:1024", "4097:1024");
        boundary("array3d", "4096:1024", "4097:1024");
        boundary("mipmap", "4096:1024", "4097:1024");
}

/* Mipmapped arrays: every level is charged, what the driver allocates or more. */
static void test_mipmap_levels_charged(void)
{
        static char out[8192];
        char l[512];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", NULL };
        const char *args[] = { "init",
                               "ctx:0",
                               "alloc:mipmap:4096:0:13",
                               "alloc:mipmap:1024:1024:11",
                               "alloc:mipmap:64:64:7",
                               "freeall",
                               "used:0",
                               NULL };
        fresh_region();
        run(env, args, out, sizeof(out));
        for (int k = 2; k <= 4; k++) {
                line(out, k, l, sizeof(l));
                if (val(l, "rc") != 0 || val(l, "charged") < val(l, "fake") || val(l, "fake") <= 0)
                        test_fail(__FILE__, __LINE__, "a mipmapped array must be charged all its levels: %s", l);
        }
        CHECK_VAL(line(out, 8, l, sizeof(l)), "region", 0);
}

/* ---- what the device reports ---- */

static void test_info_calls_agree(void)
{
        static char out[8192];
        char l[512];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT_0=256m", NULL };
        const char *holder[] = { "init", "ctx:0", "alloc:plain:41943040", "hold", NULL };
        const char *args[] = { "init",   "ctx:0",   "alloc:plain:104857600",
                               "info",   "total:0", "nvml:0",
                               "ctx:1",  "info",    "total:1",
                               "nvml:1", NULL };
        int fd;

        fresh_region();
        /* another process of the container holds 40 MiB */
        pid_t other = spawn(env, holder, &fd);
        FILE *f = fdopen(fd, "r");
        while (f && fgets(l, sizeof(l), f) && strncmp(l, "hold", 4) != 0)
                ;
        run(env, args, out, sizeof(out));
        kill(other, SIGKILL);
        waitpid(other, NULL, 0);
        if (f)
                fclose(f);
        const long long used = 140 * MIB, limit = 256 * MIB;
        CHECK_VAL(line(out, 3, l, sizeof(l)), "total", limit);
        CHECK_VAL(l, "free", limit - used);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "total", limit);
        line(out, 5, l, sizeof(l));
        CHECK_VAL(l, "rc", 0);
        CHECK_VAL(l, "total", limit);
        CHECK_VAL(l, "used", used);
        CHECK_VAL(l, "free", limit - used);
        CHECK_VAL(l, "rc2", 0);
        CHECK_VAL(l, "total2", limit);
        CHECK_VAL(l, "used2", used);
        CHECK_VAL(l, "free2", limit - used);
        /* device 1 has no limit: the driver's own numbers */
        CHECK_VAL(line(out, 7, l, sizeof(l)), "total", FAKE_MEMORY);
        CHECK_VAL(l, "free", FAKE_MEMORY);
        CHECK_VAL(line(out, 8, l, sizeof(l)), "total", FAKE_MEMORY);
        CHECK_VAL(line(out, 9, l, sizeof(l)), "total", FAKE_MEMORY);
        CHECK_VAL(l, "total2", FAKE_MEMORY);
}

/* ---- environment ---- */

static void test_no_limit_passes_through(void)
{
        static char out[8192];
        char l[512];
        const char *args[] = { "init",
                               "ctx:0",
                               "alloc:plain:536870912",
                               "info",
                               "total:0",
                               "nvml:0",
                               "route:direct:cuMemAlloc_v2",
                               "route:procaddr_v2:cuMemAlloc:12000:0",
                               "route:direct:cuLaunchKernel",
                               "used:0",
                               NULL };

        fresh_region();
        run(NULL, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", 0);
        CHECK_VAL(l, "fake", 512 * MIB);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "total", FAKE_MEMORY);
        CHECK_VAL(l, "free", FAKE_MEMORY - 512 * MIB);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "total", FAKE_MEMORY);
        CHECK_VAL(line(out, 5, l, sizeof(l)), "total", FAKE_MEMORY);
        CHECK_VAL(l, "used", 512 * MIB);
        for (int k = 6; k <= 8; k++) {
                line(out, k, l, sizeof(l));
                CHECK_VAL(l, "rc", 0);
                CHECK_VAL(l, "charged", 0);
                CHECK_VAL(l, "limiter", 0);
                CHECK(reached(l, k == 8 ? "cuLaunchKernel" : "cuMemAlloc_v2"));
        }
        CHECK_VAL(line(out, 9, l, sizeof(l)), "region", -1); /* no region was made */
        CHECK(access(region_path, F_OK) < 0);
}

static void test_env_limit_for_all_devices_and_one(void)
{
        static char out[8192];
        char l[512];
        const char *all[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", NULL };
        const char *one[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", "CUDA_DEVICE_MEMORY_LIMIT_1=16M", NULL };
        const char *args[] = { "init", "ctx:0", "info", "ctx:1", "info", NULL };

        fresh_region();
        run(all, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "total", 64 * MIB);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "total", 64 * MIB);
        fresh_region();
        run(one, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "total", 64 * MIB);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "total", 16 * MIB);
}

static void test_env_sm_limit_per_device(void)
{
        static char out[8192];
        char l[1024];
        const char *env[] = { "CUDA_DEVICE_SM_LIMIT_1=50", NULL };
        const char *args[] = { "init",
                               "ctx:0",
                               "route:direct:cuLaunchKernel",
                               "ctx:1",
                               "route:direct:cuLaunchKernel",
                               "route:direct:cuLaunchKernel",
                               "alloc:plain:1048576",
                               NULL };

        fresh_region();
        run(env, args, out, sizeof(out));
        line(out, 2, l, sizeof(l));
        CHECK(val(l, "rc") == 0 && val(l, "limiter") == 0 && reached(l, "cuLaunchKernel"));
        line(out, 4, l, sizeof(l));
        CHECK(val(l, "rc") == 0 && val(l, "limiter") == 1 && reached(l, "cuLaunchKernel"));
        line(out, 5, l, sizeof(l));
        CHECK(val(l, "rc") == 0 && val(l, "limiter") == 1 && reached(l, "cuLaunchKernel"));
        /* an SM limit alone limits no memory */
        CHECK_VAL(line(out, 6, l, sizeof(l)), "rc", 0);
        CHECK_VAL(l, "charged", 1 * MIB);
}

static void test_env_real_libraries(void)
{
        static char out[8192];
        char l[1024], dir[256], link_path[300], e_path[320];
        const char *missing[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", "TESSERA_FGPU_REAL_LIBCUDA=/nonexistent/libcuda.so.1",
                                  "TESSERA_FGPU_REAL_LIBNVML=/nonexistent/libnvidia-ml.so.1", NULL };
        const char *args[] = { "init", "ctx:0", "alloc:plain:4096", "info", "nvml:0", "used:0", NULL };

        /* missing: the wrappers fail, the driver's functions are never called through a NULL */
        fresh_region();
        run(missing, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", CUDA_NOT_FND);
        CHECK_VAL(l, "fake", 0);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "rc", CUDA_NOT_FND);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "rc", 13); /* NVML_ERROR_FUNCTION_NOT_FOUND */
        CHECK_VAL(line(out, 5, l, sizeof(l)), "region", 0);

        /* unset: libcuda.so.1 and libnvidia-ml.so.1 found by the usual search */
        snprintf(dir, sizeof(dir), "%s/libs", tmpdir);
        mkdir(dir, 0755);
        snprintf(link_path, sizeof(link_path), "%s/libcuda.so.1", dir);
        unlink(link_path);
        CHECK(symlink(fake_cuda, link_path) == 0);
        snprintf(link_path, sizeof(link_path), "%s/libnvidia-ml.so.1", dir);
        unlink(link_path);
        CHECK(symlink(fake_nvml, link_path) == 0);
        snprintf(e_path, sizeof(e_path), "LD_LIBRARY_PATH=%s", dir);
        const char *search[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m",
                                 "TESSERA_FGPU_REAL_LIBCUDA=", "TESSERA_FGPU_REAL_LIBNVML=", e_path, NULL };
        fresh_region();
        run(search, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", 0);
        CHECK_VAL(l, "charged", 4096);
        CHECK_VAL(l, "fake", 4096);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "total", 64 * MIB);
        CHECK_VAL(line(out, 4, l, sizeof(l)), "total", 64 * MIB);
}

static void test_env_region_is_the_shared_budget(void)
{
        static char out[8192];
        char l[512], first_region[256], e_region[400];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", NULL };
        const char *holder[] = { "init", "ctx:0", "alloc:plain:50331648", "hold", NULL };
        const char *args[] = { "init", "ctx:0", "alloc:plain:33554432", NULL };
        int fd;

        fresh_region();
        snprintf(first_region, sizeof(first_region), "%s", region_path);
        pid_t other = spawn(env, holder, &fd);
        FILE *f = fdopen(fd, "r");
        while (f && fgets(l, sizeof(l), f) && strncmp(l, "hold", 4) != 0)
                ;
        CHECK(access(first_region, F_OK) == 0); /* made where TESSERA_FGPU_REGION says */
        run(env, args, out, sizeof(out));       /* same region: 48 + 32 > 64 */
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", CUDA_OOM);
        snprintf(region_path, sizeof(region_path), "%s/region.other", tmpdir);
        unlink(region_path);
        run(env, args, out, sizeof(out)); /* another region: another budget */
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", 0);
        unlink(region_path);
        snprintf(region_path, sizeof(region_path), "%s", first_region);
        kill(other, SIGKILL);
        waitpid(other, NULL, 0);
        if (f)
                fclose(f);

        /* the config file's region, even when the environment names another */
        char conf[256], text[300];
        snprintf(conf, sizeof(conf), "%s/fgpu.conf", tmpdir);
        fresh_region();
        snprintf(text, sizeof(text), "memory_limit = 64m\nregion = %s\n", region_path);
        FILE *c = fopen(conf, "w");
        if (c) {
                fputs(text, c);
                fclose(c);
        }
        char e_other[300], other_region[256];
        snprintf(other_region, sizeof(other_region), "%s/region.env", tmpdir);
        unlink(other_region);
        snprintf(e_region, sizeof(e_region), "TESSERA_FGPU_CONFIG=%s", conf);
        snprintf(e_other, sizeof(e_other), "TESSERA_FGPU_REGION=%s", other_region);
        const char *from_file[] = { e_region, e_other, NULL };
        run(from_file, args, out, sizeof(out));
        CHECK(access(region_path, F_OK) == 0);
        CHECK(access(other_region, F_OK) < 0);
        unlink(conf);
}

/* Write the config file; the environment entry naming it, in e. */
static void config_file(const char *text, char *e, size_t len)
{
        char conf[256];
        snprintf(conf, sizeof(conf), "%s/fgpu.conf", tmpdir);
        FILE *c = fopen(conf, "w");
        if (c) {
                fputs(text, c);
                fclose(c);
        }
        snprintf(e, len, "TESSERA_FGPU_CONFIG=%s", conf);
}

static void test_config_file_beats_env(void)
{
        static char out[8192];
        char l[512], e[300];
        const char *args[] = { "init", "ctx:0", "info", "alloc:plain:34603008", "alloc:plain:33554432", NULL };

        config_file("# the agent's\nmemory_limit_0 = 32m\n", e, sizeof(e));
        const char *env[] = { e, "CUDA_DEVICE_MEMORY_LIMIT=1g", NULL };
        fresh_region();
        run(env, args, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "total", 32 * MIB);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "rc", CUDA_OOM); /* 33 MiB: the user's 1g does not count */
        CHECK_VAL(line(out, 4, l, sizeof(l)), "rc", 0);
}

/* Closed: every allocation fails, nothing reaches the driver, no memory
 * is reported free (CUDA and NVML), no kernel is launched. */
static void check_closed(const char *const *env, const char *what)
{
        static char out[8192];
        char l[512];
        const char *args[] = { "init", "ctx:0", "alloc:plain:1", "alloc:managed:1", "alloc:create:2097152", "info",
                               "nvml:0", "route:direct:cuLaunchKernel", NULL };
        fresh_region();
        run(env, args, out, sizeof(out));
        for (int k = 2; k <= 4; k++) {
                line(out, k, l, sizeof(l));
                if (val(l, "rc") != CUDA_OOM || val(l, "fake") != 0)
                        test_fail(__FILE__, __LINE__, "%s: allocation must fail closed: %s", what, l);
        }
        CHECK_VAL(line(out, 5, l, sizeof(l)), "free", 0);
        line(out, 6, l, sizeof(l));
        if (val(l, "free") != 0 || val(l, "free2") != 0)
                test_fail(__FILE__, __LINE__, "%s: NVML must show nothing free: %s", what, l);
        line(out, 7, l, sizeof(l));
        if (val(l, "rc") != CUDA_NOT_PERMITTED || strstr(l, "cuLaunchKernel,"))
                test_fail(__FILE__, __LINE__, "%s: a launch must be refused before the driver: %s", what, l);
}

/* Silent unless TESSERA_FGPU_LOG is set; then a refusal says why. */
static void test_log_only_when_asked(void)
{
        static char out[8192];
        const char *quiet[] = { "CUDA_DEVICE_MEMORY_LIMIT=1m", NULL };
        const char *loud[] = { "CUDA_DEVICE_MEMORY_LIMIT=1m", "TESSERA_FGPU_LOG=1", NULL };
        const char *args[] = { "init", "ctx:0", "alloc:plain:2097152", NULL };

        fresh_region();
        run(quiet, args, out, sizeof(out)); /* stdout and stderr: only the client's own lines */
        CHECK(strstr(out, "tessera-fgpu") == NULL);
        CHECK(strncmp(out, "init rc=0\nctx rc=0\nalloc rc=2", 29) == 0);
        fresh_region();
        run(loud, args, out, sizeof(out));
        CHECK(strstr(out, "tessera-fgpu[") != NULL);
        CHECK(strstr(out, "2097152 bytes refused") != NULL);
}

static void test_bad_config_fails_closed(void)
{
        char e[300];
        const char *bad_env[] = { "CUDA_DEVICE_MEMORY_LIMIT=lots", NULL };
        const char *bad_sm[] = { "CUDA_DEVICE_SM_LIMIT=150", NULL };
        const char *zero[] = { "CUDA_DEVICE_MEMORY_LIMIT_0=0", NULL };
        check_closed(bad_env, "CUDA_DEVICE_MEMORY_LIMIT=lots");
        check_closed(bad_sm, "CUDA_DEVICE_SM_LIMIT=150");
        check_closed(zero, "CUDA_DEVICE_MEMORY_LIMIT_0=0");
        config_file("memory_limit = 64m\nmemory_limt_1 = 1g\n", e, sizeof(e));
        const char *typo[] = { e, "CUDA_DEVICE_MEMORY_LIMIT=1g", NULL };
        check_closed(typo, "a config file with an unknown key");
        char dir_conf[300];
        snprintf(dir_conf, sizeof(dir_conf), "TESSERA_FGPU_CONFIG=%s", tmpdir); /* not a regular file */
        const char *not_file[] = { dir_conf, NULL };
        check_closed(not_file, "a config path that is a directory");

        /* no shared budget to charge: a region that cannot be made, or a file that is not one */
        char e_noregion[300], e_junk[300], junk[256];
        snprintf(e_noregion, sizeof(e_noregion), "TESSERA_FGPU_REGION=%s/no/such/dir/region", tmpdir);
        const char *no_region[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", e_noregion, NULL };
        check_closed(no_region, "a region that cannot be created");
        snprintf(junk, sizeof(junk), "%s/region.junk", tmpdir);
        FILE *j = fopen(junk, "w");
        for (int i = 0; j && i < 1000; i++)
                fputc((i * 7919) & 0xff, j);
        if (j)
                fclose(j);
        snprintf(e_junk, sizeof(e_junk), "TESSERA_FGPU_REGION=%s", junk);
        const char *junk_region[] = { "CUDA_DEVICE_SM_LIMIT=50", e_junk, NULL };
        check_closed(junk_region, "a region file that is not a region (SM limit only)");
        unlink(junk);
}

/* ---- processes ---- */

static void test_eight_processes_one_budget(void)
{
        static char out[8][4096];
        char l[512], e_state[200], stress[64];
        const long long limit = 64 * MIB;
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", e_state, NULL };
        const char *args[] = { "init", "ctx:0", stress, "used:0", NULL };
        pid_t pids[8];
        int fds[8];

        fresh_region();
        snprintf(e_state, sizeof(e_state), "TESSERA_FAKE_CUDA_STATE=%s/fake-state.%d", tmpdir, nregion);
        snprintf(stress, sizeof(stress), "stress:3000:%lld:%lld", 8 * MIB, limit);
        for (int k = 0; k < 8; k++)
                pids[k] = spawn(env, args, &fds[k]);
        for (int k = 0; k < 8; k++) {
                slurp(fds[k], out[k], sizeof(out[k]));
                waitpid(pids[k], NULL, 0);
        }
        long long ok = 0, oom = 0;
        for (int k = 0; k < 8; k++) {
                line(out[k], 2, l, sizeof(l));
                CHECK_VAL(l, "rc", 0);
                CHECK_VAL(l, "errors", 0);
                CHECK_VAL(l, "over", 0);
                if (val(l, "max_region") > limit || val(l, "max_device") > limit)
                        test_fail(__FILE__, __LINE__, "process %d saw more than the limit held: %s", k, l);
                ok += val(l, "ok");
                oom += val(l, "oom");
        }
        CHECK(ok > 0);
        CHECK(oom > 0); /* they did compete */
        /* all freed: nothing charged, the device empty */
        struct fgpu_region *r = NULL;
        char err[256];
        CHECK(fgpu_region_open(region_path, false, &r, err, sizeof(err)) == 0);
        if (r) {
                CHECK(fgpu_region_used(r, 0) == 0);
                fgpu_region_close(r);
        }
        /* the fake driver's memory of device 0, for all processes (fake_common.c's state file) */
        uint64_t device_used[2] = { 1, 1 };
        FILE *st = fopen(e_state + strlen("TESSERA_FAKE_CUDA_STATE="), "r");
        CHECK(st && fread(device_used, sizeof(device_used), 1, st) == 1);
        if (st)
                fclose(st);
        CHECK(device_used[0] == 0);
        unlink(e_state + strlen("TESSERA_FAKE_CUDA_STATE="));
}

static void test_kill9_returns_the_charge(void)
{
        static char out[8192];
        char l[512];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", NULL };
        const char *holder[] = { "init", "ctx:0", "alloc:plain:67108864", "hold", NULL };
        const char *one[] = { "init", "ctx:0", "alloc:plain:1", NULL };
        const char *all[] = { "init", "ctx:0", "alloc:plain:67108864", "used:0", NULL };
        const char *look[] = { "init", "ctx:0", "info", "nvml:0", NULL };
        int fd;

        fresh_region();
        pid_t other = spawn(env, holder, &fd);
        FILE *f = fdopen(fd, "r");
        char got[512] = "";
        while (f && fgets(l, sizeof(l), f) && strncmp(l, "hold", 4) != 0)
                snprintf(got, sizeof(got), "%s", l);
        CHECK(strstr(got, "rc=0") != NULL);
        run(env, one, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", CUDA_OOM); /* the holder has it all */
        kill(other, SIGKILL);
        waitpid(other, NULL, 0);
        if (f)
                fclose(f);
        run(env, look, out, sizeof(out)); /* the dead one's 64 MiB are free again, to every view */
        CHECK_VAL(line(out, 2, l, sizeof(l)), "free", 64 * MIB);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "used", 0);
        CHECK_VAL(l, "free", 64 * MIB);
        run(env, all, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", 0);
        CHECK_VAL(l, "fake", 64 * MIB);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "region", 64 * MIB);
}

/* A process that ends without freeing, or execs a new program, leaves
 * nothing charged: the next process, or the new image, sees the whole
 * limit free and can allocate it. */
static void test_exit_and_exec_return_the_charge(void)
{
        static char out[8192];
        char l[512];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=64m", NULL };
        const char *leaver[] = { "init", "ctx:0", "alloc:plain:41943040", NULL };
        const char *look[] = { "init", "ctx:0", "info", "nvml:0", NULL };
        const char *execer[] = { "init", "ctx:0", "alloc:plain:41943040", "exec",
                                 "init", "ctx:0", "info", "alloc:plain:41943040", NULL };

        fresh_region();
        run(env, leaver, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", 0);
        run(env, look, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "free", 64 * MIB);
        CHECK_VAL(line(out, 3, l, sizeof(l)), "used", 0);

        fresh_region();
        run(env, execer, out, sizeof(out));
        CHECK_VAL(line(out, 2, l, sizeof(l)), "rc", 0);
        CHECK_VAL(line(out, 6, l, sizeof(l)), "free", 64 * MIB); /* the new image: 40 MiB not held */
        CHECK_VAL(line(out, 7, l, sizeof(l)), "rc", 0);
}

/* ---- threads ---- */

static void check_threads(const char *out, const char *what)
{
        char l[512];
        line(out, 1, l, sizeof(l));
        if (val(l, "rc") != 0 || val(l, "errors") != 0 || val(l, "ok") <= 0 || val(l, "left") != 0 ||
            val(l, "fake_left") != 0 || val(l, "max_region") > 16 * MIB)
                test_fail(__FILE__, __LINE__, "%s: %s", what, l);
}

static void test_threads_in_one_process(void)
{
        static char out[8192];
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=16m", NULL };
        const char *args[] = { "init", "threads:8:3000", NULL };
        fresh_region();
        run(env, args, out, sizeof(out));
        check_threads(out, "8 threads");
}

static void test_threads_under_thread_sanitizer(void)
{
        static char out[1 << 16];
        char tsan_hook[PATH_MAX + 64], tsan_client[PATH_MAX + 64], e_preload[2 * PATH_MAX + 200], head[512] = "";
        snprintf(tsan_hook, sizeof(tsan_hook), "%s/tests/fgpu-tsan/libtessera-fgpu.so", build);
        snprintf(tsan_client, sizeof(tsan_client), "%s/tests/fgpu-tsan/fgpu_client", build);
        FILE *f = fopen(tsan_hook, "r");
        if (f) {
                size_t n = fread(head, 1, sizeof(head) - 1, f);
                head[n] = '\0';
                fclose(f);
        }
        if (memcmp(head, "\177ELF", 4) != 0)
                SKIP(head[0] ? head : "the ThreadSanitizer build of the hook is missing");
        char libtsan[PATH_MAX] = "", path_file[PATH_MAX + 64];
        snprintf(path_file, sizeof(path_file), "%s/tests/fgpu-tsan/libtsan.path", build);
        f = fopen(path_file, "r");
        if (!f || !fgets(libtsan, sizeof(libtsan), f) || !strchr(libtsan, '/')) {
                if (f)
                        fclose(f);
                SKIP("the ThreadSanitizer runtime's path is unknown (libtsan.path)");
        }
        fclose(f);
        libtsan[strcspn(libtsan, "\n")] = '\0';
        snprintf(e_preload, sizeof(e_preload), "LD_PRELOAD=%s %s", libtsan, tsan_hook);
        const char *env[] = { "CUDA_DEVICE_MEMORY_LIMIT=16m", e_preload,
                              "TSAN_OPTIONS=halt_on_error=1 exitcode=66 report_signal_unsafe=0", NULL };
        const char *args[] = { "init", "threads:8:1500", NULL };
        char saved[PATH_MAX + 64];
        snprintf(saved, sizeof(saved), "%s", client);
        snprintf(client, sizeof(client), "%s", tsan_client);
        fresh_region();
        int fd, status;
        pid_t pid = spawn(env, args, &fd);
        slurp(fd, out, sizeof(out));
        waitpid(pid, &status, 0);
        snprintf(client, sizeof(client), "%s", saved);
        if (strstr(out, "FATAL: ThreadSanitizer") || strstr(out, "unexpected memory mapping")) {
                fprintf(stdout, "# %.300s\n", out);
                SKIP("ThreadSanitizer cannot run here (see above: ASLR / vm.mmap_rnd_bits?)");
        }
        if (strstr(out, "WARNING: ThreadSanitizer") || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                test_fail(__FILE__, __LINE__, "ThreadSanitizer (status %d):\n%.6000s", status, out);
        check_threads(strstr(out, "init rc=") ? strstr(out, "init rc=") : out, "8 threads under tsan");
}

/* ---- launches ---- */

static void test_launch_with_sm_limit_reaches_driver(void)
{
        static char out[8192];
        char l[1024];
        const char *env[] = { "CUDA_DEVICE_SM_LIMIT=30", NULL };
        const char *args[] = { "init",
                               "ctx:0",
                               "route:direct:cuLaunchKernel",
                               "route:direct:cuLaunchKernel",
                               "route:procaddr_v2:cuLaunchKernel:12080:2",
                               "route:direct:cuGraphLaunch",
                               NULL };
        fresh_region();
        run(env, args, out, sizeof(out));
        for (int k = 2; k <= 5; k++) {
                line(out, k, l, sizeof(l));
                if (val(l, "rc") != 0 || val(l, "limiter") != 1 ||
                    !reached(l, k == 4   ? "cuLaunchKernel_ptsz"
                                : k == 5 ? "cuGraphLaunch"
                                         : "cuLaunchKernel"))
                        test_fail(__FILE__, __LINE__, "a launch through the limiter to the driver expected: %s", l);
        }
}

static void setup(void)
{
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(exe, '/'); /* .../BUILD/tests/test_fgpu_hook */
        if (slash)
                *slash = '\0';
        slash = strrchr(exe, '/');
        if (slash)
                *slash = '\0';
        snprintf(build, sizeof(build), "%s", exe);
        snprintf(client, sizeof(client), "%s/tests/fgpu_client", build);
        snprintf(hook, sizeof(hook), "%s/libtessera-fgpu.so", build);
        snprintf(fake_cuda, sizeof(fake_cuda), "%s/libtessera-fake-cuda.so", build);
        snprintf(fake_nvml, sizeof(fake_nvml), "%s/libtessera-fake-nvml.so", build);
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/tessera-fgpu-hook.XXXXXX");
        if (!mkdtemp(tmpdir))
                snprintf(tmpdir, sizeof(tmpdir), "/tmp");
}

static void cleanup(void)
{
        char cmd[300];
        if (strncmp(tmpdir, "/tmp/tessera-fgpu-hook.", 23) == 0) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
                if (system(cmd) != 0)
                        return;
        }
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_abi_matches_nvidia_cuda_h),
                TEST(test_exports_only_the_wrappers),
                TEST(test_routing_direct_link),
                TEST(test_routing_dlopen_dlsym),
                TEST(test_routing_cuGetProcAddress),
                TEST(test_routing_cuGetProcAddress_v2),
                TEST(test_limits_per_device),
                TEST(test_oom_boundary_every_family),
                TEST(test_mipmap_levels_charged),
                TEST(test_info_calls_agree),
                TEST(test_no_limit_passes_through),
                TEST(test_env_limit_for_all_devices_and_one),
                TEST(test_env_sm_limit_per_device),
                TEST(test_env_real_libraries),
                TEST(test_env_region_is_the_shared_budget),
                TEST(test_config_file_beats_env),
                TEST(test_bad_config_fails_closed),
                TEST(test_log_only_when_asked),
                TEST(test_eight_processes_one_budget),
                TEST(test_kill9_returns_the_charge),
                TEST(test_exit_and_exec_return_the_charge),
                TEST(test_threads_in_one_process),
                TEST(test_threads_under_thread_sanitizer),
                TEST(test_launch_with_sm_limit_reaches_driver),
                { 0 },
        };
        setup();
        if (access(client, X_OK) < 0 || access(hook, R_OK) < 0 || access(fake_cuda, R_OK) < 0) {
                printf("# skipped: build %s, the hook and the fake driver first\n", client);
                return TEST_SKIP;
        }
        int r = test_main(tests);
        cleanup();
        return r;
}
