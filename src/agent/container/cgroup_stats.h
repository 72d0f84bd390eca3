/* cgroup_stats.h - a container's counters from its cgroup (v1 controllers,
 * as on hybrid hosts, or the unified v2 hierarchy, detected at run time)
 * and from its network namespace's /proc/<pid>/net/dev.  runc creates and
 * deletes the cgroups; this only reads them.  The cgroup root is a
 * parameter so that tests can point it at a fake tree. */
#ifndef TESSERA_AGENT_CGROUP_STATS_H
#define TESSERA_AGENT_CGROUP_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct container_stats;

enum cgroup_mode {
        CGROUP_V1, /* one hierarchy per controller: <root>/<controller>/<path> */
        CGROUP_V2, /* unified: <root>/<path> */
};

/* V2 when `root` is a cgroup2 mount, else V1 (hybrid hosts included). */
enum cgroup_mode cgroup_mode_detect(const char *root);

/* Fill the cgroup counters of *ret (the net counters are left alone);
 * ENOENT when the cgroup does not exist.  `path` is runc's cgroupsPath. */
int cgroup_stats_read(const char *root, enum cgroup_mode mode, const char *path, struct container_stats *ret,
                      struct tess_error **err);

/* How many times the memory cgroup's OOM killer fired (v1 memory.oom_control
 * oom_kill, v2 memory.events oom_kill). */
int cgroup_oom_kills(const char *root, enum cgroup_mode mode, const char *path, uint64_t *ret,
                     struct tess_error **err);

/* The processes of the cgroup (its cgroup.procs; v1: the pids
 * controller's), *ret: caller frees.  ENOENT when it does not exist. */
int cgroup_pids_read(const char *root, enum cgroup_mode mode, const char *path, pid_t **ret, size_t *ret_n,
                     struct tess_error **err);

/* Can runc be given a memory+swap limit here?  v1: only with swap
 * accounting (memory.memsw.*); v2: always (runc skips memory.swap.max when
 * the kernel has none). */
bool cgroup_swap_limit_supported(const char *root, enum cgroup_mode mode);

/* Sum the bytes received and sent on every interface but lo in a
 * /proc/<pid>/net/dev file. */
int net_dev_read(const char *path, uint64_t *ret_rx, uint64_t *ret_tx, struct tess_error **err);

#endif
