/* kernel_runtime.c - one kernel's image and container: from the manager's
 * description of a kernel (POST /agent/sync) to a container_spec
 * (container.h), and back to an exit code.
 *
 * Image: the manager names it "name:tag" with the registry it was
 * registered from; the agent's store (image.h) is asked for
 * "registry/name:tag" (or "name:tag" without a registry, e.g. imported
 * with `tessera agent image import`) and pulls it when missing: from its
 * registry, or, without one, from the manager, which serves the images
 * `tessera image import` gave it (image_from_manager.c).
 *
 * Devices: a kernel asking c cores (fractions round up) gets ceil(c) of the
 * node's cores as its cpuset (alloc.c) and c as its CFS quota; GPU slots
 * become GPUs, whole or shared (alloc.c, gpu_wiring.c).
 *
 * The container runs the runner (src/runner) as process 1: interactive
 * sessions stay up until stopped; batch sessions run the startup command
 * and end with its exit code.
 *
 * Dotfiles (the user's, which the manager sends with a kernel not made
 * yet): a layer of their own over the image's, made before the container
 * (dotfiles_layer.h). */
#include "common/compat.h"

#include <dirent.h>
#include <libgen.h>
#include <pthread.h>

#include "agent/alloc.h"
#include "agent/container/container.h"
#include "agent/dotfiles_layer.h"
#include "agent/gpu_stats.h"
#include "agent/gpu_wiring.h"
#include "agent/image_from_manager.h"
#include "agent/kernel_runtime.h"
#include "agent/pty_keep.h"
#include "agent/vfolder_mount.h"
#include "common/buf.h"
#include "common/container_disk.h"
#include "common/env_reserved.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "common/work_user.h"
#include "image/image.h"
#include "registry/registry.h"

#define STOP_GRACE_USEC (10 * USEC_PER_SEC)
#define KERNEL_UID TESSERA_WORK_UID /* the runner's user processes (its TESSERA_UID default) */
#define KERNEL_GID TESSERA_WORK_GID

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

struct container_config kernel_runtime_config(const struct agent_ctx *ctx)
{
        const struct agent_conf *c = ctx->conf;

        pthread_once(&monitor_once, find_monitor);
        return (struct container_config){
                .state_dir = c->state_dir,
                .runc = c->runc,
                .bridge = c->bridge,
                .bridge_cidr = c->bridge_cidr,
                .monitor_exe = monitor_exe[0] ? monitor_exe : NULL,
                .no_userns = !c->userns,
                .userns_base = (uint32_t)c->userns_base,
        };
}

static int64_t slot_of(const json_t *slots, const char *name)
{
        const json_t *v = json_object_get(slots, name);
        int64_t q = 0;
        if (v && slot_parse_value(name, v, &q, NULL) < 0)
                q = 0;
        return q;
}

/* The writable layer's size: the node's limit, or the session's (its
 * resource policy's, from the manager) where that is less; a session's
 * under the minimum (a row from before it was checked) counts as none. */
static int64_t disk_limit(const struct agent_ctx *ctx, const json_t *spec)
{
        int64_t node = ctx->conf->container_disk > INT64_MAX ? INT64_MAX : (int64_t)ctx->conf->container_disk;
        int64_t session = json_integer_value(json_object_get(spec, "disk_limit"));

        if (session >= CONTAINER_DISK_MIN && (node == 0 || session < node))
                return session;
        return node;
}

/* The registry credentials the manager sent with the kernel, if any. */
static struct registry_opts registry_credentials(const json_t *spec)
{
        const json_t *auth = json_object_get(spec, "registry_auth");
        const char *user = json_string_value(json_object_get(auth, "username"));
        const char *password = json_string_value(json_object_get(auth, "password"));

        return (struct registry_opts){ .username = user && *user ? user : NULL, .password = password };
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
        struct registry_opts creds = registry_credentials(spec);
        int r = image_store_use(ctx->images, ref, ret, err); /* records the use: the disk budget's LRU */
        if (r != -ENOENT)
                return r;
        *err = tess_error_free(*err);
        progress(data, "pulling");
        if (!registry || !*registry) /* imported into the manager, which serves it */
                r = image_pull_from_manager(ctx, image, err);
        else
                r = registry_pull(ctx->images, ref, &creds, NULL, err);
        if (r < 0)
                return r;
        return image_store_use(ctx->images, ref, ret, err);
}

/* KEY=VALUE strings for the container: the image's, then Tessera's and
 * the Backend.AI names images expect, then the session's own. */
/* Add extra "KEY=VALUE"s to env (n used); path-like keys the image also
 * sets are joined, ours first. */
static size_t merge_env(char **env, size_t n, char *const *extra, size_t nextra)
{
        for (size_t i = 0; i < nextra; i++) {
                size_t klen = strcspn(extra[i], "=");
                bool joined = false;
                for (size_t k = 0; k < n && !joined; k++) {
                        if (strncmp(env[k], extra[i], klen + 1) != 0)
                                continue;
                        bool path = strncmp(extra[i], "LD_LIBRARY_PATH=", klen + 1) == 0 ||
                                    strncmp(extra[i], "LD_PRELOAD=", klen + 1) == 0;
                        char *v = path ? xasprintf("%s:%s", extra[i], env[k] + klen + 1) : xstrdup(extra[i]);
                        free(env[k]);
                        env[k] = v;
                        joined = true;
                }
                if (!joined)
                        env[n++] = xstrdup(extra[i]);
        }
        env[n] = NULL;
        return n;
}

/* A name the runner or the agent reserves (common/env_reserved.h) in an
 * environment a user controls (the session's, the image's: images can be
 * a user's commit or build): never passed on.  The manager refuses them
 * at create; a kernel stored before, or sent by something else, still
 * gets none. */
static bool dropped_reserved(const json_t *spec, const char *whose, const char *name, size_t len)
{
        const char *why = env_reserved_why(name);

        if (!why)
                return false;
        log_warn("kernel %s: %s environment sets %.*s, which is reserved (%s): dropped",
                 json_string_value(json_object_get(spec, "id")), whose, (int)(len > 64 ? 64 : len), name, why);
        return true;
}

static char **kernel_env(const json_t *spec, const struct image_info *img, int ncores, char *const *extra,
                         size_t nextra)
{
        size_t n = 0, cap = 32 + nextra;
        char **env = xmalloc(cap * sizeof(*env));
        const char *key;
        json_t *v;

#define PUSH(...)                                                          \
        do {                                                               \
                if (n + 2 > cap)                                           \
                        env = xrealloc(env, (cap *= 2) * sizeof(*env)); \
                env[n++] = xasprintf(__VA_ARGS__);                         \
        } while (0)
        for (char **e = img->env; e && *e; e++) {
                if (dropped_reserved(spec, "the image's", *e, strcspn(*e, "=")))
                        continue;
                PUSH("%s", *e);
        }
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
        const char *bootstrap = json_string_value(json_object_get(spec, "bootstrap_script"));
        if (bootstrap && *bootstrap)
                PUSH("TESSERA_BOOTSTRAP_SCRIPT=%s", bootstrap);
        json_object_foreach(json_object_get(spec, "environ"), key, v)
                if (json_is_string(v) && !strchr(key, '=') &&
                    !dropped_reserved(spec, "the session's", key, strlen(key)))
                        PUSH("%s=%s", key, json_string_value(v));
#undef PUSH
        if (n + nextra + 1 > cap)
                env = xrealloc(env, (n + nextra + 1) * sizeof(*env));
        merge_env(env, n, extra, nextra);
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

/* What the manager's image registry learns of an image: its digest,
 * size and labels (Backend.AI's ai.backend.* among them). */
static json_t *image_json(const struct image_info *img)
{
        json_t *labels = json_object();

        for (char **l = img->labels; l && *l; l++) {
                const char *eq = strchr(*l, '=');
                if (!eq)
                        continue;
                _cleanup_free_ char *key = xstrndup(*l, (size_t)(eq - *l));
                json_t *v = json_string(eq + 1);
                if (v)
                        json_object_set_new(labels, key, v);
        }
        return json_pack("{s:s?, s:I, s:o}", "digest", img->manifest_digest, "size", (json_int_t)img->size, "labels",
                         labels);
}

/* The image's layers and the dotfiles' over them (NULL: none). */
static const char **with_layer(char *const *layers, const char *top)
{
        size_t n = 0;

        while (layers && layers[n])
                n++;
        const char **v = xcalloc(n + 2, sizeof(*v));
        for (size_t i = 0; i < n; i++)
                v[i] = layers[i];
        v[n] = top;
        return v;
}

/* A start again after a restart found the container there: it is ours if
 * it ran (its monitor lives, or it left an exit record); otherwise the
 * agent died while making it, and what it left is removed and the
 * container made again (a start cut short is not an end). */
static int adopt_or_recreate(const struct container_config *cfg, const struct container_spec *cs,
                             struct tess_error **err)
{
        struct container_state st;
        int r;

        *err = tess_error_free(*err);
        if (container_state(cfg, cs->id, &st, NULL) >= 0 && st.status != CONTAINER_UNKNOWN)
                return 0;
        log_notice("kernel %s: its container was left half made by a restart; making it again", cs->id);
        r = container_remove(cfg, cs->id, err);
        if (r < 0)
                return r;
        return container_create(cfg, cs, err);
}

static int start_held(struct agent_ctx *ctx, const char *id, const json_t *spec,
                      void (*progress)(void *data, const char *kind), void *data, char *container_id, size_t len,
                      json_t **ret_image, struct tess_error **err)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        struct image_info img = { 0 };
        const json_t *slots = json_object_get(spec, "slots");
        bool batch = streq(json_string_value(json_object_get(spec, "session_type")), "batch");
        struct kernel_alloc *alloc = xcalloc(1, sizeof(*alloc));
        struct gpu_wiring gw = { 0 };
        struct vfolder_mounts vm = { 0 };
        int r;

        progress(data, "preparing");
        r = ensure_image(ctx, spec, progress, data, &img, err);
        if (r < 0) {
                free(alloc);
                return r;
        }
        progress(data, "creating");
        int64_t cpu = slot_of(slots, "cpu"); /* 1/1000 core */
        int want = (int)((cpu + 999) / 1000);
        const char *gpu_slot = ctx->devices->gpu_slot;
        r = alloc_kernel(ctx, id, want > 0 ? want : 1, gpu_slot ? slot_of(slots, gpu_slot) : 0, alloc, err);
        if (r >= 0)
                r = gpu_wiring_prepare(ctx, id, alloc, &gw, err);
        if (r >= 0)
                r = vfolder_mounts_prepare(ctx->conf->vfolder_hosts, json_object_get(spec, "vfolder_mounts"),
                                           KERNEL_UID, KERNEL_GID, &vm, err);
        if (r < 0) {
                gpu_wiring_release(&gw);
                image_info_free(&img);
                free(alloc);
                return r;
        }
        /* the GPU's, then the folders' */
        struct container_mount *mounts = xcalloc(gw.nmounts + vm.n + 1, sizeof(*mounts));
        for (size_t i = 0; i < gw.nmounts; i++)
                mounts[i] = gw.mounts[i];
        for (size_t i = 0; i < vm.n; i++)
                mounts[gw.nmounts + i] = vm.v[i];
        _cleanup_free_ char *dotfiles = NULL;
        r = dotfiles_layer_make(ctx, id, json_object_get(spec, "dotfiles"), img.layer_dirs, mounts, gw.nmounts + vm.n,
                                &dotfiles, err);
        _cleanup_free_ const char **layers = with_layer(img.layer_dirs, dotfiles);
        char **env = kernel_env(spec, &img, alloc->ncores, gw.env, gw.nenv);
        _cleanup_free_ char *runner = runner_path(ctx);
        /* who the user is and who the agent is, as options: nothing of the
         * environment (the session's) decides it */
        char uid[16], gid[16], agent_uid[16];
        snprintf(uid, sizeof(uid), "%d", KERNEL_UID);
        snprintf(gid, sizeof(gid), "%d", KERNEL_GID);
        snprintf(agent_uid, sizeof(agent_uid), "%u", container_agent_uid_inside(&cfg));
        const char *const interactive_args[] = { CONTAINER_RUNNER_PATH, "--uid", uid, "--gid", gid,
                                                 "--agent-uid", agent_uid, NULL };
        const char *const batch_args[] = { CONTAINER_RUNNER_PATH, "--batch", "--uid", uid, "--gid", gid,
                                           "--agent-uid", agent_uid, NULL };
        struct container_spec cs = {
                .id = id,
                .layers = layers,
                .args = batch ? batch_args : interactive_args,
                .env = (const char *const *)env,
                .cwd = "/home/work",
                .hostname = json_string_value(json_object_get(spec, "cluster_hostname")),
                .cpu = cpu,
                .cores = alloc->cores,
                .n_cores = (size_t)alloc->ncores,
                .memory = slot_of(slots, "mem"),
                .runner_path = runner,
                .mounts = mounts,
                .n_mounts = gw.nmounts + vm.n,
                .devices = gw.devices,
                .n_devices = gw.ndevices,
                .network = streq(ctx->conf->network, "none") ? CONTAINER_NET_NONE : CONTAINER_NET_BRIDGE,
                /* a session's kernels reach each other, no other session */
                .network_group = json_string_value(json_object_get(spec, "session_id")),
                .disk_limit = disk_limit(ctx, spec),
        };
        if (r >= 0)
                r = container_create(&cfg, &cs, err);
        if (r == -EEXIST)
                r = adopt_or_recreate(&cfg, &cs, err);
        struct container_state left;
        if (r < 0 && dotfiles && container_state(&cfg, id, &left, NULL) < 0) /* else it goes with the container */
                dotfiles_layer_remove(ctx, id);
        for (char **e = env; *e; e++)
                free(*e);
        free(env);
        gpu_wiring_release(&gw);
        vfolder_mounts_release(&vm);
        free(mounts);
        free(alloc);
        if (r < 0) {
                image_info_free(&img);
                return r;
        }
        *ret_image = image_json(&img);
        image_info_free(&img);
        snprintf(container_id, len, "%s", id);
        return 0;
}

/* The image store is held (image.h) from before the image is looked up
 * until the container exists and its record names the layers: the disk
 * budget's gc cannot remove the image in between. */
int kernel_runtime_start(struct agent_ctx *ctx, const char *id, const json_t *spec,
                         void (*progress)(void *data, const char *kind), void *data, char *container_id, size_t len,
                         json_t **ret_image, struct tess_error **err)
{
        struct image_hold *hold = NULL;
        int r = image_hold_begin(ctx->images, &hold, err);

        if (r < 0)
                return r;
        r = start_held(ctx, id, spec, progress, data, container_id, len, ret_image, err);
        image_hold_end(hold);
        return r;
}

char *kernel_runtime_log(struct agent_ctx *ctx, const char *id, size_t max)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        struct buf raw = BUF_INIT, out = BUF_INIT;
        int64_t next;

        if (container_log_read(&cfg, id, 0, SIZE_MAX / 2, &raw, &next, NULL) < 0) {
                buf_release(&raw);
                return NULL;
        }
        size_t start = raw.len > max ? raw.len - max : 0;
        const unsigned char *p = (const unsigned char *)raw.data;
        for (size_t i = start; i < raw.len;) {
                size_t len = utf8_seq_len(p + i, raw.len - i);
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

/* The container's counters into ret (measured), if its cgroup can still
 * be read. */
static void final_usage(const struct container_config *cfg, const char *id, struct kernel_exit *ret)
{
        struct container_stats cs;

        if (container_stats(cfg, id, &cs, NULL) < 0)
                return;
        ret->measured = true;
        ret->cpu_ns = cs.cpu_usage_ns;
        ret->mem = cs.mem_usage_bytes;
        ret->io_read = cs.io_read_bytes;
        ret->io_write = cs.io_write_bytes;
}

static void exit_of(struct agent_ctx *ctx, const char *id, const struct container_state *st,
                    struct kernel_exit *ret)
{
        struct container_config cfg = kernel_runtime_config(ctx);

        ret->code = st->exit_code;
        ret->oom = st->oom_killed;
        ret->log = kernel_runtime_log(ctx, id, KERNEL_LOG_TAIL);
        ret->measured = st->has_usage; /* its monitor read them before runc deleted its cgroup */
        ret->cpu_ns = st->cpu_ns;
        ret->mem = st->mem;
        ret->io_read = st->io_read;
        ret->io_write = st->io_write;
        if (!ret->measured)
                final_usage(&cfg, id, ret);
}

int kernel_runtime_stop(struct agent_ctx *ctx, const char *id, struct kernel_exit *ret, struct tess_error **err)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        struct container_state st;
        int r;

        *ret = (struct kernel_exit){ .code = -1 };
        pty_keep_drop_kernel(ctx->terminals, id); /* its kept terminals go with it */
        struct kernel_exit before = { .code = -1 };
        final_usage(&cfg, id, &before); /* in case its cgroup goes with it */
        r = container_destroy(&cfg, id, STOP_GRACE_USEC, err);
        if (r == -ENOENT) {
                *err = tess_error_free(*err);
                return 0;
        }
        if (r < 0)
                return r;
        if (container_state(&cfg, id, &st, NULL) >= 0 && st.status == CONTAINER_EXITED)
                exit_of(ctx, id, &st, ret);
        if (!ret->measured && before.measured) {
                ret->measured = true;
                ret->cpu_ns = before.cpu_ns;
                ret->mem = before.mem;
                ret->io_read = before.io_read;
                ret->io_write = before.io_write;
        }
        return 0;
}

bool kernel_runtime_exited(struct agent_ctx *ctx, const char *id, struct kernel_exit *ret)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        struct container_state st;

        /* the reconciler asks about every running kernel twice a second:
         * the exit record first (one stat), then whether its monitor still
         * lives (its pid file and /proc); the full state only when not */
        if (container_exit_recorded(&cfg, id)) {
                if (container_state(&cfg, id, &st, NULL) < 0 || st.status != CONTAINER_EXITED)
                        return false;
                exit_of(ctx, id, &st, ret);
                return true;
        }
        /* monitor and container gone without a record (the monitor killed,
         * or no room left to write it): ended, its code unknown */
        if (container_monitor_alive(&cfg, id) || container_state(&cfg, id, &st, NULL) < 0 ||
            st.status != CONTAINER_UNKNOWN)
                return false;
        log_warn("kernel %s: its container and monitor are gone without an exit record; exit code unknown", id);
        *ret = (struct kernel_exit){ .code = -1 };
        return true;
}

bool kernel_runtime_usage(struct agent_ctx *ctx, const char *id, struct kernel_usage *ret)
{
        struct container_config cfg = kernel_runtime_config(ctx);
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
        ret->has_gpu_mem =
                gpu_wiring_usage(ctx, id, &ret->gpu_mem, &ret->gpu_mem_limit, &ret->gpu_devices, &ret->gpu_util) ||
                gpu_stats_kernel(ctx, ctx->gpu_stats, id, &ret->gpu_mem, &ret->gpu_mem_limit, &ret->gpu_devices,
                                 &ret->gpu_util);
        return true;
}

bool kernel_runtime_exists(struct agent_ctx *ctx, const char *id)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        struct container_state st;

        return container_state(&cfg, id, &st, NULL) >= 0 && st.status != CONTAINER_UNKNOWN;
}

void kernel_runtime_remove(struct agent_ctx *ctx, const char *id)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        struct tess_error *err = NULL;

        pty_keep_drop_kernel(ctx->terminals, id);
        if (container_destroy(&cfg, id, STOP_GRACE_USEC, &err) < 0 && err->code != ENOENT)
                log_warn("kernel %s: %s", id, err->msg);
        err = tess_error_free(err);
        if (container_remove(&cfg, id, &err) < 0 && err->code != ENOENT)
                log_warn("kernel %s: removing its container: %s", id, err->msg);
        else
                dotfiles_layer_remove(ctx, id); /* no overlay uses it any more */
        tess_error_free(err);
        alloc_release(ctx, id);
        gpu_wiring_remove(ctx, id);
}
