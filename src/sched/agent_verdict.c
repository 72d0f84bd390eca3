/* agent_verdict.c - what an agent's silence makes it (see sched.h,
 * sched_agent_verdict). */
#include "common/compat.h"

#include "sched/sched.h"

enum sched_agent_state sched_agent_verdict(enum sched_agent_state now_state, int64_t last_heartbeat,
                                           int64_t heartbeat_interval, int64_t heard_from, int64_t now,
                                           int64_t lost_after)
{
        int64_t since = last_heartbeat > heard_from ? last_heartbeat : heard_from;
        int64_t silent = now - since;

        if (now_state == SCHED_AGENT_LOST)
                return SCHED_AGENT_LOST;
        if (lost_after > 0 && silent > lost_after)
                return SCHED_AGENT_LOST;
        if (silent > SCHED_SILENT_BEATS * heartbeat_interval)
                return SCHED_AGENT_UNREACHABLE;
        return now_state;
}
