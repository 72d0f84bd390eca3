/* vfolder_mount.h - a kernel's virtual folders as bind mounts
 * (docs/vfolder-mounts.md).
 *
 * The manager sends each kernel its session's `vfolder_mounts`: [{id,
 * name, host, path, target, perm}], path relative to the storage host.
 * The agent finds the host in its own `vfolder_hosts` (the manager's
 * names), checks that the path is a directory strictly beneath the host's
 * directory reached without following any symlink, and binds it at the
 * target: a plain bind (nested mounts stay out), nosuid, nodev, read-only
 * when perm is ro. */
#ifndef TESS_VFOLDER_MOUNT_H
#define TESS_VFOLDER_MOUNT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "agent/container/container.h"
#include "common/error.h"

struct vfolder_mounts {
        struct container_mount *v; /* strings owned */
        size_t n;
};

/* The host's directory of `name` in "NAME=PATH,..." into buf; -ENOENT if
 * the spec has no such host, -EINVAL if it is malformed. */
int vfolder_host_path(const char *spec, const char *name, char *buf, size_t n, struct tess_error **err);

/* Mounts for `list` (may be NULL: none).  A folder's directory still
 * owned by root (as the manager made it) is given to uid:gid, the
 * kernel's user.  Errors name the folder. */
int vfolder_mounts_prepare(const char *hosts_spec, const json_t *list, uint32_t uid, uint32_t gid,
                           struct vfolder_mounts *ret, struct tess_error **err);
void vfolder_mounts_release(struct vfolder_mounts *m);

#endif
