/* metrics.c - see metrics.h. */
#include "common/compat.h"

#include "manager/core/metrics.h"

static const double buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10 };
#define NBUCKETS ARRAY_SIZE(buckets)

struct req_counter {
        const char *route; /* static pattern string from a route table */
        char method[8];
        unsigned status;
        unsigned long long count;
};

struct route_hist {
        const char *route;
        unsigned long long bucket[NBUCKETS];
        unsigned long long count;
        double sum;
};

struct metrics {
        struct req_counter *c;
        int nc, capc;
        struct route_hist *h;
        int nh, caph;
};

struct metrics *metrics_new(void)
{
        return xcalloc(1, sizeof(struct metrics));
}

struct metrics *metrics_free(struct metrics *m)
{
        if (m) {
                free(m->c);
                free(m->h);
                free(m);
        }
        return NULL;
}

void metrics_observe_request(struct metrics *m, const char *route, const char *method, unsigned status,
                             double seconds)
{
        struct req_counter *c = NULL;
        struct route_hist *h = NULL;

        if (!method)
                method = "?";
        for (int i = 0; i < m->nc; i++) {
                if (m->c[i].route == route && m->c[i].status == status && streq(m->c[i].method, method)) {
                        c = &m->c[i];
                        break;
                }
        }
        if (!c) {
                if (m->nc == m->capc) {
                        m->capc = m->capc ? m->capc * 2 : 64;
                        m->c = xrealloc(m->c, sizeof(*m->c) * (size_t)m->capc);
                }
                c = &m->c[m->nc++];
                memset(c, 0, sizeof(*c));
                c->route = route;
                snprintf(c->method, sizeof(c->method), "%s", method);
                c->status = status;
        }
        c->count++;
        for (int i = 0; i < m->nh; i++) {
                if (m->h[i].route == route) {
                        h = &m->h[i];
                        break;
                }
        }
        if (!h) {
                if (m->nh == m->caph) {
                        m->caph = m->caph ? m->caph * 2 : 32;
                        m->h = xrealloc(m->h, sizeof(*m->h) * (size_t)m->caph);
                }
                h = &m->h[m->nh++];
                memset(h, 0, sizeof(*h));
                h->route = route;
        }
        for (size_t b = 0; b < NBUCKETS; b++)
                if (seconds <= buckets[b])
                        h->bucket[b]++;
        h->count++;
        h->sum += seconds;
}

void metrics_render(const struct metrics *m, struct buf *out)
{
        buf_puts(out, "# HELP tessera_http_requests_total HTTP requests by route, method and status.\n"
                      "# TYPE tessera_http_requests_total counter\n");
        for (int i = 0; i < m->nc; i++)
                buf_printf(out, "tessera_http_requests_total{route=\"%s\",method=\"%s\",status=\"%u\"} %llu\n",
                           m->c[i].route, m->c[i].method, m->c[i].status, m->c[i].count);
        buf_puts(out, "# HELP tessera_http_request_duration_seconds HTTP request latency by route.\n"
                      "# TYPE tessera_http_request_duration_seconds histogram\n");
        for (int i = 0; i < m->nh; i++) {
                const struct route_hist *h = &m->h[i];
                for (size_t b = 0; b < NBUCKETS; b++)
                        buf_printf(out, "tessera_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                                   h->route, buckets[b], h->bucket[b]);
                buf_printf(out, "tessera_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
                           h->route, h->count);
                buf_printf(out, "tessera_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", h->route, h->sum);
                buf_printf(out, "tessera_http_request_duration_seconds_count{route=\"%s\"} %llu\n", h->route,
                           h->count);
        }
}
