/* monitor.h - the process that owns one running container.
 *
 * The agent starts it detached (double fork, its own session) as
 * `<exe> _monitor <dir>`; it outlives the agent.  It runs `runc run
 * --detach` as a child subreaper, so the container's init becomes its
 * child; it copies the container's stdout and stderr into the log,
 * reaps the init, records how it ended in exit.json (the memory cgroup's
 * OOM count and the last usage counters are read before runc deletes the
 * cgroup), runs `runc delete`
 * and tears down the rootfs and network.  Its own diagnostics go to
 * monitor.log.  It ignores SIGTERM, SIGINT and SIGHUP: only the
 * container's end ends it.
 *
 * Start report, on the monitor's stdout (a pipe the agent reads): one line,
 * "ok <container pid>" or "err <runc's message>". */
#ifndef TESSERA_AGENT_MONITOR_H
#define TESSERA_AGENT_MONITOR_H

#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* `tessera _monitor DIR`: argv[0] is "_monitor". */
int monitor_main(int argc, char **argv);

/* Start the monitor of the container whose directory (container.json,
 * bundle/) is ready.  RET ret_report_fd - read it with
 * monitor_wait_started(), then close it. */
int monitor_spawn(const char *exe, const char *dir, int *ret_report_fd, struct tess_error **err);

/* Wait for the start report: 0 and the container's pid once it runs;
 * the monitor's message (EIO), or ETIMEDOUT, otherwise. */
int monitor_wait_started(int report_fd, int64_t timeout_usec, pid_t *ret_pid, struct tess_error **err);

#endif
