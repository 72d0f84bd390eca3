/* image_layer.c - the unpacked layers, layers/sha256/<diff_id hex>: each
 * made once, in a tmp/ directory that is checked against its diff_id,
 * synced and renamed into place, so that a partial unpack never shows
 * under layers/ (a crash leaves it in tmp/, cleaned at the next open). */
#include "../common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "image-internal.h"

char *image_layer_dir(const struct image_store *st, const char *diff_id)
{
        return image_store_path(st, "layers/sha256/%s", diff_id + strlen("sha256:"));
}

static bool layer_present(const struct image_store *st, const char *hex)
{
        struct stat s;
        return fstatat(st->layersfd, hex, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(s.st_mode);
}

/* Unpack into the fresh directory `tmp` and check the diff_id. */
static int unpack_checked(struct image_store *st, const char *tmp, const char *blob_digest, const char *diff_id,
                          struct tess_error **err)
{
        _cleanup_free_ char *blob = image_blob_path(st, blob_digest);
        _cleanup_close_ int blobfd = -1, rootfd = -1;
        char got[IMAGE_DIGEST_SIZE];
        int r;

        if (!blob)
                return tess_err(err, ENOENT, "blob %s is not in the store", blob_digest);
        blobfd = open(blob, O_RDONLY | O_CLOEXEC);
        if (blobfd < 0)
                return tess_err(err, errno, "opening '%s': %s", blob, strerror(errno));
        rootfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0 || fchmod(rootfd, 0755) < 0)
                return tess_err(err, errno, "opening '%s': %s", tmp, strerror(errno));
        r = layer_unpack_fd(rootfd, blobfd, &st->policy, got, err);
        if (r < 0)
                return r;
        if (!streq(got, diff_id))
                return tess_err(err, EBADMSG, "its uncompressed digest is %s, not the config's diff_id", got);
        if (syncfs(rootfd) < 0)
                return tess_err(err, errno, "syncing '%s': %s", tmp, strerror(errno));
        return 0;
}

int image_layer_unpack(struct image_store *st, const char *blob_digest, const char *diff_id,
                       struct tess_error **err)
{
        const char *hex = diff_id + strlen("sha256:");
        _cleanup_free_ char *tmp = NULL;
        int r;

        if (!image_digest_valid(diff_id))
                return tess_err(err, EINVAL, "'%s' is not a sha256 diff_id", diff_id);
        if (layer_present(st, hex))
                return 0;
        tmp = image_store_tmp_template(st, "layer");
        if (!mkdtemp(tmp))
                return tess_err(err, errno, "creating '%s': %s", tmp, strerror(errno));
        r = unpack_checked(st, tmp, blob_digest, diff_id, err);
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
        if (r < 0)
                return tess_err_wrap(err, "unpacking layer %s (diff_id %s)", blob_digest, diff_id);
        return 0;
}
