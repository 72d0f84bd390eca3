/* vfolder_archive.h - a directory of a folder as a tar (pax) archive made
 * while it is sent: a few hundred KiB of memory whatever the size, no
 * temporary file.  The walk never follows symlinks (they go in as
 * symlinks) and never leaves the directory it is given. */
#ifndef TESS_VFOLDER_ARCHIVE_H
#define TESS_VFOLDER_ARCHIVE_H

#include <sys/types.h>

#include "common/error.h"

struct vf_archive;

/* An archive of fd (a directory or a regular file, opened O_RDONLY; taken
 * over), its entries under `name`/. */
struct vf_archive *vf_archive_new(int fd, const char *name, struct tess_error **err);
/* The next bytes (an http_reader_fn): > 0, 0 at the end, -1 on an error. */
ssize_t vf_archive_read(void *a, char *out, size_t max);
void vf_archive_free(void *a);

#endif
