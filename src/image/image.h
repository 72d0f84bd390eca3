/* image.h - a local image store (the agent's; the CLI's for builds): an
 * OCI image layout on disk, content-addressed blobs, layers unpacked once
 * and shared read-only.
 *
 * Layout under the store directory (an OCI image layout plus Tessera's own
 * unpacked layers):
 *
 *   oci-layout, index.json       the OCI image layout; index.json lists every
 *                                tagged image, its reference in the
 *                                annotation org.opencontainers.image.ref.name
 *   blobs/sha256/<hex>           manifests, configs, compressed layers
 *   layers/sha256/<diffid hex>/  one unpacked layer (a directory tree), made
 *                                once, read-only lower dir of overlayfs
 *   tmp/                         partial downloads and unpacks (atomic rename)
 *   used/<manifest hex>          empty; its mtime is when the image was last
 *                                used (image_budget.c)
 *   gc.lock                      held shared while containers start from the
 *                                store, exclusively by gc (image_hold.c)
 *
 * Every blob is verified against its digest before it is committed.  The
 * interface below is what the registry client (src/registry), the
 * importers, the agent and the CLI use; the store itself lives in
 * image_*.c (image-internal.h). */
#ifndef TESSERA_IMAGE_H
#define TESSERA_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct image_store;

/* "sha256:" + 64 hex digits + NUL */
#define IMAGE_DIGEST_SIZE 72

/* The media types of OCI and Docker images' documents and layers (a
 * layer's compression is a suffix: IMAGE_MEDIA_OCI_LAYER "+gzip"). */
#define IMAGE_MEDIA_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define IMAGE_MEDIA_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define IMAGE_MEDIA_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define IMAGE_MEDIA_OCI_LAYER "application/vnd.oci.image.layer.v1.tar"
#define IMAGE_MEDIA_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define IMAGE_MEDIA_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"

/* Bounds on the JSON documents the store reads. */
#define IMAGE_MANIFEST_MAX ((size_t)4 << 20)
#define IMAGE_CONFIG_MAX ((size_t)16 << 20)
#define IMAGE_INDEX_MAX ((size_t)64 << 20)

int image_store_open(const char *dir, struct image_store **ret, struct tess_error **err);
struct image_store *image_store_close(struct image_store *st);
const char *image_store_dir(const struct image_store *st);

/* Whether unpacked layers keep the setuid/setgid bits of their files and
 * their security.capability xattrs (file capabilities); setgid on a
 * directory, which only passes its group on, always stays.  Default true:
 * images such as those with sudo need them inside the container, which
 * runs in its own user and capability sets.  Applies to layers unpacked
 * from then on. */
void image_store_set_allow_setuid(struct image_store *st, bool allow);
/* Whether image_store_tag() unpacks layers (default true).  A store that
 * only gathers blobs, as the client's conversion of an archive for
 * `tessera image import`, turns it off: tagging then only checks that
 * every layer blob is there, and needs no root. */
void image_store_set_unpack_layers(struct image_store *st, bool unpack);
/* Refuse (EFBIG) a layer whose uncompressed tar is larger than max_bytes
 * or holds more than max_entries entries (zip bombs).  Defaults:
 * IMAGE_LAYER_MAX_BYTES and IMAGE_LAYER_MAX_ENTRIES. */
#define IMAGE_LAYER_MAX_BYTES ((uint64_t)64 << 30)
#define IMAGE_LAYER_MAX_ENTRIES ((uint64_t)10000000)
void image_store_set_layer_limits(struct image_store *st, uint64_t max_bytes, uint64_t max_entries);

/* ---- blobs ("sha256:<64 hex>") ---- */

/* "sha256:" and 64 lowercase hex digits. */
bool image_digest_valid(const char *digest);
/* The host's architecture as OCI names it ("amd64", "arm64", ...). */
const char *image_host_arch(void);

bool image_blob_exists(struct image_store *st, const char *digest);
/* Path of a committed blob (caller frees), or NULL if absent. */
char *image_blob_path(struct image_store *st, const char *digest);

/* Streaming write of one blob whose digest is known in advance: the bytes
 * are hashed as they arrive; commit fails with EBADMSG (and keeps nothing)
 * when the digest or the expected size (-1: unknown) does not match.
 * `digest` may be NULL when it is not known (a layer.tar of `docker save`):
 * commit with image_blob_commit_digest(), which names the blob after its
 * bytes.  After a failed image_blob_write() the writer only aborts. */
struct image_blob_writer;
int image_blob_begin(struct image_store *st, const char *digest, int64_t size, struct image_blob_writer **ret,
                     struct tess_error **err);
int image_blob_write(struct image_blob_writer *w, const void *p, size_t n, struct tess_error **err);
int image_blob_commit(struct image_blob_writer *w, struct tess_error **err); /* frees w */
void image_blob_abort(struct image_blob_writer *w);                         /* frees w */
/* image_blob_begin() for a layer blob (a tar, uncompressed, gzip or zstd)
 * whose uncompressed digest the image's config gives as `diff_id`: unless
 * the store has that layer already (or does not unpack layers), its bytes
 * are also unpacked as they arrive, by a thread of the writer's, and a
 * successful image_blob_commit() then also makes the layer when its digest
 * is diff_id; image_store_tag() finds it there.  An unpack that fails
 * leaves nothing, and tagging unpacks the committed blob as it would
 * have. */
int image_blob_begin_layer(struct image_store *st, const char *digest, int64_t size, const char *diff_id,
                           struct image_blob_writer **ret, struct tess_error **err);
/* Commit and write the blob's digest to ret_digest (checked against the
 * digest given to image_blob_begin(), if any); frees w. */
int image_blob_commit_digest(struct image_blob_writer *w, char ret_digest[IMAGE_DIGEST_SIZE],
                             struct tess_error **err);

/* ---- images ---- */

/* Tag the image whose manifest (an OCI or Docker v2 schema 2 image
 * manifest, already a committed blob, as are its config and layers) is
 * `manifest_digest` under reference `ref` ("registry/name:tag" or
 * "name:tag"), unpacking every layer not yet unpacked.  Replaces an older
 * image of the same reference.  An image index (OCI index, Docker manifest
 * list) is resolved here to its linux/<host arch> manifest, which is what
 * index.json then records. */
int image_store_tag(struct image_store *st, const char *ref, const char *manifest_digest, struct tess_error **err);

struct image_info {
        char *ref;             /* reference name */
        char *manifest_digest; /* sha256:... */
        char *config_digest;   /* the image id */
        char *architecture;    /* "amd64", ... */
        int64_t size;          /* compressed layers, bytes */
        char **labels;         /* NULL-terminated "key=value" pairs, from the config */
        char **env;            /* NULL-terminated, the config's Env */
        char **entrypoint, **cmd;
        char *working_dir, *user;
        char **layer_dirs;     /* NULL-terminated unpacked layers, lowest first */
        char *created;         /* the config's RFC 3339 creation time, or NULL */
        int64_t last_used;     /* usec since the epoch: the last tag (pull, import) or
                                  image_store_use(); 0 when unknown */
};

/* Look an image up by reference; ENOENT when absent.  A reference without
 * a tag or digest ("busybox") also finds "busybox:latest". */
int image_store_get(struct image_store *st, const char *ref, struct image_info *ret, struct tess_error **err);
void image_info_free(struct image_info *info);
/* Every tagged image; *ret is an array of *n entries (free each, then it).
 * An image whose manifest or config cannot be read is listed with its ref
 * and manifest_digest only. */
int image_store_list(struct image_store *st, struct image_info **ret, int *n, struct tess_error **err);
/* image_store_get() for a container about to be created from the image:
 * also records the use (image_info.last_used, what the disk budget's LRU
 * order goes by).  Call it under an image_hold. */
int image_store_use(struct image_store *st, const char *ref, struct image_info *ret, struct tess_error **err);
/* Untag; blobs and layers stay until image_store_gc. */
int image_store_remove(struct image_store *st, const char *ref, struct tess_error **err);
/* Delete blobs and unpacked layers no tagged image uses, except those in
 * `in_use` (NULL-terminated layer dirs of running containers, as
 * image_info.layer_dirs gives them), and stale tmp/ entries.
 * *freed_bytes (optional) gets the disk space given back.  Blobs committed
 * but not yet tagged are unused: gc waits for the image_holds of the store
 * (pulls, imports, container starts) to end, and they for it. */
int image_store_gc(struct image_store *st, const char *const *in_use, int64_t *freed_bytes, struct tess_error **err);

/* ---- holds: the store in use (image_hold.c) ---- */

/* Whoever writes blobs into the store or starts a container from one of
 * its images holds it from before it looks the image up until the blobs
 * are tagged or the container exists (its record names its layers): gc
 * and the disk budget, in this process or another, wait for every hold to
 * end, and a hold waits for a gc that runs.  So a container start can never
 * see its image removed between the lookup and the mount.  Holds are
 * shared (flock LOCK_SH on <store>/gc.lock, one open file each). */
struct image_hold;
int image_hold_begin(struct image_store *st, struct image_hold **ret, struct tess_error **err);
struct image_hold *image_hold_end(struct image_hold *h); /* accepts NULL, returns NULL */

/* ---- the disk budget (image_budget.c) ---- */

/* The layer dirs of every container that exists (running or not yet
 * removed), NULL-terminated in *ret (caller frees each, then it); called
 * only over budget, under the gc lock (no container is being created) and
 * the store lock. */
typedef int (*image_in_use_fn)(void *data, char ***ret, struct tess_error **err);

struct image_removal {
        char *ref;
        int64_t last_used; /* usec since the epoch */
        int64_t bytes;     /* what untagging it let gc free */
};

struct image_budget_report {
        int64_t before, after; /* bytes of blobs/ and layers/, each file once */
        struct image_removal *removed; /* least recently used first */
        size_t n_removed;
};

/* Bring the store within `budget` bytes (blobs and unpacked layers, each
 * file once): when it takes more, untag the least recently used images
 * that no container uses (an image is in use when every layer of it is one
 * of in_use's), one after the other until what the rest reaches fits, then
 * gc.  Images in use are never untagged; when they alone take more than the
 * budget, it stays exceeded.  A store within its budget is left as it is.
 * With `wait` false, EBUSY at once when a hold or gc is in progress.
 * OUT ret - release with image_budget_report_release(). */
int image_store_apply_budget(struct image_store *st, int64_t budget, bool wait, image_in_use_fn in_use,
                             void *in_use_data, struct image_budget_report *ret, struct tess_error **err);
void image_budget_report_release(struct image_budget_report *r);

/* ---- importers ---- */

/* An OCI image layout directory (or a tar of one), or a `docker save`
 * archive: every image it names is copied into the store and tagged under
 * the name it records (io.containerd.image.name or
 * org.opencontainers.image.ref.name in index.json, else manifest.json's
 * RepoTags); `ref_override`, if not NULL, names the single image instead
 * (EINVAL when the archive holds several).  The path may be a directory or
 * a tar (compressed or not) of either.  The references tagged are returned
 * NULL-terminated in *refs (optional; free each, then the array). */
int image_import(struct image_store *st, const char *path, const char *ref_override, char ***refs,
                 struct tess_error **err);

#endif
