/* image_layer.c - the unpacked layers, layers/sha256/<diff_id hex>: each
 * made once, in a tmp/ directory that is checked against its diff_id,
 * synced and renamed into place, so that a partial unpack never shows
 * under layers/ (a crash leaves it in tmp/, cleaned at the next open).
 * A layer is unpacked from its committed blob (image_layer_unpack), or
 * while its blob is written (image_layer_stream_*: a thread unpacks the
 * bytes the blob writer hands it, and the layer is committed after the
 * blob). */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "image/image-internal.h"

char *image_layer_dir(const struct image_store *st, const char *diff_id)
{
        return image_store_path(st, "layers/sha256/%s", diff_id + strlen("sha256:"));
}

static bool layer_present(const struct image_store *st, const char *hex)
{
        struct stat s;
        return fstatat(st->layersfd, hex, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(s.st_mode);
}

/* A fresh tmp/ directory to unpack into (mode 0755): its path and an fd. */
static int layer_tmp_make(struct image_store *st, char **ret_tmp, int *ret_fd, struct tess_error **err)
{
        _cleanup_free_ char *tmp = image_store_tmp_template(st, "layer");
        int fd;

        if (!mkdtemp(tmp))
                return tess_err(err, errno, "creating '%s': %s", tmp, strerror(errno));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fchmod(fd, 0755) < 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                rmdir(tmp);
                return tess_err(err, e, "opening '%s': %s", tmp, strerror(e));
        }
        *ret_tmp = TAKE_PTR(tmp);
        *ret_fd = fd;
        return 0;
}

/* The end of an unpack into tmp, which went as r says and whose tar has
 * the digest got: check it against diff_id, sync, and rename tmp into
 * layers/, unless another process made the layer meanwhile (theirs is
 * kept).  tmp is removed unless renamed. */
static int layer_finish(struct image_store *st, const char *tmp, int rootfd, int r, const char *got,
                        const char *diff_id, struct tess_error **err)
{
        const char *hex = diff_id + strlen("sha256:");

        if (r >= 0 && !streq(got, diff_id))
                r = tess_err(err, EBADMSG, "its uncompressed digest is %s, not the config's diff_id", got);
        if (r >= 0 && syncfs(rootfd) < 0)
                r = tess_err(err, errno, "syncing '%s': %s", tmp, strerror(errno));
        if (r >= 0 && renameat(AT_FDCWD, tmp, st->layersfd, hex) == 0) {
                fsync(st->layersfd);
                return 0;
        }
        if (r >= 0) {
                int e = errno;
                /* unpacked by another process meanwhile: keep theirs */
                if (!((e == EEXIST || e == ENOTEMPTY) && layer_present(st, hex)))
                        r = tess_err(err, e, "renaming '%s': %s", tmp, strerror(e));
        }
        layer_remove(AT_FDCWD, tmp, NULL);
        return r;
}

static int unpack_blob(struct image_store *st, int rootfd, const char *blob_digest, char got[IMAGE_DIGEST_SIZE],
                       struct tess_error **err)
{
        _cleanup_free_ char *blob = image_blob_path(st, blob_digest);
        _cleanup_close_ int blobfd = -1;

        if (!blob)
                return tess_err(err, ENOENT, "blob %s is not in the store", blob_digest);
        blobfd = open(blob, O_RDONLY | O_CLOEXEC);
        if (blobfd < 0)
                return tess_err(err, errno, "opening '%s': %s", blob, strerror(errno));
        return layer_unpack_fd(rootfd, blobfd, &st->policy, got, err);
}

int image_layer_unpack(struct image_store *st, const char *blob_digest, const char *diff_id,
                       struct tess_error **err)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int rootfd = -1;
        char got[IMAGE_DIGEST_SIZE];
        int r;

        if (!image_digest_valid(diff_id))
                return tess_err(err, EINVAL, "'%s' is not a sha256 diff_id", diff_id);
        if (layer_present(st, diff_id + strlen("sha256:")))
                return 0;
        r = layer_tmp_make(st, &tmp, &rootfd, err);
        if (r >= 0) {
                r = unpack_blob(st, rootfd, blob_digest, got, err);
                r = layer_finish(st, tmp, rootfd, r, got, diff_id, err);
        }
        if (r < 0)
                return tess_err_wrap(err, "unpacking layer %s (diff_id %s)", blob_digest, diff_id);
        return 0;
}

/* ---- unpacking while the blob is written ---- */

struct image_layer_stream {
        struct image_store *st;
        char diff_id[IMAGE_DIGEST_SIZE];
        char got[IMAGE_DIGEST_SIZE];
        char *tmp;
        int rootfd;
        struct image_queue q;
        pthread_t thread;
        int r; /* the unpacker's result, and why it failed */
        struct tess_error *err;
        bool done;
};

static void *stream_main(void *data)
{
        struct image_layer_stream *s = data;

        s->r = layer_unpack_queue(s->rootfd, &s->q, &s->st->policy, s->got, &s->err);
        return NULL;
}

int image_layer_stream_begin(struct image_store *st, const char *diff_id, struct image_layer_stream **ret)
{
        struct image_layer_stream *s;

        *ret = NULL;
        if (!st->policy.unpack || !image_digest_valid(diff_id) || layer_present(st, diff_id + strlen("sha256:")))
                return 0;
        s = xcalloc(1, sizeof(*s));
        s->st = st;
        memcpy(s->diff_id, diff_id, strlen(diff_id) + 1);
        image_queue_init(&s->q);
        if (layer_tmp_make(st, &s->tmp, &s->rootfd, NULL) < 0) {
                image_queue_release(&s->q);
                free(s);
                return 0;
        }
        if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
                close(s->rootfd);
                layer_remove(AT_FDCWD, s->tmp, NULL);
                free(s->tmp);
                image_queue_release(&s->q);
                free(s);
                return 0;
        }
        *ret = s;
        return 1;
}

void image_layer_stream_write(struct image_layer_stream *s, const void *p, size_t n)
{
        if (s && !s->done)
                image_queue_write(&s->q, p, n);
}

void image_layer_stream_done(struct image_layer_stream *s)
{
        if (s && !s->done) {
                image_queue_close(&s->q, true);
                s->done = true;
        }
}

/* Wait for the unpacker; commit the layer when `commit`.  Frees s. */
static int stream_end(struct image_layer_stream *s, bool commit, struct tess_error **err)
{
        int r;

        if (!s->done)
                image_queue_close(&s->q, commit);
        pthread_join(s->thread, NULL);
        r = commit ? s->r : -ECANCELED;
        if (r < 0 && commit && err)
                *err = TAKE_PTR(s->err);
        r = layer_finish(s->st, s->tmp, s->rootfd, r, s->got, s->diff_id, err);
        tess_error_free(s->err);
        close(s->rootfd);
        free(s->tmp);
        image_queue_release(&s->q);
        free(s);
        return r;
}

int image_layer_stream_commit(struct image_layer_stream *s, struct tess_error **err)
{
        return s ? stream_end(s, true, err) : 0;
}

void image_layer_stream_abort(struct image_layer_stream *s)
{
        if (s)
                stream_end(s, false, NULL);
}
