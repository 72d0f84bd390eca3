/* cond_wait.h - condition variables whose timed waits count by the
 * monotonic clock.
 *
 * pthread_cond_timedwait() takes an absolute time on the condition
 * variable's clock, CLOCK_REALTIME unless told otherwise; a wall clock
 * stepped back (NTP, an operator's `date -s`) in the middle of such a wait
 * makes it last that much longer: an agent's reporter backing off for a
 * few seconds slept for minutes after its node's clock went back two.
 * Every timed wait in the daemons goes through these instead. */
#ifndef TESS_COND_WAIT_H
#define TESS_COND_WAIT_H

#include <pthread.h>
#include <stdint.h>

/* pthread_cond_init() with the monotonic clock. */
void cond_init_monotonic(pthread_cond_t *cond);

/* The absolute time `usec` from now on the monotonic clock, for
 * pthread_cond_timedwait() on a condition made by cond_init_monotonic(). */
struct timespec cond_deadline(int64_t usec);

#endif
