/* blob_store.c - see blob_store.h. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <time.h>

#include "common/crypto.h"
#include "common/fs.h"
#include "manager/images/blob_store.h"

#define UPLOADS_MAX  32 /* hash states kept; the oldest gives way (it is rebuilt from its file) */
#define REHASH_CHUNK (1u << 20)

/* The running hash of one upload in progress. */
struct upload {
        char hex[65]; /* its file in uploads/: the digest's hex, or "u-<upload id>" */
        EVP_MD_CTX *md;
        int64_t offset; /* bytes hashed */
        int64_t used;   /* last use, for eviction */
};

struct blob_store {
        char *dir;
        int blobsfd, uploadsfd;
        struct upload uploads[UPLOADS_MAX];
        int64_t clock;
};

bool blob_digest_valid(const char *digest)
{
        if (!digest || strncmp(digest, "sha256:", 7) != 0 || strlen(digest) != 7 + 64)
                return false;
        for (const char *p = digest + 7; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

static int open_dir(const char *path, int *ret, struct tess_error **err)
{
        int r = fs_mkdir_p(path, 0700, err);
        if (r < 0)
                return r;
        *ret = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*ret < 0)
                return tess_err(err, errno, "opening %s: %s", path, strerror(errno));
        return 0;
}

int blob_store_open(const char *dir, struct blob_store **ret, struct tess_error **err)
{
        struct blob_store *bs = xcalloc(1, sizeof(*bs));
        _cleanup_free_ char *blobs = xasprintf("%s/blobs/sha256", dir), *uploads = xasprintf("%s/uploads", dir);

        bs->dir = xstrdup(dir);
        bs->blobsfd = bs->uploadsfd = -1;
        if (open_dir(blobs, &bs->blobsfd, err) < 0 || open_dir(uploads, &bs->uploadsfd, err) < 0) {
                blob_store_close(bs);
                return tess_err_wrap(err, "opening the image blob store");
        }
        *ret = bs;
        return 0;
}

static void upload_drop(struct upload *u)
{
        if (u->md)
                EVP_MD_CTX_free(u->md);
        *u = (struct upload){ 0 };
}

struct blob_store *blob_store_close(struct blob_store *bs)
{
        if (!bs)
                return NULL;
        for (int i = 0; i < UPLOADS_MAX; i++)
                upload_drop(&bs->uploads[i]);
        if (bs->blobsfd >= 0)
                close(bs->blobsfd);
        if (bs->uploadsfd >= 0)
                close(bs->uploadsfd);
        free(bs->dir);
        free(bs);
        return NULL;
}

int blob_store_size(struct blob_store *bs, const char *digest, int64_t *ret_size)
{
        struct stat st;

        if (!blob_digest_valid(digest) || fstatat(bs->blobsfd, digest + 7, &st, 0) < 0 || !S_ISREG(st.st_mode))
                return -ENOENT;
        *ret_size = st.st_size;
        return 0;
}

int64_t blob_store_upload_offset(struct blob_store *bs, const char *digest)
{
        struct stat st;

        if (!blob_digest_valid(digest) || fstatat(bs->uploadsfd, digest + 7, &st, 0) < 0)
                return 0;
        return st.st_size;
}

/* The hash state of upload `hex`, created empty (or reused) in a free or
 * the least recently used slot. */
static struct upload *upload_slot(struct blob_store *bs, const char *hex)
{
        struct upload *oldest = &bs->uploads[0];

        for (int i = 0; i < UPLOADS_MAX; i++) {
                struct upload *u = &bs->uploads[i];
                if (u->md && streq(u->hex, hex)) {
                        u->used = ++bs->clock;
                        return u;
                }
                if (!u->md || u->used < oldest->used)
                        oldest = u;
        }
        upload_drop(oldest);
        snprintf(oldest->hex, sizeof(oldest->hex), "%s", hex);
        oldest->md = EVP_MD_CTX_new();
        if (!oldest->md)
                abort();
        EVP_DigestInit_ex(oldest->md, EVP_sha256(), NULL);
        oldest->used = ++bs->clock;
        return oldest;
}

/* Bring the hash up to the partial file's `size` bytes, from the start
 * when it does not match them (a restart, an eviction). */
static int upload_catch_up(struct upload *u, int fd, int64_t size, struct tess_error **err)
{
        _cleanup_free_ char *chunk = NULL;

        if (u->offset == size)
                return 0;
        EVP_DigestInit_ex(u->md, EVP_sha256(), NULL);
        u->offset = 0;
        chunk = xmalloc(REHASH_CHUNK);
        while (u->offset < size) {
                ssize_t n = pread(fd, chunk, REHASH_CHUNK, u->offset);
                if (n <= 0)
                        return tess_err(err, EIO, "reading upload %.12s: %s", u->hex,
                                        n < 0 ? strerror(errno) : "short");
                EVP_DigestUpdate(u->md, chunk, (size_t)n);
                u->offset += n;
        }
        return 0;
}

static void hex_of(const unsigned char *d, char out[65])
{
        static const char hex[] = "0123456789abcdef";
        for (int i = 0; i < 32; i++) {
                out[2 * i] = hex[d[i] >> 4];
                out[2 * i + 1] = hex[d[i] & 15];
        }
        out[64] = '\0';
}

/* Check the whole upload against the digest `want` (its hex) and move it
 * into blobs/. */
static int upload_commit(struct blob_store *bs, struct upload *u, int fd, const char *want, struct tess_error **err)
{
        unsigned char d[32];
        unsigned dn = 0;
        char got[65];

        EVP_DigestFinal_ex(u->md, d, &dn);
        hex_of(d, got);
        if (!streq(got, want)) {
                unlinkat(bs->uploadsfd, u->hex, 0);
                int r = tess_err(err, EBADMSG, "blob sha256:%s does not match its digest: its %lld bytes are sha256:%s",
                                 want, (long long)u->offset, got);
                upload_drop(u);
                return r;
        }
        if (fsync(fd) < 0 || renameat(bs->uploadsfd, u->hex, bs->blobsfd, want) < 0)
                return tess_err(err, EIO, "committing blob sha256:%s: %s", want, strerror(errno));
        upload_drop(u);
        return 0;
}

static bool upload_id_valid(const char *id)
{
        return id && strlen(id) == UUID_STR_LEN - 1 && strspn(id, "0123456789abcdef-") == UUID_STR_LEN - 1;
}

/* Append to the upload in file `name` of uploads/; with `want` (a
 * digest's hex), commit it as that blob. */
static int upload_append(struct blob_store *bs, const char *name, int64_t offset, const void *p, size_t n,
                         const char *want, int64_t *ret_offset, struct tess_error **err)
{
        _cleanup_close_ int fd = -1;
        struct upload *u;
        struct stat st;

        fd = openat(bs->uploadsfd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || fstat(fd, &st) < 0)
                return tess_err(err, EIO, "upload %s: %s", name, strerror(errno));
        *ret_offset = st.st_size;
        if (offset != st.st_size)
                return tess_err(err, ERANGE, "the upload is at byte %lld, not %lld", (long long)st.st_size,
                                (long long)offset);
        if ((int64_t)n > BLOB_MAX_BYTES - offset)
                return tess_err(err, EFBIG, "a blob is at most %lld bytes", (long long)BLOB_MAX_BYTES);
        u = upload_slot(bs, name);
        if (upload_catch_up(u, fd, st.st_size, err) < 0) {
                upload_drop(u);
                return -EIO;
        }
        for (size_t done = 0; done < n;) {
                ssize_t w = pwrite(fd, (const char *)p + done, n - done, offset + (int64_t)done);
                if (w < 0) {
                        int e = errno;
                        if (ftruncate(fd, offset) < 0)
                                upload_drop(u); /* rehashed from the file next time */
                        return tess_err(err, EIO, "writing the upload %s: %s", name, strerror(e));
                }
                done += (size_t)w;
        }
        EVP_DigestUpdate(u->md, p, n);
        u->offset += (int64_t)n;
        *ret_offset = u->offset;
        futimens(fd, NULL); /* touched: not stale */
        return want ? upload_commit(bs, u, fd, want, err) : 0;
}

int blob_store_upload(struct blob_store *bs, const char *digest, int64_t offset, const void *p, size_t n, bool last,
                      int64_t *ret_offset, struct tess_error **err)
{
        int64_t size;

        if (!blob_digest_valid(digest))
                return tess_err(err, EINVAL, "'%s' is not a sha256 digest", digest ? digest : "");
        if (blob_store_size(bs, digest, &size) == 0) {
                *ret_offset = size;
                return 0;
        }
        int r = upload_append(bs, digest + 7, offset, p, n, last ? digest + 7 : NULL, ret_offset, err);
        return r < 0 ? tess_err_wrap(err, "blob %s", digest) : 0;
}

int blob_store_upload_id(struct blob_store *bs, const char *id, int64_t offset, const void *p, size_t n,
                         const char *digest, int64_t *ret_offset, struct tess_error **err)
{
        _cleanup_free_ char *name = NULL;

        if (!upload_id_valid(id))
                return tess_err(err, ENOENT, "no upload '%.64s'", id ? id : "");
        if (digest && !blob_digest_valid(digest))
                return tess_err(err, EINVAL, "'%s' is not a sha256 digest", digest);
        name = xasprintf("u-%s", id);
        return upload_append(bs, name, offset, p, n, digest ? digest + 7 : NULL, ret_offset, err);
}

int blob_store_upload_id_offset(struct blob_store *bs, const char *id, int64_t *ret_offset)
{
        _cleanup_free_ char *name = upload_id_valid(id) ? xasprintf("u-%s", id) : NULL;
        struct stat st;

        if (!name || fstatat(bs->uploadsfd, name, &st, 0) < 0)
                return -ENOENT;
        *ret_offset = st.st_size;
        return 0;
}

int blob_store_upload_id_start(struct blob_store *bs, char ret_id[UUID_STR_LEN], struct tess_error **err)
{
        _cleanup_free_ char *name = NULL;

        uuid_generate_str(ret_id);
        name = xasprintf("u-%s", ret_id);
        int fd = openat(bs->uploadsfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return tess_err(err, EIO, "starting an upload: %s", strerror(errno));
        close(fd);
        return 0;
}

int blob_store_open_blob(struct blob_store *bs, const char *digest, int *ret_fd, int64_t *ret_size,
                         struct tess_error **err)
{
        struct stat st;
        int fd;

        if (!blob_digest_valid(digest))
                return tess_err(err, ENOENT, "no blob '%s'", digest ? digest : "");
        fd = openat(bs->blobsfd, digest + 7, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return tess_err(err, errno == ENOENT ? ENOENT : EIO, "blob %s: %s", digest, strerror(errno));
        if (fstat(fd, &st) < 0) {
                close(fd);
                return tess_err(err, EIO, "blob %s: %s", digest, strerror(errno));
        }
        *ret_fd = fd;
        *ret_size = st.st_size;
        return 0;
}

int blob_store_read(struct blob_store *bs, const char *digest, size_t max, char **ret, size_t *ret_len,
                    struct tess_error **err)
{
        _cleanup_close_ int fd = -1;
        int64_t size, done = 0;
        int r = blob_store_open_blob(bs, digest, &fd, &size, err);

        if (r < 0)
                return r;
        if (size > (int64_t)max)
                return tess_err(err, EFBIG, "blob %s is larger than %zu bytes", digest, max);
        _cleanup_free_ char *p = xmalloc((size_t)size + 1);
        while (done < size) {
                ssize_t n = pread(fd, p + done, (size_t)(size - done), done);
                if (n <= 0)
                        return tess_err(err, EIO, "reading blob %s: %s", digest, n < 0 ? strerror(errno) : "short");
                done += n;
        }
        p[size] = '\0';
        *ret = TAKE_PTR(p);
        *ret_len = (size_t)size;
        return 0;
}

static bool kept(const char *hex, const char *const *keep)
{
        for (; keep && *keep; keep++)
                if (streq(*keep + 7, hex))
                        return true;
        return false;
}

/* Remove the entries of dirfd older than `before` (and, with keep, not kept). */
static void sweep(struct blob_store *bs, int dirfd, const char *const *keep, bool use_keep, time_t before)
{
        int fd = dup(dirfd);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *e;
        struct stat st;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        rewinddir(d);
        while ((e = readdir(d))) {
                if (strlen(e->d_name) != 64 || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (st.st_mtime >= before || (use_keep && kept(e->d_name, keep)))
                        continue;
                if (unlinkat(dirfd, e->d_name, 0) == 0 && !use_keep)
                        for (int i = 0; i < UPLOADS_MAX; i++)
                                if (bs->uploads[i].md && streq(bs->uploads[i].hex, e->d_name))
                                        upload_drop(&bs->uploads[i]);
        }
        closedir(d);
}

int blob_store_gc(struct blob_store *bs, const char *const *keep, int64_t min_age_sec, struct tess_error **err UNUSED)
{
        time_t before = time(NULL) - (time_t)min_age_sec;

        sweep(bs, bs->uploadsfd, NULL, false, before);
        sweep(bs, bs->blobsfd, keep, true, before);
        return 0;
}
