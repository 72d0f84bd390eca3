/* srv_h2o.c - h2o library (libh2o-evloop, Debian's 2.2.5) benchmark server:
 * one h2o_evloop on one thread, following h2o's examples/libh2o/simple.c. */
#define H2O_USE_LIBUV 0 /* libh2o-evloop.pc does not say it; without it h2o.h expects libuv */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <h2o.h>

#include "common.h"

static h2o_globalconf_t config;
static h2o_context_t ctx;
static h2o_accept_ctx_t accept_ctx;

/* h2o's header values are (base, len), not NUL-terminated: add the lengths
 * directly instead of strlen() (same effect as bench_use_headers()). */
static void use_hdr(h2o_req_t *req, const h2o_token_t *token)
{
        ssize_t i = h2o_find_header(&req->headers, token, -1);
        if (i >= 0)
                bench_hdr_bytes += req->headers.entries[i].value.len;
}

static int on_session(h2o_handler_t *self, h2o_req_t *req)
{
        static h2o_generator_t generator = { NULL, NULL };
        h2o_iovec_t body;
        (void)self;

        if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")))
                return -1; /* falls through to h2o's 404 */
        use_hdr(req, H2O_TOKEN_AUTHORIZATION);
        use_hdr(req, H2O_TOKEN_DATE);
        bench_hdr_bytes += req->authority.len; /* Host */
        ssize_t vi = h2o_find_header_by_str(&req->headers, H2O_STRLIT("x-backendai-version"), -1);
        if (vi >= 0)
                bench_hdr_bytes += req->headers.entries[vi].value.len;
        /* path_normalized is "/session/<name>" (the registered prefix matched) */
        const char *name = req->path_normalized.base + strlen(SESSION_PREFIX);
        size_t namelen = req->path_normalized.len - strlen(SESSION_PREFIX);
        body.base = h2o_mem_alloc_pool(&req->pool, BODY_MAX);
        body.len = bench_body(body.base, name, namelen);
        req->res.status = 200;
        req->res.reason = "OK";
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
        req->res.content_length = body.len;
        h2o_start_response(req, &generator);
        h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
        return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
        h2o_socket_t *sock;

        if (err != NULL)
                return;
        if ((sock = h2o_evloop_socket_accept(listener)) == NULL)
                return;
        h2o_accept(&accept_ctx, sock);
}

int main(int argc, char **argv)
{
        int port = bench_port(argc, argv), fd, one = 1;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

        h2o_config_init(&config);
        config.max_request_entity_size = 1 << 20;
        h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
        h2o_pathconf_t *pc = h2o_config_register_path(host, "/session/", 0);
        h2o_handler_t *h = h2o_create_handler(pc, sizeof(*h));
        h->on_req = on_session;

        h2o_context_init(&ctx, h2o_evloop_create(), &config);
        accept_ctx.ctx = &ctx;
        accept_ctx.hosts = config.hosts;

        if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
            bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, SOMAXCONN) != 0) {
                fprintf(stderr, "srv_h2o: cannot listen on port %d: %s\n", port, strerror(errno));
                return 1;
        }
        h2o_socket_t *listener = h2o_evloop_socket_create(ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
        h2o_socket_read_start(listener, on_accept);
        fprintf(stderr, "srv_h2o: libh2o-evloop %s, port %d\n", H2O_VERSION, port);
        while (h2o_evloop_run(ctx.loop, INT32_MAX) == 0)
                ;
        return 0;
}
