/* agent_http.h - the agent's HTTP server for its manager (agent_http.c):
 * execute, interrupt, files and live logs of running kernels. */
#ifndef TESS_AGENT_HTTP_H
#define TESS_AGENT_HTTP_H

#include <stdint.h>

#include "agent/agent.h"

#define AGENT_HTTP_FILE_MAX \
        (64u << 20) /* largest file moved in one request   \
                                         */

struct agent_http;

/* Serve on ctx->conf->listen; requests must be signed with secret. */
int agent_http_start(struct agent_ctx *ctx, const char *secret, struct agent_http **ret, struct tess_error **err);
struct agent_http *agent_http_stop(struct agent_http *h);
uint16_t agent_http_port(const struct agent_http *h);
/* HOST:PORT for the manager (conf->address, else the listen host, else
 * this host's address on the route to the manager); caller frees. */
char *agent_http_address(const struct agent_http *h, const struct agent_conf *conf);
/* The HTTP status of an errno, as the agent answers it. */
unsigned agent_http_status(int errnum);

#endif
