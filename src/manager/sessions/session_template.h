/* session_template.h - Backend.AI's session templates (its "task
 * templates"): a user's saved session request, in YAML or JSON, and the
 * session request a template becomes (api_session_template.c stores them
 * and starts sessions from them).
 *
 * A template:
 *
 *   api_version: v1                    (or apiVersion; required)
 *   kind: taskTemplate                 (or task_template)
 *   metadata: {name: NAME, tag: TAG?}
 *   spec:
 *     type: interactive|batch|inference   (or session_type, sessionType)
 *     kernel:
 *       image: IMAGE                   (required)
 *       architecture: ARCH?
 *       environ: {NAME: VALUE}?
 *       run: {bootstrap: SCRIPT?, startup_command: CMD?}   (or startup, startupCommand)
 *       git: {repository: URL, branch?, commit?, destination_dir?}?   (or destinationDir)
 *     scaling_group: GROUP?            (or scalingGroup)
 *     mounts: {FOLDER: PATH or null}?
 *     resources: {SLOT: VALUE}?
 *
 * git becomes the first lines of the bootstrap script: a clone (a fetch of
 * commit when given) into destination_dir (default /home/work/<repo>).
 * Not taken, with a 400 that says so: git.credential (a password stored in
 * a template) and spec.agent_list. */
#ifndef TESS_SESSION_TEMPLATE_H
#define TESS_SESSION_TEMPLATE_H

#include <jansson.h>

#include "common/error.h"

#define SESSION_TEMPLATE_PAYLOAD_MAX 65536
#define SESSION_TEMPLATE_NAME_MAX    128
#define SESSION_TEMPLATES_AT_ONCE    64

/* The templates of a payload (JSON or YAML text): one template document;
 * several documents; or Backend.AI's list form, a list of (or
 * {session_templates: [...]} of) {template: T, name?: N}.  *ret: an array
 * of {name, template} (the name: N, else metadata.name), each template
 * checked; *ret_single: whether the payload was one bare template.
 * EINVAL with a message naming what is wrong. */
int session_templates_parse(const char *payload, size_t len, json_t **ret, bool *ret_single,
                            struct tess_error **err);

/* A POST /session body (session_request.h) from template t: image, type,
 * tag, bootstrap_script, startupCommand, architecture, config {environ,
 * resources, mounts, mount_map, scalingGroup}; caller owns. */
json_t *session_template_request(const json_t *t);

/* base overlaid with what request gives (not null; an empty mounts list
 * is not given): a key replaces every spelling of itself in base, and
 * config merges key by key.  template_id is left out. */
void session_template_overlay(json_t *base, const json_t *request);

#endif
