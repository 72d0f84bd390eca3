/* fs.h - small file helpers: whole-file reads, atomic writes, mkdir -p. */
#ifndef TESS_FS_H
#define TESS_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

/* Read a whole file of at most max bytes; *ret is NUL-terminated. */
int fs_read_file(const char *path, size_t max, char **ret, size_t *ret_len, struct tess_error **err);
/* Write path.tmp, fsync, rename over path, fsync the directory. */
int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, struct tess_error **err);
/* The same without the fsyncs: readers never see a partial file, but a
 * power loss may lose it (for state that does not outlive a reboot). */
int fs_write_file_replace(const char *path, const void *data, size_t len, mode_t mode, struct tess_error **err);
int fs_mkdir_p(const char *path, mode_t mode, struct tess_error **err);
/* Write all n bytes of p to fd (blocking; EINTR retried).  RET 0, -errno. */
int fs_write_all(int fd, const void *p, size_t n);
/* rm -rf dir, never crossing into a mount (e.g. a rootfs left mounted);
 * a missing dir is success. */
int fs_remove_tree(const char *dir, struct tess_error **err);
/* ls -l's mode column ("drwxr-xr-x") of st_mode: the type ('d', 'l', '-'
 * for a regular file, '?' otherwise) and the nine permission bits. */
void fs_mode_string(mode_t mode, char out[11]);

#endif
