/* image-internal.h - what the files of the image store share (image.h is
 * the interface the rest of Tessera uses):
 *
 *   image_store.c     the store handle, its directory, lock and tmp/ entries,
 *                     the paths of blobs
 *   image_blob.c      content-addressed blobs and the verifying writer
 *   image_manifest.c  parsing manifests, indexes and image configs (pure)
 *   image_index.c     index.json: tag, get, list, remove; when images were last used
 *   image_gc.c        garbage collection: what images reach, the sweep
 *   image_hold.c      holds (containers starting, pulls) against gc: gc.lock
 *   image_lru.c       which images to untag to fit a disk budget (pure)
 *   image_budget.c    the disk budget: measuring the store, untagging, gc
 *   image_layer_sizes.c  the sizes of unpacked layers, cached per handle
 *   image_path.c      file operations confined beneath a directory fd
 *   image_unpack.c    one layer tar -> a directory, safely (fuzzed)
 *   layer_inflate.c   a layer blob decompressed: gzip (ISA-L), zstd or none
 *   image_queue.c     bytes handed from one thread to another (streamed unpacks)
 *   image_layer.c     unpacking a layer once per diff_id into layers/, also
 *                     while its blob downloads
 *   image_import.c    OCI layouts and `docker save` archives
 *
 * The store runs as root: unpacking preserves owners and makes overlay
 * whiteouts (character devices 0/0, trusted.* xattrs). */
#ifndef TESSERA_IMAGE_INTERNAL_H
#define TESSERA_IMAGE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/beneath.h"
#include "common/error.h"
#include "image/image.h"

#define IMAGE_ANNOTATION_REF "org.opencontainers.image.ref.name"
#define IMAGE_ANNOTATION_IMAGE_NAME "io.containerd.image.name"


/* What unpacking a layer may do; see image_store_set_*() in image.h. */
struct layer_policy {
        bool unpack; /* false: tagging only checks the layer blobs are there */
        bool allow_setuid;
        uint64_t max_bytes;
        uint64_t max_entries;
};

struct image_store {
        char *dir;
        pthread_mutex_t lock; /* the store lock between threads (flock is per open file) */
        int dirfd;    /* the store directory; flock()ed by mutations */
        int tmpfd;    /* tmp/ */
        int layersfd; /* layers/sha256/ */
        int usedfd;   /* used/: an empty file per manifest, its mtime the last use */
        struct layer_policy policy;
        struct image_layer_sizes *layer_sizes; /* the sizes image_budget.c measured (image_layer_sizes.c) */
};

/* ---- image_store.c ---- */

/* "<store>/<fmt...>"; caller frees. */
char *image_store_path(const struct image_store *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Exclusive lock of the store (a mutex, then flock on its directory) for
 * index.json updates and gc, between threads and processes; it does not
 * nest. */
int image_store_lock(struct image_store *st, struct tess_error **err);
void image_store_unlock(struct image_store *st);
/* A fresh path "<store>/tmp/<pid>-<kind>-XXXXXX" for mkostemp/mkdtemp; the
 * pid lets image_store_clean_tmp() tell live entries from a crash's. */
char *image_store_tmp_template(const struct image_store *st, const char *kind);
/* Remove the tmp/ entries of processes that are gone. */
int image_store_clean_tmp(struct image_store *st, struct tess_error **err);

/* ---- image_blob.c ---- */

/* Read a committed blob of at most max bytes; *ret is NUL-terminated. */
int image_blob_read(struct image_store *st, const char *digest, size_t max, char **ret, size_t *ret_len,
                    struct tess_error **err);

/* ---- image_manifest.c ---- */

struct image_descriptor {
        char *media_type;
        char *digest;
        int64_t size;
        char *os, *architecture; /* of an index entry's platform, or NULL */
        char *ref_name;          /* the org.opencontainers.image.ref.name annotation, or NULL */
        char *image_name;        /* the io.containerd.image.name annotation (docker save), or NULL */
};

/* An image manifest (config + layers) or an image index (manifests). */
struct image_manifest {
        bool is_index;
        char *media_type;
        struct image_descriptor config;
        struct image_descriptor *layers;
        size_t n_layers;
        struct image_descriptor *manifests;
        size_t n_manifests;
};

struct image_config {
        char *architecture, *os, *created;
        char **labels, **env, **entrypoint, **cmd; /* NULL-terminated, or NULL */
        char *working_dir, *user;
        char **diff_ids; /* NULL-terminated "sha256:..." */
        size_t n_diff_ids;
};

/* Parse an OCI/Docker image manifest or index; EINVAL (with why) when it
 * is neither, or names a digest or media type the store does not take. */
int image_manifest_parse(const char *p, size_t n, struct image_manifest *ret, struct tess_error **err);
void image_manifest_release(struct image_manifest *m);
/* The entry of an index for linux and the host's architecture, or NULL. */
const struct image_descriptor *image_manifest_pick_platform(const struct image_manifest *index);

int image_config_parse(const char *p, size_t n, struct image_config *ret, struct tess_error **err);
void image_config_release(struct image_config *c);

/* Read and parse a committed manifest blob / config blob. */
int image_manifest_load(struct image_store *st, const char *digest, struct image_manifest *ret,
                        struct tess_error **err);
int image_config_load(struct image_store *st, const char *digest, struct image_config *ret, struct tess_error **err);

/* A NULL-terminated string vector and its destructor (accepts NULL). */
void image_strv_free(char **v);

/* ---- image_path.c ---- */

/* Open directory `path` (a cleaned path, "" = root) beneath rootfd without
 * following any symlink; with `create`, make missing directories (0755).
 * ELOOP when a component is a symlink, ENOTDIR when it is not a directory. */
int layer_open_dir(int rootfd, const char *path, bool create);
/* Remove `name` in dirfd, recursively for a directory, never following
 * symlinks; add the blocks it held to *freed (optional).  0 if absent. */
int layer_remove(int dirfd, const char *name, int64_t *freed);

/* ---- image_queue.c ---- */

#define IMAGE_QUEUE_CHUNK ((size_t)128 << 10)
#define IMAGE_QUEUE_DEPTH 8 /* chunks: at most 1 MiB queued */

struct image_queue_chunk;
/* One producer thread, one consumer thread. */
struct image_queue {
        pthread_mutex_t lock;
        pthread_cond_t cond; /* the queue changed (either side waits on it) */
        struct image_queue_chunk *head, *tail;
        size_t depth;
        bool closed, broken; /* by the producer: the end, and whether the bytes broke off */
        bool failed;         /* by the consumer: it reads no more */
        struct image_queue_chunk *fill; /* the producer's, being filled */
        struct image_queue_chunk *held; /* the consumer's, last read */
        struct image_queue_chunk *spare; /* read, to be filled again */
};

void image_queue_init(struct image_queue *q);
void image_queue_release(struct image_queue *q); /* once both sides are done */
/* Producer: queue n bytes, waiting while the queue is full; false once
 * the consumer failed (the bytes are dropped). */
bool image_queue_write(struct image_queue *q, const void *p, size_t n);
/* Producer: no more bytes; complete false when they broke off (the
 * consumer's next read fails).  False when the consumer failed. */
bool image_queue_close(struct image_queue *q, bool complete);
/* Consumer: the next chunk in *ret, valid until the next call; its length,
 * 0 at the end, -1 when the producer broke off. */
ssize_t image_queue_read(struct image_queue *q, const void **ret);
/* Consumer: read no more; queued and later bytes are dropped. */
void image_queue_fail(struct image_queue *q);

/* ---- image_unpack.c ---- */

/* Unpack one layer (a tar, uncompressed or gzip or zstd) from an fd or
 * from memory into the directory rootfd, turning whiteouts into overlayfs
 * ones; ret_diff_id gets the digest of the uncompressed tar.  On failure
 * rootfd holds a partial tree for the caller to remove. */
int layer_unpack_fd(int rootfd, int blobfd, const struct layer_policy *pol, char ret_diff_id[IMAGE_DIGEST_SIZE],
                    struct tess_error **err);
int layer_unpack_mem(int rootfd, const void *p, size_t n, const struct layer_policy *pol,
                     char ret_diff_id[IMAGE_DIGEST_SIZE], struct tess_error **err);
/* The same, from the bytes a producer thread writes to q, until it closes
 * it; then the queue is failed (the producer's writes return false): on
 * failure, and after a gzip stream whose trailing bytes are ignored. */
int layer_unpack_queue(int rootfd, struct image_queue *q, const struct layer_policy *pol,
                       char ret_diff_id[IMAGE_DIGEST_SIZE], struct tess_error **err);

/* ---- image_layer.c ---- */

/* "<store>/layers/sha256/<hex of diff_id>"; caller frees. */
char *image_layer_dir(const struct image_store *st, const char *diff_id);
/* Make layers/sha256/<diff_id hex> from the layer blob `blob_digest`
 * unless it exists: unpacked in tmp/, checked against diff_id (EBADMSG),
 * synced, renamed into place. */
int image_layer_unpack(struct image_store *st, const char *blob_digest, const char *diff_id,
                       struct tess_error **err);

/* The same while the blob is being written: begin starts a thread that
 * unpacks the bytes given to write (the blob writer's, as they arrive)
 * into tmp/, unless the store has the layer or does not unpack (then *ret
 * is NULL, as when no thread can start: the blob is unpacked when tagged).
 * done: no more bytes.  commit (after the blob's): waits for the thread,
 * checks the diff_id, syncs and renames the layer into place; an unpack
 * that failed leaves nothing.  abort: stops and removes it.  commit and
 * abort free s; every call accepts NULL.
 * RET begin: 1 with a thread, 0 without */
struct image_layer_stream;
int image_layer_stream_begin(struct image_store *st, const char *diff_id, struct image_layer_stream **ret);
void image_layer_stream_write(struct image_layer_stream *s, const void *p, size_t n);
void image_layer_stream_done(struct image_layer_stream *s);
int image_layer_stream_commit(struct image_layer_stream *s, struct tess_error **err);
void image_layer_stream_abort(struct image_layer_stream *s);

/* ---- image_index.c ---- */

/* Record that the image manifest `digest` is used now (used/<hex>'s
 * mtime); best effort: an image without a record counts as used when its
 * manifest blob was written. */
void image_use_record(struct image_store *st, const char *digest);
/* When the image manifest `digest` was last used (usec since the epoch),
 * 0 when unknown. */
int64_t image_last_used(struct image_store *st, const char *digest);
/* Drop the index entries tagged exactly `refs` (NULL-terminated), in one
 * rewrite of index.json (store lock held). */
int image_index_untag_locked(struct image_store *st, char *const *refs, struct tess_error **err);

/* Fill *ret for the image manifest `manifest_digest` tagged `ref`. */
int image_info_load(struct image_store *st, const char *ref, const char *manifest_digest, struct image_info *ret,
                    struct tess_error **err);
/* The entries of index.json, parsed. */
int image_index_load(struct image_store *st, struct image_descriptor **ret, size_t *ret_n, struct tess_error **err);
void image_descriptors_free(struct image_descriptor *d, size_t n);

/* ---- image_gc.c ---- */

/* Call visit(data, key) for what the image manifest or index `digest`
 * reaches: every blob ("sha256:<hex>": manifests, configs, layer blobs) and
 * every unpacked layer ("<diff_id hex>").  Absent blobs reach nothing. */
typedef void (*image_reach_fn)(void *data, bool layer, const char *key);
int image_reach(struct image_store *st, const char *digest, image_reach_fn visit, void *data,
                struct tess_error **err);
/* The diff_id hex of a layer dir (image_info.layer_dirs) of this store, or
 * NULL for another path. */
const char *image_layer_dir_key(const struct image_store *st, const char *dir);
/* gc with the gc lock and the store lock held. */
int image_gc_locked(struct image_store *st, const char *const *in_use, int64_t *freed, struct tess_error **err);

/* ---- image_hold.c ---- */

/* The gc lock: exclusive, against every image_hold (EBUSY at once unless
 * `wait`).  *ret_fd is the lock; image_gc_unlock() it. */
int image_gc_lock(struct image_store *st, bool wait, int *ret_fd, struct tess_error **err);
void image_gc_unlock(int fd);

/* ---- image_lru.c ---- */

/* An image as the budget sees it: what it reaches (indexes into the
 * objects, blobs and layers, whose sizes are known), when it was last used
 * and whether a container uses it. */
struct image_lru_image {
        const char *ref; /* orders images last used at the same time */
        int64_t last_used;
        bool in_use;
        const size_t *objects;
        size_t n_objects;
};

/* Choose the images to untag so that the objects still reached by the
 * others, or pinned (in use by containers), take at most `budget` bytes:
 * least recently used first, never one in use, none when they fit already.
 * OUT ret_chosen - the indexes of the images chosen, in that order (room
 * for n); ret_freed - what each one frees (room for n); ret_kept - the
 * bytes of the objects still reached.  RET how many were chosen. */
size_t image_lru_plan(const struct image_lru_image *images, size_t n, const int64_t *bytes, const bool *pinned,
                      size_t n_objects, int64_t budget, size_t *ret_chosen, int64_t *ret_freed, int64_t *ret_kept);

/* ---- image_layer_sizes.c ---- */

/* The cache of layer sizes a store handle keeps: a layer's bytes by the
 * hex of its diff_id.  Thread-safe. */
struct image_layer_sizes *image_layer_sizes_new(void);
struct image_layer_sizes *image_layer_sizes_free(struct image_layer_sizes *c);
bool image_layer_sizes_get(struct image_layer_sizes *c, const char *hex, int64_t *ret);
void image_layer_sizes_put(struct image_layer_sizes *c, const char *hex, int64_t bytes);

#endif
