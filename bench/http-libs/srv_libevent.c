/* srv_libevent.c - libevent 2.1 evhttp benchmark server, one event_base on
 * one thread (evhttp's only model). */
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "common.h"

static void on_request(struct evhttp_request *req, void *arg)
{
        struct evkeyvalq *in = evhttp_request_get_input_headers(req);
        struct evbuffer *out = evhttp_request_get_output_buffer(req);
        const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
        char body[BODY_MAX];
        size_t len;

        (void)arg;
        bench_use_headers(evhttp_find_header(in, "Authorization"), evhttp_find_header(in, "Date"),
                          evhttp_find_header(in, "Host"), evhttp_find_header(in, "X-BackendAI-Version"));
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
        if (evhttp_request_get_command(req) == EVHTTP_REQ_GET && path &&
            strncmp(path, SESSION_PREFIX, strlen(SESSION_PREFIX)) == 0) {
                const char *name = path + strlen(SESSION_PREFIX);
                len = bench_body(body, name, strlen(name));
                evbuffer_add(out, body, len);
                evhttp_send_reply(req, 200, "OK", NULL);
        } else {
                evbuffer_add_printf(out, "{\"title\":\"not found\"}\n");
                evhttp_send_reply(req, 404, "Not Found", NULL);
        }
}

int main(int argc, char **argv)
{
        int port = bench_port(argc, argv);
        struct event_base *base = event_base_new();
        struct evhttp *http = base ? evhttp_new(base) : NULL;

        if (!http) {
                fprintf(stderr, "srv_libevent: cannot create the event base\n");
                return 1;
        }
        evhttp_set_gencb(http, on_request, NULL);
        evhttp_set_max_body_size(http, 1 << 20);
        evhttp_set_timeout(http, 120);
        if (!evhttp_bind_socket_with_handle(http, "127.0.0.1", (ev_uint16_t)port)) {
                fprintf(stderr, "srv_libevent: cannot listen on port %d\n", port);
                return 1;
        }
        fprintf(stderr, "srv_libevent: libevent %s (%s backend), port %d\n", event_get_version(),
                event_base_get_method(base), port);
        event_base_dispatch(base);
        return 0;
}
