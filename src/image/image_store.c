/* image_store.c - the image store handle: opening (and creating) the OCI
 * layout directory (and Tessera's layers/, used/, tmp/), the store's
 * options, its lock, and tmp/ entries. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "image/image-internal.h"

static const char oci_layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}\n";
static const char empty_index[] =
        "{\"schemaVersion\":2,\"mediaType\":\"" IMAGE_MEDIA_OCI_INDEX "\",\"manifests\":[]}\n";

char *image_store_path(const struct image_store *st, const char *fmt, ...)
{
        _cleanup_free_ char *rel = NULL;
        va_list ap;

        va_start(ap, fmt);
        rel = xvasprintf(fmt, ap);
        va_end(ap);
        return xasprintf("%s/%s", st->dir, rel);
}

int image_store_lock(struct image_store *st, struct tess_error **err)
{
        pthread_mutex_lock(&st->lock);
        while (flock(st->dirfd, LOCK_EX) < 0) {
                if (errno != EINTR) {
                        pthread_mutex_unlock(&st->lock);
                        return tess_err(err, errno, "locking image store '%s': %s", st->dir, strerror(errno));
                }
        }
        return 0;
}

void image_store_unlock(struct image_store *st)
{
        flock(st->dirfd, LOCK_UN);
        pthread_mutex_unlock(&st->lock);
}

char *image_store_tmp_template(const struct image_store *st, const char *kind)
{
        return xasprintf("%s/tmp/%ld-%s-XXXXXX", st->dir, (long)getpid(), kind);
}

/* Whether a tmp/ entry belongs to a process still running. */
static bool tmp_entry_live(const char *name)
{
        char *end;
        long pid;

        errno = 0;
        pid = strtol(name, &end, 10);
        if (errno || end == name || *end != '-' || pid <= 0)
                return false;
        return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int image_store_clean_tmp(struct image_store *st, struct tess_error **err)
{
        int fd = fcntl(st->tmpfd, F_DUPFD_CLOEXEC, 0);
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (fd < 0 || !(d = fdopendir(fd))) {
                if (fd >= 0)
                        close(fd);
                return tess_err(err, errno, "reading '%s/tmp': %s", st->dir, strerror(errno));
        }
        rewinddir(d);
        while (r >= 0 && (de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, "..") || tmp_entry_live(de->d_name))
                        continue;
                r = layer_remove(st->tmpfd, de->d_name, NULL);
                if (r < 0)
                        r = tess_err(err, -r, "removing '%s/tmp/%s': %s", st->dir, de->d_name, strerror(-r));
        }
        closedir(d);
        return r;
}

static int open_dir(struct image_store *st, const char *rel, int *ret_fd, struct tess_error **err)
{
        _cleanup_free_ char *path = image_store_path(st, "%s", rel);
        int r;

        r = fs_mkdir_p(path, 0700, err);
        if (r < 0)
                return r;
        *ret_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*ret_fd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        return 0;
}

static bool has_file(const struct image_store *st, const char *name)
{
        struct stat s;
        return fstatat(st->dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Write `name` with `content` unless it exists (under the lock). */
static int create_file(struct image_store *st, const char *name, const char *content, struct tess_error **err)
{
        _cleanup_free_ char *path = image_store_path(st, "%s", name);

        if (has_file(st, name))
                return 0;
        return fs_write_file_atomic(path, content, strlen(content), 0644, err);
}

static int store_init(struct image_store *st, struct tess_error **err)
{
        int fd = -1, r;

        r = open_dir(st, ".", &st->dirfd, err);
        if (r < 0)
                return r;
        r = open_dir(st, "blobs/sha256", &fd, err);
        if (r < 0)
                return r;
        close(fd);
        r = open_dir(st, "layers/sha256", &st->layersfd, err);
        if (r < 0)
                return r;
        r = open_dir(st, "tmp", &st->tmpfd, err);
        if (r < 0)
                return r;
        r = open_dir(st, "used", &st->usedfd, err);
        if (r < 0)
                return r;

        if (!has_file(st, "index.json")) {
                /* a new store: the lock keeps a concurrent tag's index */
                r = image_store_lock(st, err);
                if (r < 0)
                        return r;
                r = create_file(st, "oci-layout", oci_layout, err);
                if (r >= 0)
                        r = create_file(st, "index.json", empty_index, err);
                image_store_unlock(st);
                if (r < 0)
                        return r;
        }
        /* best effort: gc cleans again and reports what it cannot */
        (void)image_store_clean_tmp(st, NULL);
        return 0;
}

int image_store_open(const char *dir, struct image_store **ret, struct tess_error **err)
{
        struct image_store *st = xcalloc(1, sizeof(*st));
        int r;

        st->dir = xstrdup(dir);
        pthread_mutex_init(&st->lock, NULL);
        st->dirfd = st->tmpfd = st->layersfd = st->usedfd = -1;
        st->layer_sizes = image_layer_sizes_new();
        st->policy = (struct layer_policy){
                .unpack = true,
                .allow_setuid = true,
                .max_bytes = IMAGE_LAYER_MAX_BYTES,
                .max_entries = IMAGE_LAYER_MAX_ENTRIES,
        };
        r = store_init(st, err);
        if (r < 0) {
                image_store_close(st);
                return tess_err_wrap(err, "opening image store '%s'", dir);
        }
        *ret = st;
        return 0;
}

struct image_store *image_store_close(struct image_store *st)
{
        if (!st)
                return NULL;
        if (st->dirfd >= 0)
                close(st->dirfd);
        if (st->tmpfd >= 0)
                close(st->tmpfd);
        if (st->layersfd >= 0)
                close(st->layersfd);
        if (st->usedfd >= 0)
                close(st->usedfd);
        st->layer_sizes = image_layer_sizes_free(st->layer_sizes);
        pthread_mutex_destroy(&st->lock);
        free(st->dir);
        free(st);
        return NULL;
}

const char *image_store_dir(const struct image_store *st)
{
        return st->dir;
}

void image_store_set_unpack_layers(struct image_store *st, bool unpack)
{
        st->policy.unpack = unpack;
}

void image_store_set_allow_setuid(struct image_store *st, bool allow)
{
        st->policy.allow_setuid = allow;
}

void image_store_set_layer_limits(struct image_store *st, uint64_t max_bytes, uint64_t max_entries)
{
        st->policy.max_bytes = max_bytes;
        st->policy.max_entries = max_entries;
}

bool image_digest_valid(const char *digest)
{
        if (!digest || strncmp(digest, "sha256:", 7) != 0 || strlen(digest) != 7 + 64)
                return false;
        for (const char *p = digest + 7; *p; p++) {
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        }
        return true;
}

char *image_blob_path(struct image_store *st, const char *digest)
{
        struct stat s;
        char *path;

        if (!image_digest_valid(digest))
                return NULL;
        path = image_store_path(st, "blobs/sha256/%s", digest + 7);
        if (stat(path, &s) < 0 || !S_ISREG(s.st_mode)) {
                free(path);
                return NULL;
        }
        return path;
}
