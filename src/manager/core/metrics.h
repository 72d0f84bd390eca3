/* metrics.h - Prometheus text-format metrics of the manager.
 *
 * Request counters by route pattern, method and status, and a latency
 * histogram per route; the rest (sessions by status, database timings,
 * events) is read when /metrics is scraped. */
#ifndef TESS_METRICS_H
#define TESS_METRICS_H

#include "common/buf.h"

struct metrics;
struct manager;

struct metrics *metrics_new(void);
struct metrics *metrics_free(struct metrics *m);
void metrics_observe_request(struct metrics *m, const char *route, const char *method, unsigned status,
                             double seconds);
/* Append the request metrics in exposition format. */
void metrics_render(const struct metrics *m, struct buf *out);

#endif
