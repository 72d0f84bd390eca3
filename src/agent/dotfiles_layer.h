/* dotfiles_layer.h - a user's dotfiles in a new kernel's home directory.
 *
 * A kernel's dotfiles become a layer of their own, the top one under the
 * container's writable layer: home/work/<path>, the work user's, with the
 * permission given.  The agent writes it into a directory of its own
 * before the container exists, so nothing of the session is there to
 * follow (and every step is O_NOFOLLOW besides); the container sees the
 * files through its overlay and may change or remove them (copied up into
 * its writable layer).  Directories on the way keep the owner and mode
 * the image gives them (home root's, home/work the work user's, as in its
 * layers), else are the work user's 0755 (home root's).  Left out, with a
 * line in the log: a dotfile a folder mount covers or needs as its
 * directory (it would be hidden, or fail the start), one whose path the
 * manager should not have sent, and all of them when the image's home or
 * home/work is not a directory.  The layer is beside the image's unpacked
 * layers (the overlay's lower directories share one parent, rootfs.c),
 * made under a temporary name and renamed (a start again after a restart
 * uses it as it is), and goes with the container. */
#ifndef TESS_AGENT_DOTFILES_LAYER_H
#define TESS_AGENT_DOTFILES_LAYER_H

#include <jansson.h>

#include "agent/agent.h"
#include "agent/container/container.h"
#include "common/error.h"

/* The layer of kernel id's dotfiles (the manager's [{path, permission,
 * data}]) for an image of `layers` (bottom first) and the container's
 * mounts: its directory into *ret, or NULL when there are none to write. */
int dotfiles_layer_make(struct agent_ctx *ctx, const char *id, const json_t *files, char *const *layers,
                        const struct container_mount *mounts, size_t n_mounts, char **ret, struct tess_error **err);

/* Remove kernel id's dotfiles layer (once no overlay uses it). */
void dotfiles_layer_remove(struct agent_ctx *ctx, const char *id);

#endif
