/* vfolder_fs.h - file operations inside a folder, for the files and
 * transfer routes: every path is a user's (beneath_user_path) and every
 * open is relative to the folder's directory fd (beneath_open), so that
 * "..", absolute paths and symlinks — those a session planted pointing
 * outside included — never reach a file outside the folder. */
#ifndef TESS_VFOLDER_FS_H
#define TESS_VFOLDER_FS_H

#include <stdbool.h>

#include "common/error.h"

struct vfolder;

/* The folder's directory, O_PATH; -ENOENT when missing. */
int vf_root_open(const struct vfolder *f, struct tess_error **err);
/* The user's path, cleaned ("" is the folder itself); caller frees. */
int vf_user_path(const char *path, const char *field, char **ret, struct tess_error **err);
/* Split a cleaned path in place: *parent ("" at the top) and *base
 * (NULL for ""). */
void vf_path_split(char *clean, const char **parent, const char **base);
/* The directory rel beneath rootfd (O_PATH), its missing components made
 * (0755) when mk.  The fd, or -errno. */
int vf_dir_open(int rootfd, const char *rel, bool mk);
/* Make name in dirfd (or dirfd itself for "") the sessions' user's
 * (common/work_user.h), so that code in a session may use what the
 * manager wrote; never follows a symlink.  Best effort: a manager that
 * may not chown leaves it its own. */
void vf_give_to_work_user(int dirfd, const char *name);
/* Remove name in dirfd and, for a directory, all it holds; symlinks are
 * removed, never followed.  0 or -errno. */
int vf_remove_tree_at(int dirfd, const char *name);
/* Remove a folder's directory `path` and all it holds (symlinks not
 * followed), then the two spreading levels above it that it leaves empty
 * (vf_relpath).  The levels go even when some files stay (err says why). */
int vf_remove_dir(const char *path, struct tess_error **err);
/* err from an errno of an operation on the user's path: ENOENT 404,
 * EEXIST/ENOTEMPTY 409, a way out of the folder (EXDEV, ELOOP) 403, ... */
int vf_fs_error(struct tess_error **err, int e, const char *what, const char *path);

#endif
