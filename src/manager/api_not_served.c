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
 *       manager shows its state. */
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
