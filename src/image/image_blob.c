/* image_blob.c - the store's content-addressed blobs (blobs/sha256/<hex>)
 * and the writer that verifies them: bytes go to a tmp/ file while SHA-256
 * runs over them; commit checks the size and the digest, fsyncs, and
 * renames the file into blobs/ - or removes it.  A layer blob's writer
 * also hands its bytes to an unpacker (image_layer_stream_*), whose layer
 * is committed after the blob. */
#include "common/compat.h"

#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "image/image-internal.h"

struct image_blob_writer {
        struct image_store *st;
        char digest[IMAGE_DIGEST_SIZE]; /* expected; "" when unknown */
        int64_t size;                   /* expected; -1 when unknown */
        int64_t written;
        bool failed; /* a write failed: only abort is left */
        int fd;
        char *tmp_path;
        EVP_MD_CTX *md;
        struct image_layer_stream *layer; /* unpacking the bytes as they come, or NULL */
};

bool image_blob_exists(struct image_store *st, const char *digest)
{
        _cleanup_free_ char *path = image_blob_path(st, digest);
        return path != NULL;
}

int image_blob_read(struct image_store *st, const char *digest, size_t max, char **ret, size_t *ret_len,
                    struct tess_error **err)
{
        _cleanup_free_ char *path = image_blob_path(st, digest);

        if (!path)
                return tess_err(err, ENOENT, "blob '%s' is not in the store", digest);
        return fs_read_file(path, max, ret, ret_len, err);
}

int image_blob_begin(struct image_store *st, const char *digest, int64_t size, struct image_blob_writer **ret,
                     struct tess_error **err)
{
        struct image_blob_writer *w;

        if (digest && !image_digest_valid(digest))
                return tess_err(err, EINVAL, "'%s' is not a sha256 digest", digest);
        if (size < -1)
                return tess_err(err, EINVAL, "invalid blob size %" PRId64, size);
        w = xcalloc(1, sizeof(*w));
        w->st = st;
        w->size = size;
        if (digest)
                memcpy(w->digest, digest, strlen(digest) + 1);
        w->tmp_path = image_store_tmp_template(st, "blob");
        w->fd = mkostemp(w->tmp_path, O_CLOEXEC);
        if (w->fd < 0) {
                int e = errno;
                free(w->tmp_path);
                free(w);
                return tess_err(err, e, "creating a blob in '%s/tmp': %s", image_store_dir(st), strerror(e));
        }
        w->md = EVP_MD_CTX_new();
        if (!w->md || EVP_DigestInit_ex(w->md, EVP_sha256(), NULL) != 1)
                abort(); /* out of memory */
        *ret = w;
        return 0;
}

int image_blob_begin_layer(struct image_store *st, const char *digest, int64_t size, const char *diff_id,
                           struct image_blob_writer **ret, struct tess_error **err)
{
        int r = image_blob_begin(st, digest, size, ret, err);

        if (r >= 0 && diff_id)
                image_layer_stream_begin(st, diff_id, &(*ret)->layer);
        return r;
}

int image_blob_write(struct image_blob_writer *w, const void *p, size_t n, struct tess_error **err)
{
        const char *c = p;

        if (w->failed)
                return tess_err(err, EIO, "writing blob: an earlier write failed");
        if (w->size >= 0 && (uint64_t)(w->size - w->written) < n) {
                w->failed = true;
                return tess_err(err, EBADMSG, "blob %s is larger than its %" PRId64 " bytes", w->digest, w->size);
        }
        EVP_DigestUpdate(w->md, p, n);
        while (n > 0) {
                ssize_t k = write(w->fd, c, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        w->failed = true;
                        return tess_err(err, errno, "writing '%s': %s", w->tmp_path, strerror(errno));
                }
                c += k;
                n -= (size_t)k;
                w->written += k;
        }
        image_layer_stream_write(w->layer, p, (size_t)(c - (const char *)p));
        return 0;
}

static void writer_free(struct image_blob_writer *w)
{
        close(w->fd);
        free(w->tmp_path);
        EVP_MD_CTX_free(w->md);
        free(w);
}

void image_blob_abort(struct image_blob_writer *w)
{
        if (!w)
                return;
        image_layer_stream_abort(w->layer);
        unlink(w->tmp_path);
        writer_free(w);
}

static void digest_final(struct image_blob_writer *w, char ret[IMAGE_DIGEST_SIZE])
{
        unsigned char md[32];
        unsigned int len = 0;

        EVP_DigestFinal_ex(w->md, md, &len);
        memcpy(ret, "sha256:", 7);
        for (unsigned i = 0; i < 32; i++)
                snprintf(ret + 7 + 2 * i, 3, "%02x", md[i]);
}

static int blob_check(struct image_blob_writer *w, const char *got, struct tess_error **err)
{
        if (w->failed)
                return tess_err(err, EIO, "an earlier write failed");
        if (w->size >= 0 && w->written != w->size)
                return tess_err(err, EBADMSG, "%" PRId64 " bytes where %" PRId64 " were expected", w->written,
                                w->size);
        if (w->digest[0] && !streq(got, w->digest))
                return tess_err(err, EBADMSG, "the content's digest is %s", got);
        image_layer_stream_done(w->layer); /* (it finishes while the blob is synced) */
        if (fsync(w->fd) < 0)
                return tess_err(err, errno, "fsync '%s': %s", w->tmp_path, strerror(errno));
        return 0;
}

int image_blob_commit_digest(struct image_blob_writer *w, char ret_digest[IMAGE_DIGEST_SIZE],
                             struct tess_error **err)
{
        _cleanup_free_ char *dest = NULL, *dir = NULL;
        _cleanup_close_ int dfd = -1;
        char got[IMAGE_DIGEST_SIZE];
        int r;

        digest_final(w, got);
        r = blob_check(w, got, err);
        if (r < 0) {
                r = tess_err_wrap(err, "committing blob %s", w->digest[0] ? w->digest : got);
                image_blob_abort(w);
                return r;
        }
        dest = image_store_path(w->st, "blobs/sha256/%s", got + 7);
        if (fchmod(w->fd, 0644) < 0 || rename(w->tmp_path, dest) < 0) {
                r = tess_err(err, errno, "committing blob %s: %s", got, strerror(errno));
                image_blob_abort(w);
                return r;
        }
        dir = image_store_path(w->st, "blobs/sha256");
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                fsync(dfd);
        if (ret_digest)
                memcpy(ret_digest, got, sizeof(got));
        /* a layer that failed to unpack leaves nothing: tagging unpacks
         * the blob again, and says why it fails */
        image_layer_stream_commit(w->layer, NULL);
        writer_free(w);
        return 0;
}

int image_blob_commit(struct image_blob_writer *w, struct tess_error **err)
{
        return image_blob_commit_digest(w, NULL, err);
}
