/* beneath.h - paths from outside (archive entries, users' paths in their
 * folders) confined to one directory: lexical cleaning that refuses "..",
 * the checks a user's path gets before it is used, and opening files
 * beneath a directory fd so that nothing — "..", an absolute path, a
 * symlink made inside a session pointing at /etc — leads out of it. */
#ifndef TESS_BENEATH_H
#define TESS_BENEATH_H

#include <sys/types.h>

#include "common/error.h"

/* The longest path (bytes) and deepest one (components) accepted: keeps
 * every walk below the fd and stack limits. */
#define BENEATH_PATH_MAX  4095
#define BENEATH_DEPTH_MAX 256

/* Normalize a relative path: leading '/' and "." or empty components
 * dropped ("" is the directory itself).  EPERM for a ".." component,
 * ENAMETOOLONG past the limits above.  *ret: caller frees. */
int beneath_clean(const char *path, char **ret);

/* beneath_clean() for a path a user typed (API, CLI), with the reason in
 * err (EINVAL): also refuses bytes that are not UTF-8, control characters
 * and components longer than NAME_MAX.  The message names the path. */
int beneath_user_path(const char *path, char **ret, struct tess_error **err);

/* openat(rootfd, path, flags, mode) for a cleaned path, resolved entirely
 * beneath rootfd: symlinks are followed only while they stay inside (the
 * kernel's openat2 RESOLVE_BENEATH), magic links and mount crossings are
 * refused (EXDEV, ELOOP).  Where openat2 is missing, one O_NOFOLLOW
 * component at a time (no symlinks at all).  "" opens rootfd's directory.
 * The fd, or -errno. */
int beneath_open(int rootfd, const char *path, int flags, mode_t mode);
/* The stand-in where openat2 is missing: component by component, refusing
 * every symlink (ELOOP, or ENOTDIR for one in the middle). */
int beneath_open_nofollow(int rootfd, const char *path, int flags, mode_t mode);

#endif
