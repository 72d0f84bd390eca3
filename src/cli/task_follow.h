/* task_follow.h - following a background task of the manager (a registry
 * rescan, a session commit) until it ends: its events from GET
 * /events/background-task?taskId= (progress lines on stderr, not with
 * --json), then the task itself from GET /background-tasks/{id}. */
#ifndef TESS_CLI_TASK_FOLLOW_H
#define TESS_CLI_TASK_FOLLOW_H

#include <jansson.h>

#include "common/error.h"

/* Follow task `id` to its end.
 * IN  what - names the task in progress lines ("rescan")
 * OUT ret - the ended task ({task_id, status, message, result, ...}); caller owns
 * RET 0 (whatever the task's status), or -errno when it could not be
 *     followed (the stream broke before the task ended) */
int task_follow(const char *id, const char *what, json_t **ret, struct tess_error **err);

#endif
