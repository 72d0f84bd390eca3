/* alloc.c - what each kernel holds of this node's devices: its cores and
 * its GPUs, whole or in fractions.  One file per kernel,
 * state_dir/alloc/<kernel>.json = {"cores": [3, 4], "gpus": [{"index": 0,
 * "share": 50}]}, so a restarted agent rebuilds the maps from its own
 * files; a kernel whose start is retried after a restart keeps what it had.
 *
 * Cores: the ceil(c) least used offered cores (cores may be shared: the CFS
 * quota is the real limit).  GPUs are never overcommitted: `share` is in
 * the GPU slot's quanta (cuda.shares: 1/100 fGPU, a GPU holding
 * fgpu_per_gpu × 100; cuda.device: 1 per GPU).  A request takes as many
 * whole free GPUs as it needs, and its remainder from the GPU with the
 * least room that still fits it (packing fractions together keeps whole
 * GPUs free for whole-GPU requests). */
#include "common/compat.h"

#include <dirent.h>
#include <pthread.h>

#include "common/fs.h"
#include "agent/alloc.h"
#include "agent/gpu.h"

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static char *alloc_path(const struct agent_ctx *ctx, const char *id)
{
        return xasprintf("%s/alloc/%s.json", ctx->conf->state_dir, id);
}

/* Cores and GPU shares in use, from every kernel's file (lock held). */
static void usage(const struct agent_ctx *ctx, int *cores_used, int64_t *gpu_used)
{
        _cleanup_free_ char *dir = xasprintf("%s/alloc", ctx->conf->state_dir);
        const struct agent_devices *dev = ctx->devices;
        DIR *d = opendir(dir);

        memset(cores_used, 0, sizeof(*cores_used) * (size_t)dev->ncores);
        memset(gpu_used, 0, sizeof(*gpu_used) * dev->ngpu);
        if (!d)
                return;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name);
                json_t *rec = json_load_file(path, 0, NULL), *x;
                size_t i;
                json_array_foreach(json_object_get(rec, "cores"), i, x) {
                        for (int k = 0; k < dev->ncores; k++)
                                if (dev->cores[k] == json_integer_value(x))
                                        cores_used[k]++;
                }
                json_array_foreach(json_object_get(rec, "gpus"), i, x) {
                        json_int_t g = json_integer_value(json_object_get(x, "index"));
                        if (g >= 0 && (size_t)g < dev->ngpu)
                                gpu_used[g] += json_integer_value(json_object_get(x, "share"));
                }
                json_decref(rec);
        }
        closedir(d);
}

static void pick_cores(const struct agent_ctx *ctx, int *used, int want, struct kernel_alloc *ret)
{
        for (int i = 0; i < want; i++) {
                int best = -1;
                for (int k = 0; k < ctx->devices->ncores; k++)
                        if (used[k] >= 0 && (best < 0 || used[k] < used[best]))
                                best = k;
                ret->cores[ret->ncores++] = ctx->devices->cores[best];
                used[best] = -1; /* not twice for one kernel */
        }
}

static int pick_gpus(const struct agent_ctx *ctx, const int64_t *used, int64_t want, int64_t per_gpu,
                     struct kernel_alloc *ret, struct tess_error **err)
{
        size_t n = ctx->devices->ngpu;
        int64_t left = want;

        for (size_t g = 0; g < n && left >= per_gpu; g++) {
                if (used[g] == 0 && ret->ngpus < ALLOC_GPUS_MAX) {
                        ret->gpus[ret->ngpus++] = (struct gpu_share){ .index = (int)g, .share = per_gpu };
                        left -= per_gpu;
                }
        }
        if (left > 0 && left < per_gpu) {
                int best = -1;
                for (size_t g = 0; g < n; g++) {
                        bool taken = false;
                        for (int i = 0; i < ret->ngpus; i++)
                                taken = taken || ret->gpus[i].index == (int)g;
                        if (!taken && per_gpu - used[g] >= left &&
                            (best < 0 || per_gpu - used[g] < per_gpu - used[best]))
                                best = (int)g;
                }
                if (best >= 0 && ret->ngpus < ALLOC_GPUS_MAX) {
                        ret->gpus[ret->ngpus++] = (struct gpu_share){ .index = best, .share = left };
                        left = 0;
                }
        }
        if (left > 0)
                return tess_err(err, ENOSPC,
                                "the node's GPUs have no room for this request in the shape it asks "
                                "(free GPUs or a GPU with enough free share)");
        return 0;
}

static json_t *alloc_json(const struct kernel_alloc *a)
{
        json_t *cores = json_array(), *gpus = json_array();

        for (int i = 0; i < a->ncores; i++)
                json_array_append_new(cores, json_integer(a->cores[i]));
        for (int i = 0; i < a->ngpus; i++)
                json_array_append_new(gpus, json_pack("{s:i, s:I}", "index", a->gpus[i].index, "share",
                                                      (json_int_t)a->gpus[i].share));
        return json_pack("{s:o, s:o}", "cores", cores, "gpus", gpus);
}

static bool alloc_load(const char *path, struct kernel_alloc *a)
{
        json_t *rec = json_load_file(path, 0, NULL), *x;
        size_t i;

        *a = (struct kernel_alloc){ 0 };
        if (!rec)
                return false;
        json_array_foreach(json_object_get(rec, "cores"), i, x) {
                if (a->ncores < ALLOC_CORES_MAX)
                        a->cores[a->ncores++] = (int)json_integer_value(x);
        }
        json_array_foreach(json_object_get(rec, "gpus"), i, x) {
                if (a->ngpus < ALLOC_GPUS_MAX)
                        a->gpus[a->ngpus++] =
                                (struct gpu_share){ .index = (int)json_integer_value(json_object_get(x, "index")),
                                                    .share = json_integer_value(json_object_get(x, "share")) };
        }
        json_decref(rec);
        return true;
}

int alloc_kernel(const struct agent_ctx *ctx, const char *id, int want_cores, int64_t want_gpu,
                 struct kernel_alloc *ret, struct tess_error **err)
{
        const struct agent_devices *dev = ctx->devices;
        _cleanup_free_ char *path = alloc_path(ctx, id);
        _cleanup_free_ char *dir = xasprintf("%s/alloc", ctx->conf->state_dir);
        int cores_used[ALLOC_CORES_MAX];
        int64_t *gpu_used = xcalloc(dev->ngpu + 1, sizeof(*gpu_used));
        int r = 0;

        if (want_cores > dev->ncores)
                want_cores = dev->ncores;
        pthread_mutex_lock(&alloc_lock);
        if (alloc_load(path, ret)) /* a start interrupted by a restart: the same devices */
                goto out;
        usage(ctx, cores_used, gpu_used);
        pick_cores(ctx, cores_used, want_cores, ret);
        if (want_gpu > 0)
                r = pick_gpus(ctx, gpu_used, want_gpu, dev->gpu_per_device, ret, err);
        if (r >= 0)
                r = fs_mkdir_p(dir, 0700, err);
        if (r >= 0) {
                json_t *rec = alloc_json(ret);
                _cleanup_free_ char *text = json_dumps(rec, JSON_COMPACT);
                json_decref(rec);
                r = fs_write_file_atomic(path, text, strlen(text), 0600, err);
        }
out:
        pthread_mutex_unlock(&alloc_lock);
        free(gpu_used);
        return r;
}

void alloc_release(const struct agent_ctx *ctx, const char *id)
{
        _cleanup_free_ char *path = alloc_path(ctx, id);

        pthread_mutex_lock(&alloc_lock);
        unlink(path);
        pthread_mutex_unlock(&alloc_lock);
}
