/* layer_writer.h - write a directory tree as a reproducible OCI layer
 * (gzip'd tar), for `tessera image build` and session commits.
 *
 * The tar is written by libarchive (pax restricted: ustar headers, a pax
 * header only where ustar cannot hold a name or size; names are raw bytes,
 * hdrcharset=BINARY, whatever the locale).  Entries are
 * relative ("usr/bin/python3"), in byte order of their paths, directories
 * before their contents; every mtime is `mtime`; owners are numeric (no
 * user or group names); no atime, ctime, xattrs or ACLs; hard links inside
 * the tree are written as links to the first path.  Sockets are skipped.
 * The gzip stream (zlib, level 6) has no name and no timestamp, like
 * `gzip -n`; a zstd one (layer_write_opts) has no dictionary id and the
 * content size left out.  Same tree and mtime, same bytes. */
#ifndef TESS_LAYER_WRITER_H
#define TESS_LAYER_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

struct layer_info {
        char digest[72];  /* "sha256:<hex>" of the gzip'd layer */
        char diff_id[72]; /* "sha256:<hex>" of the tar */
        int64_t size;     /* bytes of the gzip'd layer */
        int64_t tar_size; /* bytes of the tar */
        uint64_t entries;
};

/* Write the tree under `root` (not root itself) to the new file `out`.
 * IN  root, out - borrowed; mtime - seconds since the epoch
 * OUT ret - the digests and sizes
 * RET 0, or negative errno (the partial `out` is removed) */
int layer_write(const char *root, const char *out, int64_t mtime, struct layer_info *ret, struct tess_error **err);

/* How a session commit writes a container's overlayfs upper dir. */
struct layer_write_opts {
        int64_t mtime; /* every entry's mtime; < 0: each file's own */
        bool zstd;     /* zstd (application/vnd.oci.image.layer.v1.tar+zstd), not gzip */
        int level;     /* gzip 1..9 (0: 6), zstd 1..19 (0: 3) */
        int zstd_threads; /* zstd's compressing threads (0: 1) */
        /* `root` is an overlayfs upper dir, maybe of a running container:
         * a whiteout (character device 0/0) becomes an empty ".wh.NAME"
         * file, an opaque directory (xattr trusted.overlay.opaque "y")
         * gets a ".wh..wh..opq" entry first, and a file that shrinks while
         * it is read is padded with zeros (it was being written) */
        bool overlay_upper;
        const char *const *exclude; /* NULL-terminated paths under root ("home/work"), left out whole */
        /* told the tar bytes written so far, about every 8 MiB; optional */
        void (*progress)(void *data, int64_t tar_bytes);
        void *progress_data;
        /* told the bytes written to `out` so far, after each write (before
         * the final fsync): a reader may follow the file; optional */
        void (*written)(void *data, int64_t out_bytes);
        void *written_data;
};
int layer_write_opts(const char *root, const char *out, const struct layer_write_opts *o, struct layer_info *ret,
                     struct tess_error **err);

#endif
