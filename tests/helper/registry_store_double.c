/* registry_store_double.c - a TEST DOUBLE of the image store (src/agent/
 * image.h), only what the registry client calls, so that its tests run
 * before the real store (src/agent/image_*.c) is merged; the Makefile links
 * it into test-tool only while image_*.c is absent.
 *
 * Blobs go to <dir>/blobs/sha256/<hex> as in the real store, written to
 * <dir>/tmp/ and renamed once their sha256 and size match.  A tag checks
 * that the manifest, its config and its layers are all there, then records
 * "<ref> <manifest digest>" in <dir>/tags (one line per reference).
 * Nothing is unpacked. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "agent/image.h"
#include "common/buf.h"
#include "common/fs.h"

struct image_store {
        char *dir;
};

struct image_blob_writer {
        struct image_store *st;
        char digest[72];
        char *tmp;
        int fd;
        int64_t size, n;
        EVP_MD_CTX *md;
};

static bool digest_ok(const char *d)
{
        return d && strncmp(d, "sha256:", 7) == 0 && strlen(d) == 71 && strspn(d + 7, "0123456789abcdef") == 64;
}

int image_store_open(const char *dir, struct image_store **ret, struct tess_error **err)
{
        _cleanup_free_ char *blobs = xasprintf("%s/blobs/sha256", dir), *tmp = xasprintf("%s/tmp", dir);
        int r = fs_mkdir_p(blobs, 0755, err);

        if (r == 0)
                r = fs_mkdir_p(tmp, 0755, err);
        if (r < 0)
                return tess_err_wrap(err, "opening store '%s'", dir);
        *ret = xcalloc(1, sizeof(**ret));
        (*ret)->dir = xstrdup(dir);
        return 0;
}

struct image_store *image_store_close(struct image_store *st)
{
        if (st) {
                free(st->dir);
                free(st);
        }
        return NULL;
}

const char *image_store_dir(const struct image_store *st)
{
        return st->dir;
}

char *image_blob_path(struct image_store *st, const char *digest)
{
        char *p;

        if (!digest_ok(digest))
                return NULL;
        p = xasprintf("%s/blobs/sha256/%s", st->dir, digest + 7);
        if (access(p, F_OK) < 0) {
                free(p);
                return NULL;
        }
        return p;
}

bool image_blob_exists(struct image_store *st, const char *digest)
{
        _cleanup_free_ char *p = image_blob_path(st, digest);
        return p != NULL;
}

int image_blob_begin(struct image_store *st, const char *digest, int64_t size, struct image_blob_writer **ret,
                     struct tess_error **err)
{
        struct image_blob_writer *w;

        if (!digest_ok(digest))
                return tess_err(err, EINVAL, "bad digest '%s'", digest);
        w = xcalloc(1, sizeof(*w));
        w->st = st;
        snprintf(w->digest, sizeof(w->digest), "%s", digest);
        w->size = size;
        w->tmp = xasprintf("%s/tmp/%s.XXXXXX", st->dir, digest + 7);
        w->fd = mkostemp(w->tmp, O_CLOEXEC);
        if (w->fd >= 0)
                fchmod(w->fd, 0644);
        w->md = EVP_MD_CTX_new();
        if (w->fd < 0 || !w->md || !EVP_DigestInit_ex(w->md, EVP_sha256(), NULL)) {
                int e = errno;
                image_blob_abort(w);
                return tess_err(err, e, "creating a blob in '%s/tmp': %s", st->dir, strerror(e));
        }
        *ret = w;
        return 0;
}

int image_blob_write(struct image_blob_writer *w, const void *p, size_t n, struct tess_error **err)
{
        const char *c = p;

        EVP_DigestUpdate(w->md, p, n);
        w->n += (int64_t)n;
        while (n > 0) {
                ssize_t k = write(w->fd, c, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return tess_err(err, errno, "writing '%s': %s", w->tmp, strerror(errno));
                c += k;
                n -= (size_t)k;
        }
        return 0;
}

int image_blob_commit(struct image_blob_writer *w, struct tess_error **err)
{
        unsigned char md[32];
        char got[72];
        unsigned len = 0;
        int r = 0;

        EVP_DigestFinal_ex(w->md, md, &len);
        memcpy(got, "sha256:", 7);
        for (int i = 0; i < 32; i++)
                snprintf(got + 7 + 2 * i, 3, "%02x", md[i]);
        if (!streq(got, w->digest))
                r = tess_err(err, EBADMSG, "the bytes have digest %s", got);
        else if (w->size >= 0 && w->n != w->size)
                r = tess_err(err, EBADMSG, "%lld bytes, not %lld", (long long)w->n, (long long)w->size);
        if (r == 0) {
                _cleanup_free_ char *final = xasprintf("%s/blobs/sha256/%s", w->st->dir, w->digest + 7);
                if (close(w->fd) < 0 || rename(w->tmp, final) < 0)
                        r = tess_err(err, errno, "committing '%s': %s", final, strerror(errno));
                w->fd = -1;
        }
        image_blob_abort(w);
        return r;
}

void image_blob_abort(struct image_blob_writer *w)
{
        if (!w)
                return;
        if (w->fd >= 0)
                close(w->fd);
        unlink(w->tmp);
        free(w->tmp);
        EVP_MD_CTX_free(w->md);
        free(w);
}

static int check_blob(struct image_store *st, json_t *desc, struct tess_error **err)
{
        const char *d = json_string_value(json_object_get(desc, "digest"));
        if (!image_blob_exists(st, d))
                return tess_err(err, ENOENT, "blob %s is missing", d ? d : "(none)");
        return 0;
}

int image_store_tag(struct image_store *st, const char *ref, const char *manifest_digest, struct tess_error **err)
{
        _cleanup_free_ char *mpath = image_blob_path(st, manifest_digest), *tags = NULL, *old = NULL;
        _cleanup_(buf_release) struct buf out = BUF_INIT;
        json_t *m, *layers;
        size_t len, i;
        int r;

        if (!mpath)
                return tess_err(err, ENOENT, "tagging '%s': manifest %s is missing", ref, manifest_digest);
        m = json_load_file(mpath, 0, NULL);
        layers = json_object_get(m, "layers");
        r = check_blob(st, json_object_get(m, "config"), err);
        for (i = 0; r == 0 && i < json_array_size(layers); i++)
                r = check_blob(st, json_array_get(layers, i), err);
        json_decref(m);
        if (r < 0)
                return tess_err_wrap(err, "tagging '%s'", ref);

        tags = xasprintf("%s/tags", st->dir);
        if (fs_read_file(tags, 1 << 20, &old, &len, NULL) == 0) {
                size_t rl = strlen(ref);
                for (char *line = old, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
                        nl = strchr(line, '\n');
                        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
                        if (!(ll > rl && line[rl] == ' ' && memcmp(line, ref, rl) == 0)) {
                                buf_append(&out, line, ll);
                                buf_putc(&out, '\n');
                        }
                        if (!nl)
                                break;
                }
        }
        buf_printf(&out, "%s %s\n", ref, manifest_digest);
        return fs_write_file_atomic(tags, out.data, out.len, 0644, err);
}
