/* vfolder_copy.h - a folder's files copied into another, for clones
 * (api_vfolder_clone.c), on a worker thread: no database, no manager.
 *
 * Every entry is found relative to its directory's fd and opened with
 * O_NOFOLLOW, so nothing a session planted in the source (a symlink to
 * /etc, a directory swapped for a link while it is walked) leads the copy
 * out of the folder.  Symlinks are copied as symlinks (the same target
 * text, never what they point at); regular files with their holes, mode
 * (set-id bits dropped) and times; directories with theirs.  What the
 * copy makes belongs to the sessions' user (common/work_user.h), as all
 * the manager writes into folders.  Left out, and counted: fifos,
 * sockets, devices, and whatever is on another filesystem (a mount).
 * Entries removed while the copy runs are skipped.  Hard links become
 * separate files.  Extended attributes are not copied. */
#ifndef TESS_VFOLDER_COPY_H
#define TESS_VFOLDER_COPY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

struct vf_copy {
        /* IN: the allocated bytes (st_blocks * 512, as quotas count) the
         * copy may make; past it the copy stops with EDQUOT */
        int64_t budget;
        /* optional: called now and then while the copy runs */
        void (*progress)(const struct vf_copy *cp, void *arg);
        void *arg;
        /* OUT */
        int64_t bytes;   /* allocated bytes of what it made */
        int64_t files;   /* files, directories and symlinks made */
        int64_t skipped; /* entries left out (see above) */
        int64_t current; /* data bytes of the file being copied so far */
        /* private */
        bool plain_io; /* copy_file_range refused: read and write */
};

/* Copy what the directory `src` holds into the directory `dst` (open fds,
 * both kept).  Refuses trees deeper than BENEATH_DEPTH_MAX or of more
 * than DISK_USAGE_MAX_ENTRIES entries.  On an error what was copied
 * stays: the caller removes it.
 * RET 0, or -errno with err naming the path (EDQUOT: past the budget). */
int vf_copy_tree(int src, int dst, struct vf_copy *cp, struct tess_error **err);

#endif
