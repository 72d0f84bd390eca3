/* vfolder_xfer.h - `tessera vfolder upload` and `download`: files between
 * this machine and a virtual folder, through request-upload /
 * request-download tokens (src/manager/vfolder/api_vfolder_transfer.c).
 *
 * Uploads speak tus 1.0: HEAD tells where an upload the manager already
 * has stands (the manager names an upload by folder, path and size, so a
 * re-run after an interruption resumes it), POST creates it, PATCH sends
 * chunks from the offset.  A directory is uploaded file by file; a file
 * the folder already holds at the same path with the same size is skipped
 * unless `force` (so that re-running a cut directory upload resumes it).
 * Downloads go to LOCAL.part, resumed with a Range request when it exists,
 * and renamed to LOCAL when complete; a directory comes as one tar archive.
 * Both draw a progress line on a terminal (progress.h). */
#ifndef TESS_CLI_VFOLDER_XFER_H
#define TESS_CLI_VFOLDER_XFER_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* "/folders/<folder escaped><suffix>"; caller frees. */
char *vfolder_path(const char *folder, const char *suffix);

/* Upload local files or directories into dest (a directory of the folder,
 * "" for its root).  Prints one line per skipped file on stderr. */
int vfx_upload(const char *folder, const char *const *local, int n, const char *dest, bool force, int64_t chunk,
               struct tess_error **err);
/* Download remote (a file or a directory) to local (NULL: its base name,
 * plus ".tar" for a directory, here). */
int vfx_download(const char *folder, const char *remote, const char *local, struct tess_error **err);

#endif
