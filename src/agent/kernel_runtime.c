/* kernel_runtime.c - one kernel's image and container: from the manager's
 * description of a kernel (POST /agent/sync) to a container_spec
 * (container.h), and back to an exit code.
 *
 * Image: the manager names it "name:tag" with the registry it was
 * registered from; the agent's store (image.h) is asked for
 * "registry/name:tag" (or "name:tag" without a registry, e.g. imported
 * with `tessera agent image import`) and pulls it when missing.
 *
 * Cores: a kernel asking c cores (fractions round up) gets the ceil(c)
 * least used of the node's offered cores as its cpuset, and c as its CFS
 * quota.  The choice is kept in state_dir/alloc/<kernel>.json, so that a
 * restarted agent rebuilds the map of used cores from its own files.
 *
 * The container runs the runner (src/runner) as process 1: interactive
 * sessions stay up until stopped; batch sessions run the startup command
 * and end with its exit code. */
#include "../common/compat.h"

#include <dirent.h>
#include <libgen.h>
#include <pthread.h>

#include "../common/buf.h"
#include "../common/fs.h"
#include "../common/log.h"
#include "../common/slots.h"
#include "../common/timeutil.h"
#include "container.h"
#include "image.h"
#include "kernel_runtime.h"
#include "registry.h"

#define STOP_GRACE_USEC (10 * USEC_PER_SEC)

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t monitor_once = PTHREAD_ONCE_INIT;
static char monitor_exe[4096]; /* "": `tessera _monitor` (/proc/self/exe) */

/* tessera-monitor beside tessera, a program much quicker to start than
 * tessera itself (src/monitor_main.c); else tessera's own `_monitor`. */
static void find_monitor(void)
{
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        if (n <= 0)
                return;
        exe[n] = '\0';
        snprintf(monitor_exe, sizeof(monitor_exe), "%s/tessera-monitor", dirname(exe));
        if (access(monitor_exe, X_OK) < 0)
                monitor_exe[0] = '\0';
}

static struct container_config runtime_config(const struct agent_ctx *ctx)
{
        const struct agent_conf *c = ctx->conf;

        pthread_once(&monitor_once, find_monitor);
        return (struct container_config){
                .state_dir = c->state_dir,
                .runc = c->runc,
                .bridge = c->bridge,
                .bridge_cidr = c->bridge_cidr,
                .monitor_exe = monitor_exe[0] ? monitor_exe : NULL,
        };
}

static char *alloc_path(const struct agent_ctx *ctx, const char *id)
{
        return xasprintf("%s/alloc/%s.json", ctx->conf->state_dir, id);
}

/* How many kernels use each offered core, from the alloc files (lock held). */
static void core_usage(const struct agent_ctx *ctx, int *used, int ncores)
{
        _cleanup_free_ char *dir = xasprintf("%s/alloc", ctx->conf->state_dir);
        DIR *d = opendir(dir);

        memset(used, 0, sizeof(*used) * (size_t)ncores);
        if (!d)
                return;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name);
                json_t *rec = json_load_file(path, 0, NULL), *c;
                size_t i;
                json_array_foreach(json_object_get(rec, "cores"), i, c) {
                        for (int k = 0; k < ncores; k++)
                                if (ctx->devices->cores[k] == json_integer_value(c))
                                        used[k]++;
                }
                json_decref(rec);
        }
        closedir(d);
}

/* Choose `want` cores for kernel id and record them; returns how many. */
static int allocate_cores(const struct agent_ctx *ctx, const char *id, int want, int *cores,
                          struct tess_error **err)
{
        int n = ctx->devices->ncores, used[1024];
        _cleanup_free_ char *path = alloc_path(ctx, id);
        _cleanup_free_ char *dir = xasprintf("%s/alloc", ctx->conf->state_dir);

        if (want > n)
                want = n;
        pthread_mutex_lock(&alloc_lock);
        json_t *rec = json_load_file(path, 0, NULL); /* a start interrupted by a restart: same cores */
        if (json_array_size(json_object_get(rec, "cores")) == (size_t)want) {
                for (int i = 0; i < want; i++)
                        cores[i] = (int)json_integer_value(json_array_get(json_object_get(rec, "cores"), (size_t)i));
                json_decref(rec);
                pthread_mutex_unlock(&alloc_lock);
                return want;
        }
        json_decref(rec);
        core_usage(ctx, used, n);
        json_t *list = json_array();
        for (int i = 0; i < want; i++) {
                int best = -1;
                for (int k = 0; k < n; k++)
                        if (used[k] >= 0 && (best < 0 || used[k] < used[best]))
                                best = k;
                cores[i] = ctx->devices->cores[best];
                used[best] = -1; /* not twice for one kernel */
                json_array_append_new(list, json_integer(cores[i]));
        }
        rec = json_pack("{s:o}", "cores", list);
        _cleanup_free_ char *text = json_dumps(rec, JSON_COMPACT);
        json_decref(rec);
        int r = fs_mkdir_p(dir, 0700, err);
        if (r >= 0)
                r = fs_write_file_atomic(path, text, strlen(text), 0600, err);
        pthread_mutex_unlock(&alloc_lock);
        return r < 0 ? r : want;
}

static int64_t slot_of(const json_t *slots, const char *name)
{
        const json_t *v = json_object_get(slots, name);
        int64_t q = 0;
        if (v && slot_parse_value(name, v, &q, NULL) < 0)
                q = 0;
        return q;
}

/* The image's reference in the store, pulled if missing. */
static int ensure_image(struct agent_ctx *ctx, const json_t *spec, void (*progress)(void *, const char *),
                        void *data, struct image_info *ret, struct tess_error **err)
{
        const char *image = json_string_value(json_object_get(spec, "image"));
        const char *registry = json_string_value(json_object_get(spec, "registry"));

        if (!image)
                return tess_err(err, EINVAL, "the kernel names no image");
        _cleanup_free_ char *ref = registry && *registry ? xasprintf("%s/%s", registry, image) : xstrdup(image);
        int r = image_store_get(ctx->images, ref, ret, err);
        if (r != -ENOENT)
                return r;
        if (!registry || !*registry)
                return tess_err(err, ENOENT, "image '%s' is not on this agent and has no registry to pull from",
                                image);
        *err = tess_error_free(*err);
        progress(data, "pulling");
        r = registry_pull(ctx->images, ref, &(struct registry_opts){ 0 }, NULL, err);
        if (r < 0)
                return r;
        return image_store_get(ctx->images, ref, ret, err);
}

/* KEY=VALUE strings for the container: the image's, then Tessera's and
 * the Backend.AI names images expect, then the session's own. */
static char **kernel_env(const json_t *spec, const struct image_info *img, int ncores)
{
        size_t n = 0, cap = 32;
        char **env = xmalloc(cap * sizeof(*env));
        const char *key;
        json_t *v;

#define PUSH(...)                                                          \
        do {                                                               \
                if (n + 2 > cap)                                           \
                        env = xrealloc(env, (cap *= 2) * sizeof(*env)); \
                env[n++] = xasprintf(__VA_ARGS__);                         \
        } while (0)
        for (char **e = img->env; e && *e; e++)
                PUSH("%s", *e);
        PUSH("TESSERA_SESSION_ID=%s", json_string_value(json_object_get(spec, "session_id")));
        PUSH("TESSERA_SESSION_NAME=%s", json_string_value(json_object_get(spec, "session_name")));
        PUSH("TESSERA_KERNEL_ID=%s", json_string_value(json_object_get(spec, "id")));
        PUSH("BACKENDAI_SESSION_ID=%s", json_string_value(json_object_get(spec, "session_id")));
        PUSH("BACKENDAI_KERNEL_ID=%s", json_string_value(json_object_get(spec, "id")));
        PUSH("BACKENDAI_CLUSTER_ROLE=%s", json_string_value(json_object_get(spec, "cluster_role")));
        PUSH("BACKENDAI_CLUSTER_IDX=%lld", (long long)json_integer_value(json_object_get(spec, "cluster_idx")));
        PUSH("BACKENDAI_CLUSTER_HOST=%s", json_string_value(json_object_get(spec, "cluster_hostname")));
        PUSH("BACKENDAI_CLUSTER_SIZE=%lld", (long long)json_integer_value(json_object_get(spec, "cluster_size")));
        PUSH("HOME=/home/work");
        PUSH("LOGNAME=work");
        PUSH("USER=work");
        for (const char *const *var = (const char *const[]){ "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                              "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", NULL };
             *var; var++)
                PUSH("%s=%d", *var, ncores);
        const char *startup = json_string_value(json_object_get(spec, "startup_command"));
        if (startup)
                PUSH("TESSERA_STARTUP_COMMAND=%s", startup);
        json_object_foreach(json_object_get(spec, "environ"), key, v)
                if (json_is_string(v) && !strchr(key, '='))
                        PUSH("%s=%s", key, json_string_value(v));
#undef PUSH
        env[n] = NULL;
        return env;
}

static char *runner_path(const struct agent_ctx *ctx)
{
        char exe[4096];
        ssize_t n;

        if (ctx->conf->runner && *ctx->conf->runner)
                return xstrdup(ctx->conf->runner);
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return xstrdup("/usr/lib/tessera/tessera-runner");
        exe[n] = '\0';
        return xasprintf("%s/tessera-runner", dirname(exe));
}

int kernel_runtime_start(struct agent_ctx *ctx, const char *id, const json_t *spec,
                         void (*progress)(void *data, const char *kind), void *data, char *container_id, size_t len,
                         struct tess_error **err)
{
        struct container_config cfg = runtime_config(ctx);
        struct image_info img = { 0 };
        const json_t *slots = json_object_get(spec, "slots");
        bool batch = streq(json_string_value(json_object_get(spec, "session_type")), "batch");
        int cores[1024];
        int r;

        progress(data, "preparing");
        r = ensure_image(ctx, spec, progress, data, &img, err);
        if (r < 0)
                return r;
        progress(data, "creating");
        int64_t cpu = slot_of(slots, "cpu"); /* 1/1000 core */
        int want = (int)((cpu + 999) / 1000);
        r = allocate_cores(ctx, id, want > 0 ? want : 1, cores, err);
        if (r < 0) {
                image_info_free(&img);
                return r;
        }
        int ncores = r;
        char **env = kernel_env(spec, &img, ncores);
        _cleanup_free_ char *runner = runner_path(ctx);
        const char *const interactive_args[] = { CONTAINER_RUNNER_PATH, NULL };
        const char *const batch_args[] = { CONTAINER_RUNNER_PATH, "--batch", NULL };
        struct container_spec cs = {
                .id = id,
                .layers = (const char *const *)img.layer_dirs,
                .args = batch ? batch_args : interactive_args,
                .env = (const char *const *)env,
                .cwd = "/home/work",
                .hostname = json_string_value(json_object_get(spec, "cluster_hostname")),
                .cpu = cpu,
                .cores = cores,
                .n_cores = (size_t)ncores,
                .memory = slot_of(slots, "mem"),
                .runner_path = runner,
                .network = streq(ctx->conf->network, "none") ? CONTAINER_NET_NONE : CONTAINER_NET_BRIDGE,
        };
        r = container_create(&cfg, &cs, err);
        if (r == -EEXIST) { /* created before a restart: it is ours */
                *err = tess_error_free(*err);
                r = 0;
        }
        for (char **e = env; *e; e++)
                free(*e);
        free(env);
        image_info_free(&img);
        if (r < 0)
                return r;
        snprintf(container_id, len, "%s", id);
        return 0;
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
        size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;

        if (len == 0 || len > n || (len == 2 && p[0] < 0xc2))
                return 0;
        for (size_t i = 1; i < len; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return len;
}

/* The last KERNEL_LOG_TAIL bytes of the container's output, as UTF-8
 * (invalid bytes become U+FFFD) for the manager's JSON. */
static char *log_tail(const struct container_config *cfg, const char *id)
{
        struct buf raw = BUF_INIT, out = BUF_INIT;
        int64_t next;

        if (container_log_read(cfg, id, 0, SIZE_MAX / 2, &raw, &next, NULL) < 0) {
                buf_release(&raw);
                return NULL;
        }
        size_t start = raw.len > KERNEL_LOG_TAIL ? raw.len - KERNEL_LOG_TAIL : 0;
        const unsigned char *p = (const unsigned char *)raw.data;
        for (size_t i = start; i < raw.len;) {
                size_t len = utf8_seq(p + i, raw.len - i);
                if (len == 0) {
                        buf_puts(&out, "\xef\xbf\xbd");
                        i++;
                } else {
                        buf_append(&out, p + i, len);
                        i += len;
                }
        }
        buf_release(&raw);
        return buf_detach(&out, NULL);
}

static void exit_of(const struct container_config *cfg, const char *id, const struct container_state *st,
                    struct kernel_exit *ret)
{
        ret->code = st->exit_code;
        ret->oom = st->oom_killed;
        ret->log = log_tail(cfg, id);
}

int kernel_runtime_stop(struct agent_ctx *ctx, const char *id, struct kernel_exit *ret, struct tess_error **err)
{
        struct container_config cfg = runtime_config(ctx);
        struct container_state st;
        int r;

        *ret = (struct kernel_exit){ .code = -1 };
        r = container_destroy(&cfg, id, STOP_GRACE_USEC, err);
        if (r == -ENOENT) {
                *err = tess_error_free(*err);
                return 0;
        }
        if (r < 0)
                return r;
        if (container_state(&cfg, id, &st, NULL) >= 0 && st.status == CONTAINER_EXITED)
                exit_of(&cfg, id, &st, ret);
        return 0;
}

bool kernel_runtime_exited(struct agent_ctx *ctx, const char *id, struct kernel_exit *ret)
{
        struct container_config cfg = runtime_config(ctx);
        struct container_state st;

        /* the reconciler asks about every running kernel twice a second */
        if (!container_exit_recorded(&cfg, id) || container_state(&cfg, id, &st, NULL) < 0 ||
            st.status != CONTAINER_EXITED)
                return false;
        exit_of(&cfg, id, &st, ret);
        return true;
}

bool kernel_runtime_usage(struct agent_ctx *ctx, const char *id, struct kernel_usage *ret)
{
        struct container_config cfg = runtime_config(ctx);
        struct container_stats st;

        if (container_stats(&cfg, id, &st, NULL) < 0)
                return false;
        *ret = (struct kernel_usage){
                .cpu_ns = st.cpu_usage_ns,
                .mem = st.mem_usage_bytes,
                .io_read = st.io_read_bytes,
                .io_write = st.io_write_bytes,
                .net_rx = st.net_rx_bytes,
                .net_tx = st.net_tx_bytes,
        };
        return true;
}

bool kernel_runtime_exists(struct agent_ctx *ctx, const char *id)
{
        struct container_config cfg = runtime_config(ctx);
        struct container_state st;

        return container_state(&cfg, id, &st, NULL) >= 0 && st.status != CONTAINER_UNKNOWN;
}

void kernel_runtime_remove(struct agent_ctx *ctx, const char *id)
{
        struct container_config cfg = runtime_config(ctx);
        struct tess_error *err = NULL;
        _cleanup_free_ char *path = alloc_path(ctx, id);

        if (container_destroy(&cfg, id, STOP_GRACE_USEC, &err) < 0 && err->code != ENOENT)
                log_warn("kernel %s: %s", id, err->msg);
        err = tess_error_free(err);
        if (container_remove(&cfg, id, &err) < 0 && err->code != ENOENT)
                log_warn("kernel %s: removing its container: %s", id, err->msg);
        tess_error_free(err);
        pthread_mutex_lock(&alloc_lock);
        unlink(path);
        pthread_mutex_unlock(&alloc_lock);
}
