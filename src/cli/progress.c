/* progress.c - the transfer progress line (see progress.h). */
#include "common/compat.h"

#include <stdio.h>
#include <unistd.h>

#include "common/timeutil.h"
#include "cli/cli-internal.h"
#include "cli/progress.h"

#define DRAW_EVERY_USEC (USEC_PER_SEC / 5)

void progress_size(char *buf, size_t n, double bytes)
{
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
        unsigned u = 0;

        while (bytes >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                bytes /= 1024;
                u++;
        }
        snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void progress_start(struct progress *p, int64_t total)
{
        *p = (struct progress){ .on = isatty(STDERR_FILENO) && !arg_json, .total = total, .started = now_usec() };
}

double progress_rate(const struct progress *p, int64_t now)
{
        unsigned n = p->nsample < PROGRESS_SAMPLES ? p->nsample : PROGRESS_SAMPLES;
        if (n < 2)
                return 0;
        unsigned newest = (p->nsample - 1) % PROGRESS_SAMPLES, oldest = (p->nsample - n) % PROGRESS_SAMPLES;
        int64_t dt = now - p->sample[oldest].t;
        return dt > 0 ? (double)(p->sample[newest].bytes - p->sample[oldest].bytes) * USEC_PER_SEC / (double)dt : 0;
}

static void draw(struct progress *p, int64_t now, bool final)
{
        char done[24], total[24], rate[24], eta[64] = "";
        double r = final ? (double)p->done * USEC_PER_SEC / (double)(now - p->started + 1) : progress_rate(p, now);

        progress_size(done, sizeof(done), (double)p->done);
        progress_size(total, sizeof(total), (double)p->total);
        progress_size(rate, sizeof(rate), r);
        if (!final && r > 0 && p->total > p->done) {
                int64_t s = (int64_t)((double)(p->total - p->done) / r);
                snprintf(eta, sizeof(eta), "  ETA %lld:%02lld", (long long)(s / 60), (long long)(s % 60));
        }
        fprintf(stderr, "\r\033[K%4.0f%% %s / %s  %s/s%s  %.40s",
                p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, done, total, rate, eta,
                p->label ? p->label : "");
        if (final)
                fputc('\n', stderr);
        fflush(stderr);
}

void progress_update(struct progress *p, int64_t done, const char *label)
{
        int64_t now = now_usec();

        p->done = done;
        p->label = label;
        if (!p->on || now - p->last_draw < DRAW_EVERY_USEC)
                return;
        p->sample[p->nsample++ % PROGRESS_SAMPLES] = (typeof(p->sample[0])){ now, done };
        p->last_draw = now;
        draw(p, now, false);
}

void progress_end(struct progress *p)
{
        if (p->on)
                draw(p, now_usec(), true);
}
