/* layer_disk.h - a container's writable layer on a filesystem of its own
 * size, so that what a session writes outside its folders (/tmp, pip's
 * cache, a runaway log) stops at its limit with "No space left on device"
 * instead of filling the node's disk, which holds the other sessions' layers,
 * the images and, on a one-node install, the database and every folder.
 *
 * The filesystem is ext4 in a sparse file, <dir>/rw.img, the limit's size
 * (mkfs.ext4, no blocks reserved for root: the container's root is held to
 * the same limit), loop-mounted on <dir>/rw (nosuid, nodev), which then
 * holds the overlay's upper/ and work/.  The loop device goes with the
 * mount (autoclear); the file goes with the container's directory.  A
 * container without a limit has a plain directory <dir>/rw.
 *
 * Sparse: blocks are taken from the node's disk as the container writes,
 * so the sum of the limits may exceed the disk (as memory overcommits); the
 * limit holds each container to its share.  Works on any kernel with loop
 * devices and ext4, whatever the node's filesystem. */
#ifndef TESSERA_AGENT_LAYER_DISK_H
#define TESSERA_AGENT_LAYER_DISK_H

#include <stdint.h>

#include "common/container_disk.h"
#include "common/error.h"

/* Make `image` (which must not exist) a filesystem of `bytes` and mount it
 * on `mountpoint` (an empty directory), with upper/ and work/ in it.
 * Undone on failure.  EINVAL for a size under CONTAINER_DISK_MIN. */
int layer_disk_make(const char *image, const char *mountpoint, int64_t bytes, struct tess_error **err);

/* Can this node make them: loop devices, and mkfs.ext4 on PATH?  (Checked
 * when the agent starts, so that a node that cannot says so once, and not
 * in every session's creation failure.) */
int layer_disk_check(struct tess_error **err);

/* Unmount it (lazily: a commit still reading the layer keeps it until
 * done); fine when it is not mounted.  The image file stays. */
int layer_disk_unmount(const char *mountpoint, struct tess_error **err);

#endif
