/* session_mounts.h - the folders a session mounts (docs/vfolder-mounts.md).
 *
 * At create, `config.mounts` (folder names or ids) and `config.mount_map`
 * ({folder: path}) are resolved against the folders the session's owner
 * may use, and the owner's dot-folders are added, into a JSON list kept in
 * sessions.vfolder_mounts and sent to every kernel's agent:
 *   [{"id", "name", "host", "path" (relative to the host), "target"
 *     (the path inside the kernel), "perm": "ro"|"rw"|"wd"}]
 * The folder ids in that text are what vf_mounted() looks for. */
#ifndef TESS_SESSION_MOUNTS_H
#define TESS_SESSION_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/error.h"

struct manager;
struct principal;

#define SESSION_MOUNT_HOME "/home/work"

/* The kernel path of folder `name`: /home/work/<name> when mapped is NULL,
 * /home/work/<mapped> for a relative mapped path, else mapped itself;
 * "." and empty components dropped.  -EINVAL for "..", control
 * characters, or a path not under /home/work, /data or /mnt. */
int session_mount_target(const char *name, const char *mapped, char *buf, size_t n, struct tess_error **err);

/* One entry of the list. */
json_t *session_mount_entry(const char *id, const char *name, const char *host, const char *path, const char *target,
                            const char *perm);

/* Add an explicitly asked mount: -EINVAL if its folder or its target is
 * already in the list. */
int session_mounts_add(json_t *list, json_t *entry, struct tess_error **err);
/* Add an automatic (dot-folder) mount unless its folder or its target is
 * already there: 1 added, 0 left out.  Takes the entry either way. */
int session_mounts_add_auto(json_t *list, json_t *entry);

/* The whole list for a session of `owner` in project `project_id`
 * (mounts and mount_map may be NULL).  A folder the owner cannot use is
 * -ENOENT naming it; one on a host where the owner lacks mount-in-session
 * -EACCES; conflicting targets -EINVAL. */
int session_mounts_resolve(struct manager *m, const struct principal *owner, const char *project_id,
                           const json_t *mounts, const json_t *mount_map, json_t **ret, struct tess_error **err);

/* The names of the list, in order (sessions.mounts, as Backend.AI shows it). */
json_t *session_mounts_names(const json_t *list);

#endif
