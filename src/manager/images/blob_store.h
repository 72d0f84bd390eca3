/* blob_store.h - the manager's store of image blobs (manifests, configs,
 * layers) that `tessera image import` uploads (api_image_import.c) and
 * agents pull (api_registry.c).  Under its directory (state_dir/images):
 *
 *   blobs/sha256/<hex>   committed blobs, each verified against its name
 *   uploads/<hex>        an upload in progress: the bytes received so far
 *
 * Uploads are chunked and resumable: an upload's offset is the size of its
 * partial file, and each chunk must start there.  The SHA-256 of the bytes
 * so far is kept in memory between chunks (after a manager restart the
 * partial file is hashed again, once), so no chunk is read twice and no
 * layer is ever held in memory whole.  The last chunk commits: a digest
 * mismatch deletes the upload.  blob_store_gc() removes stale uploads and
 * blobs no image uses. */
#ifndef TESS_BLOB_STORE_H
#define TESS_BLOB_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/crypto.h"
#include "common/error.h"

#define BLOB_MAX_BYTES ((int64_t)64 << 30) /* one blob, as the agent's layer limit */
#define BLOB_STALE_SEC (24 * 3600)         /* an upload untouched this long is abandoned */

struct blob_store;

/* "sha256:" and 64 lowercase hex digits. */
bool blob_digest_valid(const char *digest);

/* Open (creating its directories) the store in `dir`. */
int blob_store_open(const char *dir, struct blob_store **ret, struct tess_error **err);
struct blob_store *blob_store_close(struct blob_store *bs);

/* The size of a committed blob, or -ENOENT. */
int blob_store_size(struct blob_store *bs, const char *digest, int64_t *ret_size);
/* How many bytes an upload of `digest` holds so far (0: none). */
int64_t blob_store_upload_offset(struct blob_store *bs, const char *digest);

/* Append n bytes at `offset` to the upload of `digest`; with `last`, check
 * the whole against the digest and commit.  A blob already committed
 * succeeds at once.  *ret_offset gets the upload's offset afterwards (its
 * size when committed), also on -ERANGE.
 * RET 0; -ERANGE offset is not the upload's; -EFBIG over BLOB_MAX_BYTES;
 * -EBADMSG the bytes do not match the digest (the upload is gone);
 * -EINVAL a bad digest; -EIO. */
int blob_store_upload(struct blob_store *bs, const char *digest, int64_t offset, const void *p, size_t n, bool last,
                      int64_t *ret_offset, struct tess_error **err);

/* Uploads whose digest comes at the end (the OCI distribution API's
 * pushes, api_registry.c), named by an id the store hands out:
 * start one, append chunks at its offset, and give the digest with the
 * last (n may be 0) to check and commit it.
 * RET as blob_store_upload; -ENOENT an unknown id */
int blob_store_upload_id_start(struct blob_store *bs, char ret_id[UUID_STR_LEN], struct tess_error **err);
int blob_store_upload_id(struct blob_store *bs, const char *id, int64_t offset, const void *p, size_t n,
                         const char *digest, int64_t *ret_offset, struct tess_error **err);
int blob_store_upload_id_offset(struct blob_store *bs, const char *id, int64_t *ret_offset);

/* Open a committed blob for reading (caller closes *ret_fd). -ENOENT if absent. */
int blob_store_open_blob(struct blob_store *bs, const char *digest, int *ret_fd, int64_t *ret_size,
                         struct tess_error **err);
/* Read a committed blob of at most max bytes (EFBIG beyond); *ret is
 * NUL-terminated, caller frees. */
int blob_store_read(struct blob_store *bs, const char *digest, size_t max, char **ret, size_t *ret_len,
                    struct tess_error **err);

/* Remove uploads untouched for min_age_sec, and committed blobs older than
 * that which are not in `keep` (NULL-terminated digests). */
int blob_store_gc(struct blob_store *bs, const char *const *keep, int64_t min_age_sec, struct tess_error **err);

#endif
