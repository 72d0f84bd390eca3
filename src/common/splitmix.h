/* splitmix.h - a small seedable random source (splitmix64, Steele, Lea and
 * Flood 2014) for what must be reproducible from a seed, not
 * unpredictable: the simulator's workloads, the agent's retry jitter, and
 * randomized tests.  The state is one uint64_t the caller keeps. */
#ifndef TESS_SPLITMIX_H
#define TESS_SPLITMIX_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *state)
{
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* Uniform in [lo, hi] (lo when hi <= lo); the modulo's bias is below 2^-40
 * for the ranges used here. */
static inline int64_t splitmix_uniform(uint64_t *state, int64_t lo, int64_t hi)
{
        if (hi <= lo)
                return lo;
        return lo + (int64_t)(splitmix64(state) % (uint64_t)(hi - lo + 1));
}

#endif
