/* retry.c - see retry.h: the agent's delays between tries of the manager. */
#include "common/compat.h"

#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include "agent/retry.h"
#include "common/splitmix.h"

/* Uniform in [lo, hi]: seedable, good enough to spread agents out;
 * nothing here needs to be unpredictable. */
static int64_t uniform(struct retry *r, int64_t lo, int64_t hi)
{
        return splitmix_uniform(&r->rng, lo, hi);
}

void retry_init(struct retry *r, uint64_t seed)
{
        *r = (struct retry){ .rng = seed };
}

uint64_t retry_seed(void)
{
        uint64_t seed = 0;

        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
                seed = (uint64_t)now_usec() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)pthread_self();
        return seed;
}

int64_t retry_failed(struct retry *r, long status, int64_t retry_after)
{
        if (r->failures++ == 0)
                r->since = monotonic_usec();
        if (status == 0)
                return uniform(r, RETRY_UNREACHABLE_MIN, RETRY_UNREACHABLE_MAX);
        if (retry_after > 0) {
                int64_t at_least = retry_after < RETRY_CAP ? retry_after : RETRY_CAP;
                int64_t most = at_least + USEC_PER_SEC < RETRY_CAP ? at_least + USEC_PER_SEC : RETRY_CAP;
                return uniform(r, at_least, most);
        }
        r->errors++;
        int64_t ceiling = RETRY_BASE;
        for (unsigned i = 1; i < r->errors && ceiling < RETRY_CAP; i++)
                ceiling *= 2;
        if (ceiling > RETRY_CAP)
                ceiling = RETRY_CAP;
        return uniform(r, ceiling / 2, ceiling);
}

unsigned retry_succeeded(struct retry *r)
{
        unsigned n = r->failures;

        r->failures = 0;
        r->errors = 0;
        return n;
}
