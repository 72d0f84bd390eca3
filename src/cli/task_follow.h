/* task_follow.h - follow a background task of the manager (a session
 * commit, a registry rescan) to its end through GET
 * /events/background-task?taskId=, printing its progress on stderr (a
 * line per change, or one line kept up to date on a terminal). */
#ifndef TESS_CLI_TASK_FOLLOW_H
#define TESS_CLI_TASK_FOLLOW_H

#include <jansson.h>

#include "../common/error.h"

/* RET 0 when the task is done, with *ret (optional) its final state (GET
 * /background-tasks/{id}); -EIO with its message when it failed or was
 * cancelled, or the stream ended first. */
int task_follow(const char *task_id, bool quiet, json_t **ret, struct tess_error **err);

#endif
