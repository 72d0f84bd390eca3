/* commit.h - a session commit on the agent (POST /v1/kernels/{id}/commit,
 * agent_http.c): the container's overlayfs upper dir becomes a new layer
 * on top of the kernel's image, the new image is tagged in the store and
 * pushed to the manager's registry, in a thread of its own while the
 * container keeps running.
 *
 * Request body: {"task_id": UUID, "base": the kernel's image reference as
 * the store names it, "name": the new image's name, "tag": its tag,
 * "labels": {...} added to the image's, "exclude": ["/home/work/data",
 * ...] paths inside the container left out}.  /home/work and every mount
 * of the container's bundle (folders, the runner, /etc/hosts, ...) are
 * always left out, as Backend.AI leaves out volumes.
 *
 * What happens is reported through the outbox, as kernel events the
 * manager applies to the task (src/manager/agents/agent_events.c):
 *   commit-progress  {task, current, total, message}
 *   commit-done      {task, image: {digest, size, labels}}
 *   commit-failed    {task, message}
 * A commit in progress is recorded in state_dir/commits/<task>; a restart
 * finds the records of commits it cut short and reports them failed. */
#ifndef TESS_AGENT_COMMIT_H
#define TESS_AGENT_COMMIT_H

#include <jansson.h>

#include "common/error.h"
#include "agent/agent.h"

/* Check the request for kernel `kernel_id` and start the commit.
 * RET 0 started; -EINVAL a bad request; -ENOENT no such container;
 * -EBUSY a commit of this kernel is under way */
int commit_start(struct agent_ctx *ctx, const char *kernel_id, const json_t *req, struct tess_error **err);

/* At start: report the commits a previous run left unfinished. */
void commit_recover(struct agent_ctx *ctx);

#endif
