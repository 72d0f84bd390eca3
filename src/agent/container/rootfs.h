/* rootfs.h - a container's root filesystem: an overlayfs whose lower dirs
 * are the image's unpacked layers (shared, never written) and whose upper
 * and work dirs are the container's own.  The agent mounts it in the host's
 * mount namespace on the bundle's rootfs dir, and unmounts it when the
 * container is destroyed. */
#ifndef TESSERA_AGENT_ROOTFS_H
#define TESSERA_AGENT_ROOTFS_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/error.h"

/* The overlay mount options.  `layers` are lowest first (as the image
 * store gives them) and become lowerdir top-most first.  With `rel_base`
 * (a directory every layer is under) the layers are written relative to
 * it.  EINVAL for no layers or a path holding ':' or ','. */
int rootfs_overlay_options(const char *const *layers, const char *upper, const char *work, const char *rel_base,
                           struct buf *out, struct tess_error **err);

/* Mount the overlay on target (dirs must exist).  When the options do not
 * fit in a page (many layers), the layers are given relative to their
 * common directory, from a child that changes into it. */
int rootfs_mount(const char *const *layers, const char *upper, const char *work, const char *target,
                 struct tess_error **err);

/* The same for a container in a user namespace (userns.h) whose root is
 * host uid `root`: the layers (through their common directory) and dir,
 * which holds upper/ and work/, are idmapped through userns_fd under
 * stage (a directory of the agent's), the overlay mounted by `root` on
 * them, and the idmapped copies detached again.  On disk nothing changes:
 * the writable layer holds the owners the container sees. */
int rootfs_mount_idmapped(const char *const *layers, const char *dir, const char *target, const char *stage,
                          int userns_fd, uid_t root, struct tess_error **err);

/* Unmount target; fine when it is not mounted.  A busy mount is detached. */
int rootfs_umount(const char *target, struct tess_error **err);

/* Is something mounted on target (it and its parent differ in device)? */
bool rootfs_is_mounted(const char *target);

#endif
