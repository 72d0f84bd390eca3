/* session_commit.h - committing a running session to a private image
 * (api_session_commit.c):
 *
 *   POST /session/{name}/commit  {tag?}  -> 202 {task_id, image}
 *   GET  /session/{name}/commit          -> the last commit's task
 *
 * The manager names the new image custom/<owner's user name>/<the base
 * image's last name component>:<tag> (tag default: <base tag>-<UTC
 * YYYYMMDDhhmmss>), checks the owner's private image count against the
 * max_customized_image_count of their keypair resource policy (0:
 * unlimited; commits under way count), starts a background task
 * (bgtask.h) and asks the agent of the session's main kernel to commit
 * (src/agent/commit.h).  The agent reports progress and the end as kernel
 * events; on commit-done the image is registered: registry "" (the
 * manager's own, which every agent pulls from), owner_id the session's
 * owner, the base image's labels, resources and architecture with the
 * ai.backend.customized-image.* labels on top.  A private image is seen
 * and used only by its owner and by admins (session_image.c,
 * api_images.c). */
#ifndef TESS_SESSION_COMMIT_H
#define TESS_SESSION_COMMIT_H

#include "common/error.h"

struct manager;
struct api_ctx;
struct agent_event;

/* Apply a commit-progress, commit-done or commit-failed event of `agent`
 * about kernel `kernel` of session `session` (agent_events.c).  Safe to
 * apply twice. */
int session_commit_event(struct manager *m, const char *agent, const char *session, const struct agent_event *ev,
                         struct tess_error **err);

void api_session_commit(struct api_ctx *c);
void api_session_commit_status(struct api_ctx *c);

#endif
