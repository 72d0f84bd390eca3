/* usage_measure.h - measured use per session per day, from the agents'
 * statistics.
 *
 * usage.h accounts allocation: what a session held.  This module accounts
 * what its containers used.  Every heartbeat carries each running kernel's
 * statistics (src/agent/kernels.c, Backend.AI's lastStat shape): the
 * cumulative counters cpu_used (msec of CPU time), io_read and io_write
 * (bytes) since the container started, and mem (current bytes).  For each
 * kernel the manager keeps the counters of the last report it accepted
 * (kernels.stat_cpu_used_usec, stat_io_read_bytes, stat_io_write_bytes;
 * NULL before the first) and adds the increase to the session's
 * usage_daily row of the day of the heartbeat (UTC, as usage.h), in the
 * same transaction that stores the new counters.  So a repeated heartbeat
 * adds nothing, a manager restart loses and repeats nothing, and a
 * heartbeat that is not stored is counted by the next one.  The day's peak
 * memory is the largest mem one kernel reported (mem_peak_bytes).
 *
 * A kernel's `exited` event (agent_events.c) carries its last counters,
 * which its monitor read before runc deleted its cgroup: they are
 * accounted the same way, so what it used after its last heartbeat counts
 * too.  Where they are missing (an agent of an older version, a monitor
 * that died, a runtime without containers) that last interval is lost.
 *
 * A counter lower than the last one means the container started over: its
 * whole value is new.  The first report counts the whole value (the
 * counters start at zero with the container).  This relies on the
 * reports of one kernel arriving in order (an older report after a newer
 * one would count as a start over), which they do: its agent sends its
 * heartbeats and events one request after another. */
#ifndef TESS_USAGE_MEASURE_H
#define TESS_USAGE_MEASURE_H

#include <stdint.h>

#include <jansson.h>

#include "common/error.h"

struct manager;

/* One report's counters; -1 where the statistics lack it or it does not
 * parse. */
struct usage_counters {
        int64_t cpu_used_usec; /* cumulative CPU time */
        int64_t io_read;       /* cumulative bytes */
        int64_t io_write;      /* cumulative bytes */
        int64_t mem;           /* current bytes */
};

/* Read {"cpu_used": {"current": "1234.5"}, "io_read": {"current":
 * "4096"}, ...} (strings or numbers, as lastStat has them).  cpu_used is
 * msec with up to three decimals (finer digits are dropped). */
void usage_counters_from_stat(const json_t *stat, struct usage_counters *ret);

/* The increase of a cumulative counter from `prev` (-1: never reported)
 * to `cur` (-1: not reported now, which counts nothing): cur - prev, or
 * all of cur when there was no previous value or the counter went down. */
int64_t usage_counter_increase(int64_t prev, int64_t cur);

/* Account one kernel's statistics, reported by agent `agent_id` at `now`
 * (usec): the increases since the kernel's last report go to its
 * session's day, the counters become the kernel's last report.  Nothing
 * happens for a kernel that is not the agent's.  A kernel that used
 * nothing new writes nothing.  Call inside an open transaction. */
int usage_measure_kernel(struct manager *m, const char *agent_id, const char *kernel_id, const json_t *stat,
                         int64_t now, struct tess_error **err);

/* The same for every kernel of a heartbeat's `stats` ({"<kernel id>":
 * stat}), reading what it needs of them in one query; only kernels of
 * the agent whose sessions hold resources (USAGE_OCCUPYING_STATUSES)
 * count: what a kernel reports after its session ended comes with its
 * exited event. */
int usage_measure_agent(struct manager *m, const char *agent_id, const json_t *stats, int64_t now,
                        struct tess_error **err);

#endif
