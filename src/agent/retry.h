/* retry.h - when the agent tries the manager again after a failure: the
 * one policy of its sync and reporter threads (retry.c).
 *
 *   no answer at all (refused, reset, timed out: a manager restarting)
 *       about every second: uniform in [RETRY_UNREACHABLE_MIN,
 *       RETRY_UNREACHABLE_MAX], so that agents are back within a second or
 *       two of a restart, yet a thousand of them do not all knock in the
 *       same millisecond;
 *   an answer that is an error (5xx, 429, any non-2xx)
 *       exponential backoff with jitter: the n-th failure in a row waits
 *       uniform in [c/2, c] with c = min(RETRY_BASE * 2^(n-1), RETRY_CAP)
 *       ("equal jitter": spread out, yet never less than half the ceiling,
 *       so it keeps growing; n counts error answers only, so that a
 *       manager back from a restart that answers 503 for a moment is not
 *       made to wait the cap); a Retry-After the manager sent is honoured
 *       within the cap: at least that long, plus up to a second of jitter.
 *
 * One struct retry per thread (no locking); its random source is seeded
 * explicitly, so that a test can replay it. */
#ifndef TESS_AGENT_RETRY_H
#define TESS_AGENT_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/timeutil.h"

#define RETRY_UNREACHABLE_MIN (500 * USEC_PER_MSEC)
#define RETRY_UNREACHABLE_MAX (1500 * USEC_PER_MSEC)
#define RETRY_BASE            USEC_PER_SEC
#define RETRY_CAP             (30 * USEC_PER_SEC)

struct retry {
        uint64_t rng;      /* splitmix64 state */
        unsigned failures; /* in a row; 0: the last try worked */
        unsigned errors;   /* of them, answers that were errors: the backoff's exponent */
        int64_t since;     /* monotonic usec of the first failure in a row */
};

/* A fresh policy whose random source starts at seed. */
void retry_init(struct retry *r, uint64_t seed);
/* A seed that differs between agents, processes and threads. */
uint64_t retry_seed(void);

/* A try failed: how long to wait (usec) before the next one.  status is
 * the HTTP status of the answer, 0 when there was none; retry_after the
 * wait the answer asked for (Retry-After, usec), 0 when it asked none. */
int64_t retry_failed(struct retry *r, long status, int64_t retry_after);
/* A try worked: the next failure starts from the beginning again.
 * Returns how many failures in a row it ends (0: none). */
unsigned retry_succeeded(struct retry *r);

#endif
