/* progress.h - a progress line for long transfers on a terminal:
 * "  42% 1.2 GiB / 2.9 GiB  85.3 MiB/s  ETA 0:21  name", redrawn on stderr
 * at most five times a second, only when stderr is a terminal (and not
 * with --json).  The rate is an average over the last few seconds. */
#ifndef TESS_CLI_PROGRESS_H
#define TESS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_SAMPLES 16

struct progress {
        bool on;         /* drawing (stderr is a terminal) */
        int64_t total;   /* bytes expected; 0: unknown */
        int64_t done;    /* bytes so far */
        int64_t started; /* usec */
        int64_t last_draw;
        const char *label;
        struct {
                int64_t t, bytes;
        } sample[PROGRESS_SAMPLES];
        unsigned nsample;
};

void progress_start(struct progress *p, int64_t total);
/* Bytes so far (absolute); redraws when due. */
void progress_update(struct progress *p, int64_t done, const char *label);
/* The final line (and a newline), if drawing. */
void progress_end(struct progress *p);
/* Bytes per second over the recent samples (0 before two). */
double progress_rate(const struct progress *p, int64_t now);
/* "1.5 GiB" into buf. */
void progress_size(char *buf, size_t n, double bytes);

#endif
