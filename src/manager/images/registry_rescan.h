/* registry_rescan.h - rescanning a container registry as a background
 * task (POST /admin/container-registries/{name}/rescan, docs/images.md).
 *
 * The scan (registry_scan.h) runs in a worker thread (worker.h) and
 * reports each repository done as the task's progress; at its end, on the
 * loop thread and in one transaction, every image it found is added to
 * the images table or brought up to date (digest, labels, size, registry),
 * keeping what admins set on existing rows (hidden, minimum and maximum
 * resources, aliases, owner), and the registry's last_scan_at is set.
 * Images of the registry that the scan did not find are reported as
 * "missing", never removed; forgotten images (DELETE /admin/images/{id})
 * that the registry still has come back.  The task's result:
 *
 *     {"registry", "repositories", "images", "added", "updated",
 *      "unchanged", "errors": [{"repository", "tag"?, "error"}] (the first
 *      100), "error_count", "missing": [{"id", "image", "architecture"}]}
 *
 * One rescan of a registry at a time in a manager; a rescan that a
 * manager restart cut off is failed at the next start. */
#ifndef TESS_MANAGER_REGISTRY_RESCAN_H
#define TESS_MANAGER_REGISTRY_RESCAN_H

#include "common/crypto.h"
#include "common/error.h"

struct manager;

#define REGISTRY_RESCAN_KIND "registry-rescan"

/* Start rescanning registry `name` as a task of user_id in domain.
 * OUT ret_task_id - the task
 * RET 0; -ENOENT no such registry; -EEXIST a rescan of it is running here
 *     (its task named in the message) */
int registry_rescan_start(struct manager *m, const char *name, const char *user_id, const char *domain,
                          char ret_task_id[UUID_STR_LEN], struct tess_error **err);

/* Is a rescan of registry `name` running in this manager? */
bool registry_rescan_running(const char *name);

/* At start: fail the rescans of managers that are gone, then every
 * conf.task_lease / 4 keep this manager's rescans' leases and fail stale ones
 * (bgtask.h). */
int registry_rescan_leases(struct manager *m, struct tess_error **err);

#endif
