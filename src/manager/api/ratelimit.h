/* ratelimit.h - per-keypair request rate limit.
 *
 * A fixed window (conf rate_limit_window, 15 minutes as Backend.AI) per
 * access key, capped by keypairs.rate_limit (0 = unlimited).  Answers carry
 * X-RateLimit-Limit, -Remaining and -Window.  Counters live in this
 * manager's memory: with several managers each counts its own requests. */
#ifndef TESS_RATELIMIT_H
#define TESS_RATELIMIT_H

#include <stdint.h>

#include "common/error.h"

struct api_ctx;
struct ratelimit;

struct ratelimit *ratelimit_new(void);
struct ratelimit *ratelimit_free(struct ratelimit *rl);
/* Count the request of ctx->who; -EDQUOT when over the limit. */
int ratelimit_check(struct api_ctx *ctx, struct tess_error **err);
/* Total requests counted per key since the start, for flushing to the
 * database (num_queries); calls fn for each key with a non-zero delta. */
void ratelimit_drain_counts(struct ratelimit *rl, void (*fn)(const char *key, int64_t delta, void *data),
                            void *data);

#endif
