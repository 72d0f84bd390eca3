/* commit.c - session commits on the agent; see commit.h. */
#include "common/compat.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "agent/commit.h"
#include "agent/container/container.h"
#include "agent/image_from_manager.h"
#include "agent/kernel_runtime.h"
#include "common/crypto.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "image/image.h"
#include "image/layer_writer.h"
#include "registry/image_push.h"

#define EXCLUDE_MAX          256
#define LABELS_MAX           64
#define PROGRESS_USEC        (1 * USEC_PER_SEC)
#define COMPRESS_THREADS_MAX 8
/* zstd at level 1: a commit is waited for, and gzip -1 made 200 MB of
 * installed files 7x slower than tar (bench/session-commit.sh) */
#define MEDIA_OCI_ZSTD       IMAGE_MEDIA_OCI_LAYER "+zstd"

static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;

struct commit_job {
        struct agent_ctx *ctx;
        char *task, *kernel, *base, *name, *tag;
        json_t *labels;
        char *exclude[EXCLUDE_MAX + 1]; /* relative to the rootfs, NULL-terminated */
        size_t n_exclude;
        int64_t started, last_progress;
        int64_t layer_total; /* bytes the upper dir holds, about */
};

static void job_free(struct commit_job *j)
{
        free(j->task);
        free(j->kernel);
        free(j->base);
        free(j->name);
        free(j->tag);
        json_decref(j->labels);
        for (size_t i = 0; i < j->n_exclude; i++)
                free(j->exclude[i]);
        free(j);
}

static char *record_path(const struct agent_ctx *ctx, const char *task)
{
        return task ? xasprintf("%s/commits/%s", ctx->conf->state_dir, task)
                    : xasprintf("%s/commits", ctx->conf->state_dir);
}

static void report(struct agent_ctx *ctx, const char *kernel, json_t *ev)
{
        json_object_set_new(ev, "kernel", json_string(kernel));
        outbox_add(ctx->outbox, ev);
        json_decref(ev);
        agent_wake_reporter(ctx);
}

static void progress(struct commit_job *j, int64_t current, int64_t total, const char *message, bool force)
{
        int64_t now = monotonic_usec();

        if (!force && now - j->last_progress < PROGRESS_USEC)
                return;
        j->last_progress = now;
        report(j->ctx, j->kernel,
               json_pack("{s:s, s:s, s:I, s:I, s:s}", "kind", "commit-progress", "task", j->task, "current",
                         (json_int_t)current, "total", (json_int_t)total, "message", message));
}

static void on_layer_bytes(void *data, int64_t bytes)
{
        struct commit_job *j = data;
        progress(j, bytes, j->layer_total > bytes ? j->layer_total : bytes, "snapshotting the container", false);
}

/* The commit is waited for: zstd gets every core, up to COMPRESS_THREADS_MAX
 * (on two cores, two threads beside the walk took 200 MB in 0.66 s, one 0.76) */
static int compress_threads(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n < 1 ? 1 : n > COMPRESS_THREADS_MAX ? COMPRESS_THREADS_MAX : (int)n;
}

static void on_layer_written(void *data, int64_t bytes)
{
        image_push_stream_grow(data, bytes);
}

static void on_push_bytes(void *data, int64_t bytes)
{
        struct commit_job *j = data;
        progress(j, bytes, 0, "pushing the image", false);
}

/* Bytes of the regular files under dir, about (for progress). */
static int64_t tree_bytes(int dirfd, int depth)
{
        DIR *d = fdopendir(dirfd);
        struct dirent *e;
        int64_t sum = 0;

        if (!d) {
                close(dirfd);
                return 0;
        }
        while ((e = readdir(d))) {
                struct stat st;
                if (streq(e->d_name, ".") || streq(e->d_name, "..") ||
                    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISREG(st.st_mode))
                        sum += st.st_size;
                else if (S_ISDIR(st.st_mode) && depth < 64) {
                        int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0)
                                sum += tree_bytes(sub, depth + 1);
                }
        }
        closedir(d);
        return sum;
}

/* Add "/a/b" as "a/b" to the exclusions (cleaned; "/" and ".." refused). */
static int exclude_add(struct commit_job *j, const char *abs, struct tess_error **err)
{
        while (*abs == '/')
                abs++;
        size_t n = strlen(abs);
        while (n > 0 && abs[n - 1] == '/')
                n--;
        if (n == 0)
                return 0;
        _cleanup_free_ char *rel = xstrndup(abs, n);
        if (strstr(rel, "//") || streq(rel, "..") || strncmp(rel, "../", 3) == 0 || strstr(rel, "/../") ||
            (n >= 3 && streq(rel + n - 3, "/..")))
                return tess_err(err, EINVAL, "exclude: '%s' is not a clean path", abs);
        if (j->n_exclude == EXCLUDE_MAX)
                return tess_err(err, EINVAL, "exclude: at most %d paths", EXCLUDE_MAX);
        j->exclude[j->n_exclude++] = TAKE_PTR(rel);
        return 0;
}

/* The destinations of the bundle's mounts: they are the host's, not the image's. */
static int exclude_bundle_mounts(struct commit_job *j, const char *container_dir, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/bundle/config.json", container_dir), *text = NULL;
        size_t len, i;
        json_t *m;
        int r = fs_read_file(path, 4 << 20, &text, &len, err);

        if (r < 0)
                return r;
        json_t *spec = json_loadb(text, len, 0, NULL);
        json_array_foreach(json_object_get(spec, "mounts"), i, m) {
                const char *dest = json_string_value(json_object_get(m, "destination"));
                if (dest && (r = exclude_add(j, dest, err)) < 0)
                        break;
        }
        json_decref(spec);
        return r < 0 ? r : 0;
}

/* Store `text` as a blob; its digest into ret. */
static int put_blob(struct image_store *st, const char *text, size_t len, char ret[IMAGE_DIGEST_SIZE],
                    struct tess_error **err)
{
        struct image_blob_writer *w;
        int r = image_blob_begin(st, NULL, (int64_t)len, &w, err);

        if (r < 0)
                return r;
        r = image_blob_write(w, text, len, err);
        if (r < 0) {
                image_blob_abort(w);
                return r;
        }
        return image_blob_commit_digest(w, ret, err);
}

static int put_json_blob(struct image_store *st, json_t *j, char ret[IMAGE_DIGEST_SIZE], int64_t *ret_size,
                         struct tess_error **err)
{
        _cleanup_free_ char *text = json_dumps(j, JSON_COMPACT);
        *ret_size = (int64_t)strlen(text);
        return put_blob(st, text, strlen(text), ret, err);
}

static json_t *load_json_blob(struct image_store *st, const char *digest, size_t max, struct tess_error **err)
{
        _cleanup_free_ char *path = image_blob_path(st, digest), *text = NULL;
        size_t len;

        if (!path) {
                tess_err(err, ENOENT, "blob %s is not in the store", digest);
                return NULL;
        }
        if (fs_read_file(path, max, &text, &len, err) < 0)
                return NULL;
        json_t *j = json_loadb(text, len, 0, NULL);
        if (!json_is_object(j)) {
                json_decref(j);
                tess_err(err, EINVAL, "blob %s is not a JSON object", digest);
                return NULL;
        }
        return j;
}

/* Move the finished layer file into blobs/ under its digest. */
static int adopt_layer(struct image_store *st, const char *tmp, const struct layer_info *li, struct tess_error **err)
{
        _cleanup_free_ char *dir = xasprintf("%s/blobs/sha256", image_store_dir(st));
        _cleanup_free_ char *dst = xasprintf("%s/%s", dir, li->digest + 7);

        if (rename(tmp, dst) < 0)
                return tess_err(err, errno, "storing the layer: %s", strerror(errno));
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
                fsync(fd);
        return 0;
}

/* The base image's config with the layer on top, the labels and a history entry. */
static json_t *new_config(struct commit_job *j, json_t *config, const struct layer_info *li)
{
        char created[64];
        json_t *c = json_deep_copy(config), *conf, *rootfs, *hist;

        time_format_iso(now_usec(), created, sizeof(created));
        json_object_set_new(c, "created", json_string(created));
        conf = json_object_get(c, "config");
        if (!json_is_object(conf))
                json_object_set_new(c, "config", conf = json_object());
        if (!json_is_object(json_object_get(conf, "Labels")))
                json_object_set_new(conf, "Labels", json_object());
        json_object_update(json_object_get(conf, "Labels"), j->labels);
        rootfs = json_object_get(c, "rootfs");
        json_array_append_new(json_object_get(rootfs, "diff_ids"), json_string(li->diff_id));
        hist = json_object_get(c, "history");
        if (!json_is_array(hist))
                json_object_set_new(c, "history", hist = json_array());
        json_array_append_new(hist, json_pack("{s:s, s:s, s:s}", "created", created, "created_by",
                                              "tessera session commit", "comment", j->task));
        return c;
}

/* The OCI name of a Docker media type (a zstd layer has no Docker name,
 * so the new manifest is an OCI one). */
static const char *oci_media_type(const char *mt)
{
        static const char *const map[][2] = {
                { IMAGE_MEDIA_DOCKER_MANIFEST, IMAGE_MEDIA_OCI_MANIFEST },
                { "application/vnd.docker.container.image.v1+json", IMAGE_MEDIA_OCI_CONFIG },
                { "application/vnd.docker.image.rootfs.diff.tar.gzip", IMAGE_MEDIA_OCI_LAYER "+gzip" },
                { "application/vnd.docker.image.rootfs.diff.tar", IMAGE_MEDIA_OCI_LAYER },
        };
        for (size_t i = 0; mt && i < ARRAY_SIZE(map); i++)
                if (streq(mt, map[i][0]))
                        return map[i][1];
        return mt;
}

static json_t *new_manifest(json_t *manifest, const char *config_digest, int64_t config_size,
                            const struct layer_info *li)
{
        json_t *m = json_deep_copy(manifest), *cfg = json_object_get(m, "config"), *l;
        size_t i;

        json_object_set_new(m, "mediaType", json_string(IMAGE_MEDIA_OCI_MANIFEST));
        json_object_set_new(cfg, "mediaType", json_string(IMAGE_MEDIA_OCI_CONFIG));
        json_object_set_new(cfg, "digest", json_string(config_digest));
        json_object_set_new(cfg, "size", json_integer(config_size));
        json_array_foreach(json_object_get(m, "layers"), i, l) {
                const char *mt = oci_media_type(json_string_value(json_object_get(l, "mediaType")));
                if (mt)
                        json_object_set_new(l, "mediaType", json_string(mt));
        }
        json_array_append_new(json_object_get(m, "layers"),
                              json_pack("{s:s, s:s, s:I}", "mediaType", MEDIA_OCI_ZSTD, "digest", li->digest, "size",
                                        (json_int_t)li->size));
        json_object_del(m, "annotations");
        return m;
}

static int run_commit(struct commit_job *j, char ret_manifest[IMAGE_DIGEST_SIZE], int64_t *ret_size,
                      struct tess_error **err)
{
        struct agent_ctx *ctx = j->ctx;
        struct image_store *st = ctx->images;
        struct image_info base = { 0 };
        struct layer_info li = { 0 };
        _cleanup_free_ char *cdir = xasprintf("%s/containers/%s", ctx->conf->state_dir, j->kernel);
        struct container_config cfg = kernel_runtime_config(ctx);
        _cleanup_free_ char *upper = container_upper_dir(&cfg, j->kernel);
        _cleanup_free_ char *tmp = xasprintf("%s/tmp/%d-commit-%.8s", image_store_dir(st), (int)getpid(), j->task);
        _cleanup_free_ char *ref = xasprintf("%s:%s", j->name, j->tag);
        json_t *config = NULL, *manifest = NULL, *c2 = NULL, *m2 = NULL;
        char config_digest[IMAGE_DIGEST_SIZE];
        int64_t config_size, manifest_size;
        int r;

        r = image_store_get(st, j->base, &base, err);
        if (r < 0)
                return tess_err_wrap(err, "the session's image '%s'", j->base);
        r = exclude_bundle_mounts(j, cdir, err);
        if (r >= 0)
                r = exclude_add(j, "/home/work", err);
        if (r < 0)
                goto out;
        j->exclude[j->n_exclude] = NULL;
        int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ufd < 0) {
                r = tess_err(err, ENOENT, "the container of kernel %s has no upper dir: %s", j->kernel,
                             strerror(errno));
                goto out;
        }
        j->layer_total = tree_bytes(ufd, 0);
        progress(j, 0, j->layer_total, "snapshotting the container", true);
        /* the layer goes to the manager while it is written; if that
         * fails, the push below sends it whole */
        struct image_push_stream *stream = NULL;
        struct tess_error *stream_err = NULL;
        if (image_push_stream_to_manager(ctx, ref, tmp, &stream, &stream_err) < 0) {
                log_warn("commit of %s: uploading the layer while it is written: %s", j->kernel, stream_err->msg);
                stream_err = tess_error_free(stream_err);
        }
        r = layer_write_opts(upper, tmp,
                             &(struct layer_write_opts){ .mtime = -1,
                                                         .zstd = true,
                                                         .level = 1,
                                                         .zstd_threads = compress_threads(),
                                                         .overlay_upper = true,
                                                         .exclude = (const char *const *)j->exclude,
                                                         .progress = on_layer_bytes,
                                                         .progress_data = j,
                                                         .written = stream ? on_layer_written : NULL,
                                                         .written_data = stream },
                             &li, err);
        int64_t t_snap = monotonic_usec();
        if (stream && image_push_stream_finish(stream, r < 0 ? NULL : li.digest, li.size, &stream_err) < 0) {
                log_warn("commit of %s: %s (pushed again whole)", j->kernel, stream_err->msg);
                tess_error_free(stream_err);
        }
        if (r < 0)
                goto out;
        int64_t t_layer = monotonic_usec();
        r = adopt_layer(st, tmp, &li, err);
        if (r < 0) {
                unlink(tmp);
                goto out;
        }
        config = load_json_blob(st, base.config_digest, IMAGE_CONFIG_MAX, err);
        manifest = config ? load_json_blob(st, base.manifest_digest, IMAGE_MANIFEST_MAX, err) : NULL;
        if (!manifest) {
                r = -EIO;
                goto out;
        }
        c2 = new_config(j, config, &li);
        r = put_json_blob(st, c2, config_digest, &config_size, err);
        if (r < 0)
                goto out;
        m2 = new_manifest(manifest, config_digest, config_size, &li);
        r = put_json_blob(st, m2, ret_manifest, &manifest_size, err);
        if (r < 0)
                goto out;
        *ret_size = base.size + li.size;
        r = image_push_to_manager(ctx, ref, ret_manifest, on_push_bytes, j, err);
        if (r >= 0) {
                int64_t t_end = monotonic_usec();
                log_info("commit of %s: %s (%s, layer %.1f MiB of %.1f MiB tar, %llu entries) in %.1f s", j->kernel,
                         ref, ret_manifest, li.size / 1048576.0, li.tar_size / 1048576.0,
                         (unsigned long long)li.entries, (double)(t_end - j->started) / USEC_PER_SEC);
                log_info("commit %s phases: snapshot %.2f s, the layer's upload after it %.2f s, the rest %.2f s",
                         j->kernel, (double)(t_snap - j->started) / USEC_PER_SEC,
                         (double)(t_layer - t_snap) / USEC_PER_SEC, (double)(t_end - t_layer) / USEC_PER_SEC);
        }
out:
        json_decref(config);
        json_decref(manifest);
        json_decref(c2);
        json_decref(m2);
        image_info_free(&base);
        return r;
}

/* Tag the committed image here too (unpacking its new layer), after the
 * user's wait: until then a session of it on this agent pulls it from the
 * manager, finding its blobs here already. */
static void store_locally(struct commit_job *j, const char *manifest)
{
        _cleanup_free_ char *ref = xasprintf("%s:%s", j->name, j->tag);
        struct tess_error *err = NULL;
        int64_t t0 = monotonic_usec();

        if (image_store_tag(j->ctx->images, ref, manifest, &err) < 0) {
                log_warn("commit of %s: storing %s here: %s", j->kernel, ref, err->msg);
                tess_error_free(err);
                return;
        }
        log_info("commit of %s: %s stored here in %.2f s", j->kernel, ref,
                 (double)(monotonic_usec() - t0) / USEC_PER_SEC);
}

static void *commit_thread(void *data)
{
        struct commit_job *j = data;
        struct tess_error *err = NULL;
        char manifest[IMAGE_DIGEST_SIZE];
        int64_t size = 0;
        _cleanup_free_ char *rec = record_path(j->ctx, j->task);
        struct image_hold *hold = NULL; /* gc keeps off the new blobs until they are tagged (image.h) */
        int r = image_hold_begin(j->ctx->images, &hold, &err);

        if (r >= 0)
                r = run_commit(j, manifest, &size, &err);
        if (r < 0) {
                log_warn("commit of %s failed: %s", j->kernel, err->msg);
                report(j->ctx, j->kernel,
                       json_pack("{s:s, s:s, s:s}", "kind", "commit-failed", "task", j->task, "message", err->msg));
                tess_error_free(err);
        } else {
                report(j->ctx, j->kernel,
                       json_pack("{s:s, s:s, s:{s:s, s:I, s:O}}", "kind", "commit-done", "task", j->task, "image",
                                 "digest", manifest, "size", (json_int_t)size, "labels", j->labels));
        }
        /* reported: a restart from here on has nothing to report */
        pthread_mutex_lock(&running_lock);
        unlink(rec);
        pthread_mutex_unlock(&running_lock);
        if (r >= 0)
                store_locally(j, manifest);
        image_hold_end(hold);
        job_free(j);
        return NULL;
}

static bool ref_part_ok(const char *s, size_t max, const char *extra)
{
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n > max || !isalnum((unsigned char)s[0]))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
                        return false;
        return true;
}

static int parse(struct commit_job *j, const json_t *req, struct tess_error **err)
{
        const char *task = json_string_value(json_object_get(req, "task_id"));
        const char *base = json_string_value(json_object_get(req, "base"));
        const char *name = json_string_value(json_object_get(req, "name"));
        const char *tag = json_string_value(json_object_get(req, "tag"));
        json_t *labels = json_object_get(req, "labels"), *v;
        const char *key;
        size_t i;

        if (!task || !uuid_valid(task))
                return tess_err(err, EINVAL, "task_id must be a UUID");
        if (!ref_part_ok(base, 512, "._-/:@") || !ref_part_ok(name, 255, "._-/") || !ref_part_ok(tag, 128, "._-"))
                return tess_err(err, EINVAL, "base, name and tag must be an image reference, name and tag");
        if (labels && (!json_is_object(labels) || json_object_size(labels) > LABELS_MAX))
                return tess_err(err, EINVAL, "labels must be an object of at most %d strings", LABELS_MAX);
        json_object_foreach(labels, key, v) {
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "labels must be strings");
        }
        json_array_foreach(json_object_get(req, "exclude"), i, v) {
                if (!json_is_string(v) || exclude_add(j, json_string_value(v), err) < 0)
                        return tess_err(err, EINVAL, "exclude must be clean absolute paths");
        }
        j->task = xstrdup(task);
        j->base = xstrdup(base);
        j->name = xstrdup(name);
        j->tag = xstrdup(tag);
        j->labels = labels ? json_deep_copy(labels) : json_object();
        return 0;
}

/* Whether a commit of `kernel` is recorded as under way. */
static bool kernel_busy(struct agent_ctx *ctx, const char *kernel)
{
        _cleanup_free_ char *dir = record_path(ctx, NULL);
        DIR *d = opendir(dir);
        struct dirent *e;
        bool busy = false;

        while (d && !busy && (e = readdir(d))) {
                _cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name), *text = NULL;
                size_t len;
                if (e->d_name[0] != '.' && fs_read_file(path, 256, &text, &len, NULL) == 0)
                        busy = streq(text, kernel);
        }
        if (d)
                closedir(d);
        return busy;
}

int commit_start(struct agent_ctx *ctx, const char *kernel_id, const json_t *req, struct tess_error **err)
{
        struct commit_job *j = xcalloc(1, sizeof(*j));
        pthread_attr_t attr;
        pthread_t t;
        int r;

        j->ctx = ctx;
        j->kernel = xstrdup(kernel_id);
        j->started = monotonic_usec();
        r = parse(j, req, err);
        if (r == 0 && !kernel_runtime_exists(ctx, kernel_id))
                r = tess_err(err, ENOENT, "no container for kernel %s", kernel_id);
        if (r < 0) {
                job_free(j);
                return r;
        }
        _cleanup_free_ char *dir = record_path(ctx, NULL), *rec = record_path(ctx, j->task);
        pthread_mutex_lock(&running_lock);
        if (kernel_busy(ctx, kernel_id))
                r = tess_err(err, EBUSY, "a commit of kernel %s is under way", kernel_id);
        if (r == 0)
                r = fs_mkdir_p(dir, 0700, err);
        if (r == 0)
                r = fs_write_file_atomic(rec, kernel_id, strlen(kernel_id), 0600, err);
        pthread_mutex_unlock(&running_lock);
        if (r < 0) {
                job_free(j);
                return r;
        }
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, commit_thread, j) != 0) {
                unlink(rec);
                job_free(j);
                r = tess_err(err, EAGAIN, "cannot start the commit's thread");
        }
        pthread_attr_destroy(&attr);
        return r;
}

void commit_recover(struct agent_ctx *ctx)
{
        _cleanup_free_ char *dir = record_path(ctx, NULL);
        DIR *d = opendir(dir);
        struct dirent *e;

        while (d && (e = readdir(d))) {
                _cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name), *kernel = NULL;
                size_t len;
                if (!uuid_valid(e->d_name) || fs_read_file(path, 256, &kernel, &len, NULL) < 0)
                        continue;
                log_warn("commit %s of kernel %s was cut short by a restart", e->d_name, kernel);
                report(ctx, kernel,
                       json_pack("{s:s, s:s, s:s}", "kind", "commit-failed", "task", e->d_name, "message",
                                 "interrupted: the agent restarted"));
                unlink(path);
        }
        if (d)
                closedir(d);
}
