/* common.h - shared bits of the HTTP library micro-benchmark servers.
 *
 * Every server answers GET /session/<name> with 200, Content-Type
 * application/json and a ~700-byte JSON body built per request (so the
 * application does the same small amount of work in each), after looking up
 * the Authorization, Date, Host and X-BackendAI-Version headers the way the
 * manager's auth_request() does.  Anything else gets 404.
 */
#ifndef BENCH_HTTP_COMMON_H
#define BENCH_HTTP_COMMON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_PREFIX "/session/"
#define BODY_MAX 2048

/* Accumulated so that the compiler cannot drop the header look-ups. */
static unsigned long bench_hdr_bytes;

static inline void bench_use_headers(const char *authz, const char *date, const char *host, const char *ver)
{
        bench_hdr_bytes += (authz ? strlen(authz) : 0) + (date ? strlen(date) : 0) + (host ? strlen(host) : 0) +
                           (ver ? strlen(ver) : 0);
}

/* Formats the session info answer for NAME (NAMELEN bytes, not NUL-terminated)
 * into OUT; returns its length (about 700 bytes). */
static inline size_t bench_body(char *out, const char *name, size_t namelen)
{
        if (namelen > 64)
                namelen = 64;
        int n = snprintf(out, BODY_MAX,
                         "{\"session\":{\"id\":\"3f0c2a9e-5b7d-4e21-9c6a-%012zu\",\"name\":\"%.*s\","
                         "\"status\":\"RUNNING\",\"status_info\":null,\"status_changed\":\"2026-11-22T10:15:03Z\","
                         "\"created_at\":\"2026-11-22T10:14:41Z\",\"terminated_at\":null,"
                         "\"domain_name\":\"default\",\"group_name\":\"research\",\"user_email\":\"alice@example.org\","
                         "\"access_key\":\"AKIAIOSFODNN7EXAMPLE\",\"image\":\"cr.example.org/python:3.11\","
                         "\"type\":\"interactive\",\"cluster_mode\":\"single-node\","
                         "\"cluster_size\":1,\"occupied_slots\":{\"cpu\":\"4\",\"mem\":\"17179869184\",\"cuda.shares\":\"1.5\"},"
                         "\"agent_ids\":[\"i-agent-07\"],\"scaling_group\":\"default\",\"service_ports\":["
                         "{\"name\":\"jupyter\",\"protocol\":\"http\",\"container_ports\":[8080]},"
                         "{\"name\":\"ttyd\",\"protocol\":\"http\",\"container_ports\":[7681]}],"
                         "\"result\":\"UNDEFINED\",\"num_queries\":%lu}}\n",
                         (size_t)namelen, (int)namelen, name, bench_hdr_bytes & 0xff);
        return n < 0 ? 0 : (size_t)n;
}

static inline int bench_port(int argc, char **argv)
{
        signal(SIGPIPE, SIG_IGN);
        return argc > 1 ? atoi(argv[1]) : 8080;
}

#endif
