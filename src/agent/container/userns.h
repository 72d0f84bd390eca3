/* userns.h - the user namespace a container runs in, and the idmapped
 * mounts that keep its files' owners right.
 *
 * A container's ids 0..size-1 are host ids base..base+size-1 (one range
 * per agent, `userns_uid_base`): its root is an unprivileged host user,
 * so that a way to become root inside (issue 19: TESSERA_UID=0) is not
 * root on the host.  Files keep the owners they have today on disk (image
 * layers root's, /home/work and folders 1000's, the writable layer what
 * the container wrote as): the agent shows them to the container through
 * idmapped mounts (mount_setattr MOUNT_ATTR_IDMAP, Linux 5.12; overlayfs
 * on idmapped layers, 5.19), which map on-disk id x to host id base+x, the
 * container's x.  docs/design/containers.md says more. */
#ifndef TESSERA_AGENT_USERNS_H
#define TESSERA_AGENT_USERNS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

#define USERNS_DEFAULT_BASE 2000000000u /* far from users', subuid's and systemd's ranges */
#define USERNS_DEFAULT_SIZE 65536u      /* uid 0..65535 inside: nobody (65534) included */

/* A user namespace mapping 0..size-1 (uids and gids) to base..: its fd,
 * for mount_setattr.  The namespace has no process; it lives as long as
 * the fd and the mounts made with it. */
int userns_open(uint32_t base, uint32_t size, int *ret_fd, struct tess_error **err);

/* A copy of the mount at src (a directory or a file; with recursive, the
 * mounts beneath it too) mapped through userns_fd (-1: not mapped, a bind
 * mount), attached at dst, which is created (a directory, or an empty
 * file for a file).  EINVAL (from mount_setattr) when src's filesystem
 * has no idmapped mounts. */
int userns_idmap_clone(const char *src, const char *dst, int userns_fd, bool recursive, struct tess_error **err);

/* The uid a process outside the namespace (the agent) appears as inside
 * it: the kernel's overflow uid (65534 unless changed). */
uint32_t userns_overflow_uid(void);

/* Detach every mount under dir (the copies userns_idmap_clone() made
 * there) but the one named keep (NULL: none), remove the emptied mount
 * points and, when nothing is kept, dir.  Never removes a tree: what is
 * still mounted stays.  Fine when dir does not exist. */
void userns_stage_remove(const char *dir, const char *keep);

#endif
