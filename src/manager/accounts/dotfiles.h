/* dotfiles.h - a user's dotfiles: files (a path under the home directory,
 * their text, their permission) that every new session of the user finds
 * in its home directory, Backend.AI's user-config dotfiles.  The manager
 * keeps them (dotfiles.c) and serves /user-config/dotfiles
 * (api_dotfiles.c); POST /agent/sync hands them to the agent with each
 * kernel it has not made yet, and the agent writes them into the new
 * container's home as its user (src/agent/kernel_runtime.c).
 *
 * A user's own, whichever keypair made them (Backend.AI keeps them per
 * keypair).  Limits: DOTFILES_MAX of them, their text DOTFILES_DATA_MAX
 * bytes in all (Backend.AI's 64 KiB), a path DOTFILE_PATH_MAX bytes. */
#ifndef TESS_DOTFILES_H
#define TESS_DOTFILES_H

#include <jansson.h>

#include "common/error.h"

struct manager;

#define DOTFILES_MAX      100
#define DOTFILES_DATA_MAX 65536
#define DOTFILE_PATH_MAX  255
#define DOTFILE_HOME      "/home/work"

/* A path as a user gives it, made the one it is kept as: relative to the
 * home directory (an absolute one must be under DOTFILE_HOME), cleaned
 * ("a//./b" is "a/b").  -EINVAL, with why, for '..', the home directory
 * itself, another absolute path, bytes that are not UTF-8 or control
 * characters, a name over NAME_MAX, a path over DOTFILE_PATH_MAX, and the
 * directories the images and their apps keep (Backend.AI's reserved
 * names: .ssh, .ssh/authorized_keys, .jupyter, .terminfo, .local,
 * .config; files under them are fine).  *ret: caller frees. */
int dotfile_path(const char *path, char **ret, struct tess_error **err);

/* "644": three octal digits, as Backend.AI's clients send them. */
bool dotfile_permission_valid(const char *perm);

/* The dotfiles of user_id, by path: [{path, permission, data}]. */
int dotfiles_list(struct manager *m, const char *user_id, json_t **ret, struct tess_error **err);

/* The routes (api_dotfiles.c): /user-config/dotfiles, the caller's own or,
 * with owner_access_key, a keypair's user's by the rule of api/authz.h. */
struct api_ctx;
void api_dotfile_create(struct api_ctx *c); /* POST */
void api_dotfile_get(struct api_ctx *c);    /* GET: all, or ?path= one */
void api_dotfile_update(struct api_ctx *c); /* PATCH */
void api_dotfile_delete(struct api_ctx *c); /* DELETE ?path= */

#endif
