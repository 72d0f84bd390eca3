/* api_not_served.c - routes of Backend.AI's API for things Tessera does
 * not have, answered 501 with what to use instead, rather than a bare
 * 404 that reads like a typo:
 *
 *   /config/get, /config/set, /config/delete   (`backend.ai admin etcd`)
 *       Backend.AI keeps its cluster settings in etcd; Tessera has no
 *       etcd: each process reads its config file, and the settings the
 *       whole service shares have routes of their own.
 *   /resource/watcher, /resource/watcher/agent/{start,stop,restart}
 *   (`backend.ai admin agent watcher ...`)
 *       Backend.AI runs a watcher daemon beside each agent; a Tessera
 *       agent is a process of its node, started and stopped there by
 *       whatever supervises it (a restart keeps the containers), and the
 *       manager shows its state.
 *   /folders/_/mounts (POST, DELETE), /folders/_/fstab, /folders/_/perf-metric
 *   (`backend.ai admin vfolder mount-host / umount-host / get-fstab-contents
 *   / perf-metric`)
 *       A Tessera folder host is a directory of the config, mounted by the
 *       node's own fstab when it is a network file system; the API mounts
 *       nothing and measures no storage. */
#include "common/compat.h"

#include "manager/api/api.h"
#include "manager/main.h"

static const struct {
        const char *pattern, *why;
} reasons[] = {
        { "/config/", "Tessera keeps no etcd: each process reads its own config file (tessera manager --config, "
                      "tessera agent --config; --print-config shows it), and what the whole service shares has "
                      "routes of its own: /config/resource-slots, /config/docker-registries, "
                      "/admin/container-registries, /manager/announcement, /manager/status" },
        { "/folders/_/perf-metric", "Tessera measures no storage performance: a folder host is a directory "
                                    "(local, or a network mount the same on every node), whose capacity and use "
                                    "GET /folders/_/all-hosts shows; use the storage's own tools for its I/O" },
        { "/folders/_/", "Tessera mounts nothing through the API: a folder host is a directory named in the "
                         "vfolder_hosts of the manager's and every agent's config, mounted (if it is a network "
                         "file system) by the node's own /etc/fstab; GET /folders/_/mounts lists them" },
        { "/resource/watcher", "Tessera's agents have no watcher: an agent (tessera agent) is started, stopped and "
                               "restarted on its node by whatever supervises it there, and a restart keeps its "
                               "running containers; GET /admin/agents/{id} shows its state, and "
                               "/manager/scheduler/operation excludes it from scheduling" },
};

void api_not_served(struct api_ctx *c)
{
        for (size_t i = 0; i < ARRAY_SIZE(reasons); i++)
                if (strncmp(c->route->pattern, reasons[i].pattern, strlen(reasons[i].pattern)) == 0)
                        return api_problem(c, 501, "not-implemented", "%s", reasons[i].why);
        abort(); /* a route of this file without its reason */
}
