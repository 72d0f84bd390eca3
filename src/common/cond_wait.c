/* cond_wait.c - see cond_wait.h. */
#include "common/compat.h"

#include <time.h>

#include "common/cond_wait.h"
#include "common/timeutil.h"

void cond_init_monotonic(pthread_cond_t *cond)
{
        pthread_condattr_t ca;

        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(cond, &ca);
        pthread_condattr_destroy(&ca);
}

struct timespec cond_deadline(int64_t usec)
{
        struct timespec ts;
        int64_t ns;

        if (usec < 0)
                usec = 0;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ns = ts.tv_nsec + (usec % USEC_PER_SEC) * 1000;
        ts.tv_sec += (time_t)(usec / USEC_PER_SEC + ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        return ts;
}
