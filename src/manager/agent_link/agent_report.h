/* agent_report.h - what an agent tells the manager, parsed and checked:
 * the heartbeat body (see api_agent.c for the protocol) and kernel events
 * (agent_events.c).  They parse outside bytes and are fuzzed
 * (tests/fuzz/fuzz_agent_report.c, with the Authorization header of agent
 * requests: agent_auth_parse, common/sign.h). */
#ifndef TESS_AGENT_REPORT_H
#define TESS_AGENT_REPORT_H

#include <jansson.h>

#include "common/error.h"
#include "common/sign.h"
#include "common/slots.h"

#define AGENT_STATS_MAX 4096 /* kernels with statistics in one heartbeat */

struct agent_report {
        const char *id, *address, *rg, *arch, *version, *runtime; /* borrowed from the body */
        struct slots slots; /* available_slots, GPU slot = sum of the devices */
        char *devices;      /* stored JSON form of the devices (owned) */
        const json_t *stats; /* {"<kernel id>": {lastStat of its session}} or NULL (borrowed) */
        int64_t heartbeat_interval; /* usec between its heartbeats (default 5 s) */
};

#define AGENT_HEARTBEAT_MAX_SEC 3600

/* -EINVAL with a message naming the field on anything wrong. */
int agent_report_parse(const json_t *body, struct agent_report *ret, struct tess_error **err);
void agent_report_release(struct agent_report *r);

/* One kernel event of POST /agent/events (see agent_events.c). */
enum agent_event_kind {
        AGENT_EV_PREPARING,
        AGENT_EV_PULLING,
        AGENT_EV_CREATING,
        AGENT_EV_RUNNING,
        AGENT_EV_EXITED, /* exit_code, oom */
        AGENT_EV_FAILED, /* could not be created: message */
        /* a session commit (src/agent/commit.h) of background task `task` */
        AGENT_EV_COMMIT_PROGRESS, /* current, total, message */
        AGENT_EV_COMMIT_DONE,     /* image: {digest, size, labels} */
        AGENT_EV_COMMIT_FAILED,   /* message */
};

#define AGENT_EVENTS_MAX 1000 /* per request */

struct agent_event {
        int64_t seq; /* > 0, increasing per agent */
        const char *kernel, *container_id, *message, *log; /* borrowed from the body */
        enum agent_event_kind kind;
        int64_t exit_code;
        bool oom;
        const json_t *image; /* running: {"digest", "size", "labels"} of its image, or NULL */
        const json_t *stat;  /* exited: its final counters in lastStat's shape, or NULL */
        const char *task;    /* commit events: the background task */
        int64_t current, total;
};

/* events[i] of a parsed body: -EINVAL with a message naming the field. */
int agent_event_parse(const json_t *ev, struct agent_event *ret, struct tess_error **err);

#endif
