/* agent_call.h - the manager's requests to an agent (agent_call.c), made
 * for an API request that waits for them: execute, interrupt, files, logs
 * of a running kernel.
 *
 * The API request is suspended; a worker thread makes the signed HTTP
 * requests (blocking libcurl), and `done` runs on the manager's loop
 * afterwards to answer.  If the client goes away meanwhile, `done` is not
 * called and the results are dropped.  Requests are signed with the
 * cluster secret as src/common/sign.h says for manager-to-agent calls. */
#ifndef TESS_MANAGER_AGENT_CALL_H
#define TESS_MANAGER_AGENT_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/error.h"

struct api_ctx;
struct manager;

struct agent_call {
        /* what the request is for, set by agent_call_start */
        char *agent_id, *address;
        void *data; /* what work needs; freed with data_free */
        void (*data_free)(void *data);
        void *user; /* what done needs, set after the start; freed with user_free */
        void (*user_free)(void *user);
        /* the last answer of agent_call_request */
        long status;       /* HTTP status; 0 when the agent was not reached */
        struct buf answer; /* its body */
        char content_type[128];
        struct tess_error *err; /* the agent unreachable, or its {"error"} on a non-2xx */
        /* private */
        char secret[160];
        struct api_ctx *ctx; /* NULL once the client is gone */
        void (*work)(struct agent_call *call);
        void (*done)(struct api_ctx *c, struct agent_call *call);
        int refs;
};

/* From the worker thread: one signed request to the agent (target is
 * path?query, percent-encoded as sent).  Returns the HTTP status (also in
 * call->status, body in call->answer), or a negative errno with call->err
 * set when the agent could not be reached or answered an error. */
int agent_call_request(struct agent_call *call, const char *method, const char *target, const void *body, size_t len,
                       const char *content_type, long timeout_s);

/* From the worker thread: the next requests go to another agent (a
 * cluster session's kernels on several nodes). */
void agent_call_retarget(struct agent_call *call, const char *agent_id, const char *address);

/* Suspend c's request, run work(call) in a thread, then done(c, call) on
 * the loop (which must answer c).  Ownership of data passes to the call.
 * Returns the call, or NULL when it could not start (c is answered). */
struct agent_call *agent_call_start(struct api_ctx *c, const char *agent_id, const char *address,
                                    void (*work)(struct agent_call *),
                                    void (*done)(struct api_ctx *, struct agent_call *), void *data,
                                    void (*data_free)(void *));
/* agent_call_start for one request of method, target and body (copied). */
struct agent_call *agent_call_one(struct api_ctx *c, const char *agent_id, const char *address, const char *method,
                                  const char *target, const void *body, size_t len, const char *content_type,
                                  long timeout_s, void (*done)(struct api_ctx *, struct agent_call *));

/* The answer of a failed call, for the API client: the agent's 4xx as is,
 * an unreachable or failing agent as 502.  Frees call->err. */
void agent_call_fail(struct api_ctx *c, struct agent_call *call);

/* Abandon requests in flight (manager stopping). */
void agent_calls_abort(void);

#endif
