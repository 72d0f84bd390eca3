/* disk_usage.h - what a directory tree takes on disk: allocated bytes
 * (st_blocks * 512, what a filesystem quota counts; sparse files at what
 * they hold), each inode once (hard links), found by a bounded walk with
 * openat/fstatat that never follows a symlink.  Used for the quotas of
 * virtual folders and the agent's image store budget. */
#ifndef TESS_DISK_USAGE_H
#define TESS_DISK_USAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/error.h"

#define DISK_USAGE_MAX_DEPTH   128      /* deeper directories count, their contents do not */
#define DISK_USAGE_MAX_ENTRIES 20000000 /* a walk stops there */

struct disk_usage_walk {
        int64_t bytes;  /* allocated bytes of every entry below the top */
        int64_t files;  /* entries below the top: files, directories, links ... */
        bool truncated; /* stopped at DISK_USAGE_MAX_ENTRIES */
        /* optional: called on each directory and regular file, once per inode */
        void (*visit)(int dirfd, const char *name, const struct stat *st, void *arg);
        void *arg;
        /* private: the inodes of several links seen so far */
        ino_t *seen;
        size_t seen_n, seen_cap;
};

/* Add what the directory `path` holds to *w (nothing when it does not
 * exist); an error only when it cannot be opened.  Entries that vanish
 * meanwhile are skipped.  Inodes count once across every walk of w until
 * disk_usage_walk_release(). */
int disk_usage_walk_path(const char *path, struct disk_usage_walk *w, struct tess_error **err);
/* The same below the directory `fd`, which it takes over (closes). */
void disk_usage_walk_fd(int fd, struct disk_usage_walk *w);
/* Forget the inodes seen; the counts stay. */
void disk_usage_walk_release(struct disk_usage_walk *w);

#endif
