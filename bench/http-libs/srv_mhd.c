/* srv_mhd.c - libmicrohttpd benchmark server.
 *
 *   srv_mhd PORT ext      MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO, no
 *                         internal thread: our own single-threaded epoll loop
 *                         watches MHD's epoll fd and calls MHD_run(), with the
 *                         timeout taken from MHD_get_timeout() - the same way
 *                         src/manager/http/http.c drives it from src/common/loop.c.
 *   srv_mhd PORT thread   MHD_USE_EPOLL_INTERNAL_THREAD (reference only: the
 *                         handler would run on MHD's thread, not on our loop).
 *
 * The access handler follows the manager's pattern: the first call (headers
 * received) only marks the request, the last call (body done) answers with a
 * copied buffer (MHD_RESPMEM_MUST_COPY, as http.c does).
 */
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "common.h"

static int started_marker;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
        char body[BODY_MAX];
        struct MHD_Response *resp;
        enum MHD_Result ret;
        unsigned status = 200;
        size_t len;

        (void)cls;
        (void)version;
        (void)upload_data;
        if (*req_cls == NULL) {
                *req_cls = &started_marker;
                return MHD_YES;
        }
        if (*upload_data_size > 0) {
                *upload_data_size = 0;
                return MHD_YES;
        }
        bench_use_headers(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_DATE),
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-BackendAI-Version"));
        if (strcmp(method, "GET") == 0 && strncmp(url, SESSION_PREFIX, strlen(SESSION_PREFIX)) == 0) {
                const char *name = url + strlen(SESSION_PREFIX);
                len = bench_body(body, name, strlen(name));
        } else {
                status = 404;
                len = (size_t)snprintf(body, sizeof(body), "{\"title\":\"not found\"}\n");
        }
        resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        ret = MHD_queue_response(c, status, resp);
        MHD_destroy_response(resp);
        return ret;
}

int main(int argc, char **argv)
{
        int port = bench_port(argc, argv);
        int internal = argc > 2 && strcmp(argv[2], "thread") == 0;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        unsigned flags = MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO | MHD_USE_ERROR_LOG;

        flags |= internal ? MHD_USE_EPOLL_INTERNAL_THREAD : MHD_USE_EPOLL;
        struct MHD_Daemon *d = MHD_start_daemon(
                flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                MHD_OPTION_CONNECTION_LIMIT, 4096, MHD_OPTION_CONNECTION_TIMEOUT, 120,
                MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, MHD_OPTION_END);
        if (!d) {
                fprintf(stderr, "srv_mhd: cannot listen on port %d\n", port);
                return 1;
        }
        fprintf(stderr, "srv_mhd: libmicrohttpd %s, %s, port %d\n", MHD_get_version(),
                internal ? "MHD_USE_EPOLL_INTERNAL_THREAD" : "external epoll loop", port);
        if (internal) {
                for (;;)
                        pause();
        }

        int mhd_ep = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD)->epoll_fd;
        int ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = mhd_ep };
        if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, mhd_ep, &ev) < 0) {
                perror("srv_mhd: epoll");
                return 1;
        }
        for (;;) {
                /* the manager's loop_run() + http.c on_prepare(), minus its timers */
                int64_t timeout_ms = 1000;
                MHD_UNSIGNED_LONG_LONG ms;
                if (MHD_get_timeout(d, &ms) == MHD_YES) {
                        if (ms == 0)
                                MHD_run(d);
                        else if ((int64_t)ms < timeout_ms)
                                timeout_ms = (int64_t)ms;
                }
                struct epoll_event evs[64];
                int n = epoll_wait(ep, evs, 64, (int)timeout_ms);
                if (n < 0 && errno != EINTR) {
                        perror("srv_mhd: epoll_wait");
                        return 1;
                }
                for (int i = 0; i < n; i++)
                        MHD_run(d);
        }
}
