/* subcall.h - one route of the API run for a request's own caller, as if
 * the caller had sent it, with the answer handed back instead of sent:
 * how POST /admin/gql's mutations reuse the /admin routes whole, with
 * their role checks, validation, rules and audit entries.
 *
 * The route's handler gets a context of its own (same caller, same
 * underlying request) whose api_json()/api_problem() answer lands in
 * `done`.  A handler that answers later suspends and resumes with
 * api_suspend()/api_resume() (not http_suspend/http_resume): the request
 * waits meanwhile, and `done` runs at the api_resume().  The caller of
 * api_subcall answers its own request at the end, as usual, and then
 * calls api_resume() on it in case a subcall left it suspended. */
#ifndef TESS_SUBCALL_H
#define TESS_SUBCALL_H

#include <jansson.h>

#include "manager/api/api.h"

/* status and answer (borrowed: take a reference to keep it) of a subcall
 * of c. */
typedef void (*api_subcall_done_fn)(struct api_ctx *c, unsigned status, json_t *answer, void *data);

/* Run the route METHOD `pattern` (exactly as in the route tables, e.g.
 * "/admin/users/{email}") with `params` (NULL-terminated, not encoded)
 * and `body` (borrowed; NULL for none) for c's caller.  done runs once,
 * now or later, unless c's request ends first (its client left): then
 * data_free(data) instead.  One subcall of c at a time. */
void api_subcall(struct api_ctx *c, const char *method, const char *pattern, const char *const *params, json_t *body,
                 api_subcall_done_fn done, void (*data_free)(void *data), void *data);
/* One step of api_subcall_steps(). */
struct api_step {
        const char *method, *pattern;
        const char *param; /* the route's one parameter, or NULL */
        json_t *body;      /* borrowed, or NULL */
};

/* A step's answer (borrowed): true to go on, false to stop there. */
typedef bool (*api_step_done_fn)(struct api_ctx *c, size_t i, unsigned status, json_t *answer, void *data);
typedef void (*api_steps_end_fn)(struct api_ctx *c, void *data);

/* Run steps[0..n) one after another as subcalls of c, each answer to
 * step_done, then end(c, data): now, or later when a step waits (the
 * request suspended meanwhile).  steps stay the caller's, alive until
 * end or data_free.  If c's request ends first, data_free(data) instead
 * of end. */
void api_subcall_steps(struct api_ctx *c, const struct api_step *steps, size_t n, api_step_done_fn step_done,
                       api_steps_end_fn end, void (*data_free)(void *data), void *data);

/* Whether c's role may call that route (what api_subcall checks first). */
bool api_may_call(const struct api_ctx *c, const char *method, const char *pattern);

/* For subcall contexts and others alike (api.c, audit.c). */
bool api_is_subcall(const struct api_ctx *c);
/* The answer of a subcall context (from reply_json_text in api.c). */
void api_subcall_answer(struct api_ctx *c, unsigned status, json_t *answer);
/* Free what a subcall context holds beyond a request's (api_ctx_release). */
void api_subcall_forget(struct api_ctx *c);
/* What the audit log records as the method and path asked. */
const char *api_method(const struct api_ctx *c);
const char *api_path(const struct api_ctx *c);

#endif
