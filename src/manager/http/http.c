/* http.c - see http.h. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/netaddr.h"
#include "common/timeutil.h"
#include "manager/http/http.h"
#include "manager/http/http_spool.h"

/* Memory MHD gives each connection: its read and write buffers come out of
 * it, so large bodies and answers move in pieces of up to about half. */
#define HTTP_CONN_MEMORY      ((size_t)512 << 10)
#define HTTP_CONN_MEMORY_STEP ((size_t)64 << 10)

struct http_upgrade {
        http_upgrade_fn fn;
        void *data;
        void (*data_free)(void *data); /* when the upgrade never happens */
};

/* The body bytes held for one client address (its live requests'). */
struct http_client {
        char addr[64];
        size_t bytes;   /* in memory */
        size_t spooled; /* on disk */
        unsigned refs;
        struct http_client *next;
};

struct http_header_kv {
        char *name, *value;
};

struct http_req {
        struct http_server *srv;
        struct MHD_Connection *conn;
        char *raw_target, *path, *query_raw, *method;
        char remote[64];
        struct buf body;
        bool started, body_too_large, dispatched, suspended, answered;
        size_t max_body;
        struct http_client *client; /* whose body budget this request draws on */
        size_t held;                /* body bytes counted against it, in memory */
        size_t held_spooled;        /* and on disk */
        struct http_spool spool;    /* the body, when it goes to disk */
        bool spoolable;             /* it may (an upload route's, with a spool folder) */
        unsigned status;
        char *content_type;
        struct buf resp;
        int resp_fd; /* http_reply_fd(), else -1 */
        uint64_t resp_fd_size, resp_fd_offset;
        /* http_reply_reader() */
        http_reader_fn reader;
        void *reader_data;
        void (*reader_free)(void *data);
        uint64_t reader_size;
        struct http_header_kv *headers;
        int nheaders;
        /* decoded query, parsed lazily */
        char **qkeys, **qvals;
        int nq;
        bool q_parsed;
        /* streaming */
        bool stream, stream_ended, stream_waiting;
        /* a streamed body (http_server_opts.stream_body) */
        bool streamed, sink_ended;
        http_sink_fn sink;
        void *sink_data;
        /* an upgrade (WebSocket): handed over once the 101 is sent */
        struct http_upgrade *upgrade;
        struct buf pending;
        void *user;
        int64_t t_start;
        struct http_req *prev, *next; /* server's list of live requests */
};

struct http_server {
        struct MHD_Daemon *d;
        struct loop *loop;
        int epfd;
        uint16_t port;
        size_t max_body;
        size_t (*body_limit)(const char *method, const char *path, void *data);
        bool (*stream_body)(const char *method, const char *path, void *data);
        http_dispatch_fn admit;
        size_t max_inflight, max_inflight_client;
        size_t inflight;                /* body bytes held in memory, all clients */
        char *spool_dir;
        size_t max_spool, max_spool_client;
        size_t spooled;                 /* body bytes held on disk, all clients */
        struct http_client *clients;    /* those with live requests */
        http_dispatch_fn dispatch;
        http_done_fn done;
        void *data;
        http_abort_fn abort;
        char *trusted_proxies; /* ",a,b," or NULL */
        bool need_run; /* a connection was resumed: run MHD before waiting */
        struct http_req *reqs; /* live requests, for shutdown */
};

int http_percent_decode(char *s, bool plus_is_space)
{
        char *w = s;
        for (char *p = s; *p; p++) {
                if (*p == '%') {
                        if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]))
                                return -EINVAL;
                        char hex[3] = { p[1], p[2], 0 };
                        char c = (char)strtol(hex, NULL, 16);
                        if (c == '\0')
                                return -EINVAL;
                        *w++ = c;
                        p += 2;
                } else if (*p == '+' && plus_is_space) {
                        *w++ = ' ';
                } else {
                        *w++ = *p;
                }
        }
        *w = '\0';
        return 0;
}

static void *uri_log_cb(void *cls, const char *uri, struct MHD_Connection *c)
{
        struct http_req *r = xcalloc(1, sizeof(*r));
        const char *q;

        r->srv = cls;
        r->conn = c;
        r->raw_target = xstrdup(uri);
        q = strchr(uri, '?');
        r->path = q ? xstrndup(uri, (size_t)(q - uri)) : xstrdup(uri);
        r->query_raw = xstrdup(q ? q + 1 : "");
        r->body = (struct buf)BUF_INIT;
        r->resp = (struct buf)BUF_INIT;
        r->resp_fd = -1;
        r->spool = (struct http_spool)HTTP_SPOOL_INIT;
        r->pending = (struct buf)BUF_INIT;
        r->t_start = monotonic_usec();
        r->next = r->srv->reqs;
        if (r->next)
                r->next->prev = r;
        r->srv->reqs = r;
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (ci && ci->client_addr) {
                const struct sockaddr *sa = ci->client_addr;
                if (sa->sa_family == AF_INET)
                        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, r->remote, sizeof(r->remote));
                else if (sa->sa_family == AF_INET6)
                        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, r->remote,
                                  sizeof(r->remote));
        }
        return r;
}

/* The budget entry of r's client address, made if need be. */
static struct http_client *client_ref(struct http_server *s, const char *addr)
{
        struct http_client *c;

        for (c = s->clients; c; c = c->next)
                if (streq(c->addr, addr))
                        break;
        if (!c) {
                c = xcalloc(1, sizeof(*c));
                snprintf(c->addr, sizeof(c->addr), "%s", addr);
                c->next = s->clients;
                s->clients = c;
        }
        c->refs++;
        return c;
}

static void client_unref(struct http_server *s, struct http_client *c)
{
        if (--c->refs > 0)
                return;
        for (struct http_client **p = &s->clients; *p; p = &(*p)->next) {
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        }
        free(c);
}

/* Count n more body bytes of r, in memory or on disk: 0, or the status
 * that refuses them (429: its client holds too much already, 503: all
 * clients together do). */
static unsigned body_reserve(struct http_req *r, size_t n, bool on_disk)
{
        struct http_server *s = r->srv;
        size_t max = on_disk ? s->max_spool : s->max_inflight, *all = on_disk ? &s->spooled : &s->inflight;
        size_t max_client = on_disk ? s->max_spool_client : s->max_inflight_client;
        size_t *client = on_disk ? &r->client->spooled : &r->client->bytes;

        if (max && (n > max || *all > max - n))
                return 503;
        if (max_client && (n > max_client || *client > max_client - n))
                return 429;
        *all += n;
        *client += n;
        *(on_disk ? &r->held_spooled : &r->held) += n;
        return 0;
}

/* Let go of r's bytes in memory (they went to disk, or away). */
static void body_release_memory(struct http_req *r)
{
        r->srv->inflight -= r->held;
        r->client->bytes -= r->held;
        r->held = 0;
}

static void body_release(struct http_req *r)
{
        if (!r->client)
                return;
        body_release_memory(r);
        r->srv->spooled -= r->held_spooled;
        r->client->spooled -= r->held_spooled;
        r->held_spooled = 0;
        client_unref(r->srv, r->client);
        r->client = NULL;
}

/* r's body goes to disk from now on (with what came so far): 0, or the
 * status that refuses it. */
static unsigned spool_start(struct http_req *r, size_t expected)
{
        struct tess_error *err = NULL;
        unsigned refused = body_reserve(r, expected > r->body.len ? expected : r->body.len, true);

        if (refused)
                return refused;
        if (http_spool_open(&r->spool, r->srv->spool_dir, &err) < 0) {
                log_warn("http: %s", err->msg);
                tess_error_free(err);
                return 507;
        }
        if (r->body.len > 0 && http_spool_write(&r->spool, r->body.data, r->body.len) < 0)
                return 507;
        buf_release(&r->body);
        body_release_memory(r);
        return 0;
}

/* Take n more bytes of r's body: 0, or the status that refuses them. */
static unsigned body_take(struct http_req *r, const char *p, size_t n)
{
        size_t len = (r->spool.fd >= 0 ? r->spool.len : r->body.len) + n;

        if (r->spool.fd < 0 && r->spoolable && len > HTTP_SPOOL_FROM) {
                unsigned refused = spool_start(r, len);
                if (refused)
                        return refused;
        }
        if (r->spool.fd >= 0) {
                unsigned refused = len > r->held_spooled ? body_reserve(r, len - r->held_spooled, true) : 0;
                if (refused)
                        return refused;
                return http_spool_write(&r->spool, p, n) < 0 ? 507 : 0;
        }
        /* beyond what Content-Length reserved (chunked) */
        unsigned refused = len > r->held ? body_reserve(r, len - r->held, false) : 0;
        if (refused)
                return refused;
        buf_append(&r->body, p, n);
        return 0;
}

static void req_free(struct http_req *r)
{
        body_release(r);
        if (r->prev)
                r->prev->next = r->next;
        else
                r->srv->reqs = r->next;
        if (r->next)
                r->next->prev = r->prev;
        free(r->raw_target);
        free(r->path);
        free(r->query_raw);
        free(r->method);
        free(r->content_type);
        if (r->upgrade) { /* never sent */
                if (r->upgrade->data_free)
                        r->upgrade->data_free(r->upgrade->data);
                free(r->upgrade);
        }
        if (r->spool.map)
                r->body = (struct buf)BUF_INIT; /* the mapping's, not ours */
        http_spool_close(&r->spool);
        buf_release(&r->body);
        buf_release(&r->resp);
        if (r->resp_fd >= 0)
                close(r->resp_fd);
        buf_release(&r->pending);
        if (r->reader && r->reader_free) /* never handed to MHD */
                r->reader_free(r->reader_data);
        for (int i = 0; i < r->nheaders; i++) {
                free(r->headers[i].name);
                free(r->headers[i].value);
        }
        free(r->headers);
        for (int i = 0; i < r->nq; i++) {
                free(r->qkeys[i]);
                free(r->qvals[i]);
        }
        free(r->qkeys);
        free(r->qvals);
        free(r);
}

static void completed_cb(void *cls, struct MHD_Connection *c UNUSED, void **req_cls,
                         enum MHD_RequestTerminationCode toe UNUSED)
{
        struct http_server *s = cls;
        struct http_req *r = *req_cls;

        if (!r)
                return;
        if (s->done)
                s->done(r, s->data);
        req_free(r);
        *req_cls = NULL;
}

static ssize_t stream_reader(void *cls, uint64_t pos UNUSED, char *out, size_t max)
{
        struct http_req *r = cls;

        if (r->pending.len > 0) {
                size_t n = r->pending.len < max ? r->pending.len : max;
                memcpy(out, r->pending.data, n);
                memmove(r->pending.data, r->pending.data + n, r->pending.len - n);
                r->pending.len -= n;
                r->pending.data[r->pending.len] = '\0';
                return (ssize_t)n;
        }
        if (r->stream_ended)
                return MHD_CONTENT_READER_END_OF_STREAM;
        r->stream_waiting = true;
        r->suspended = true;
        MHD_suspend_connection(r->conn);
        return 0;
}

struct reader_ctx {
        struct http_req *r;
        http_reader_fn fn;
        void *data;
        void (*data_free)(void *data);
};

static ssize_t reader_cb(void *cls, uint64_t pos UNUSED, char *out, size_t max)
{
        struct reader_ctx *rc = cls;
        ssize_t n = rc->fn(rc->data, out, max);

        if (n == 0)
                return MHD_CONTENT_READER_END_OF_STREAM;
        if (n == HTTP_READER_WAIT) {
                rc->r->suspended = true;
                MHD_suspend_connection(rc->r->conn);
                return 0;
        }
        return n < 0 ? MHD_CONTENT_READER_END_WITH_ERROR : n;
}

static void reader_free_cb(void *cls)
{
        struct reader_ctx *rc = cls;

        if (rc->data_free)
                rc->data_free(rc->data);
        free(rc);
}

struct http_upgraded {
        struct MHD_UpgradeResponseHandle *urh;
};

static void upgraded_cb(void *cls, struct MHD_Connection *c UNUSED, void *req_cls UNUSED, const char *extra_in,
                        size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
        struct http_upgrade *up = cls;
        struct http_upgraded *u = xcalloc(1, sizeof(*u));

        u->urh = urh;
        up->fn(up->data, sock, extra_in, extra_in_size, u);
        free(up);
}

void http_upgrade(struct http_req *r, http_upgrade_fn fn, void *data, void (*data_free)(void *data))
{
        r->upgrade = xcalloc(1, sizeof(*r->upgrade));
        r->upgrade->fn = fn;
        r->upgrade->data = data;
        r->upgrade->data_free = data_free;
        r->status = MHD_HTTP_SWITCHING_PROTOCOLS;
}

void http_upgraded_close(struct http_upgraded *u)
{
        MHD_upgrade_action(u->urh, MHD_UPGRADE_ACTION_CLOSE);
        free(u);
}

static enum MHD_Result queue_answer(struct http_req *r)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;

        if (r->upgrade) {
                resp = MHD_create_response_for_upgrade(upgraded_cb, r->upgrade);
                if (resp)
                        r->upgrade = NULL; /* upgraded_cb frees it */
        } else if (r->stream) {
                resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader, r, NULL);
        } else if (r->reader) {
                struct reader_ctx *rc = xcalloc(1, sizeof(*rc));
                *rc = (struct reader_ctx){ r, r->reader, r->reader_data, r->reader_free };
                resp = MHD_create_response_from_callback(r->reader_size == HTTP_SIZE_UNKNOWN ? MHD_SIZE_UNKNOWN
                                                                                            : r->reader_size,
                                                         256 * 1024, reader_cb, rc, reader_free_cb);
                if (resp)
                        r->reader = NULL; /* reader_free_cb frees it */
                else
                        free(rc);
        } else if (r->resp_fd >= 0) {
                resp = MHD_create_response_from_fd_at_offset64(r->resp_fd_size, r->resp_fd,
                                                               r->resp_fd_offset);
                if (resp)
                        r->resp_fd = -1; /* MHD closes it */
        } else if (r->resp.len > 0) {
                size_t len;
                char *body = buf_detach(&r->resp, &len);
                resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
        } else {
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        }
        if (!resp)
                return MHD_NO;
        if (r->content_type)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
        for (int i = 0; i < r->nheaders; i++)
                MHD_add_response_header(resp, r->headers[i].name, r->headers[i].value);
        ret = MHD_queue_response(r->conn, r->status, resp);
        MHD_destroy_response(resp);
        r->answered = true;
        return ret;
}

struct forwarded {
        const char *last; /* the last X-Forwarded-For header's value */
};

static enum MHD_Result forwarded_cb(void *cls, enum MHD_ValueKind kind UNUSED, const char *key, const char *value)
{
        struct forwarded *f = cls;
        if (value && strcasecmp(key, "X-Forwarded-For") == 0)
                f->last = value;
        return MHD_YES;
}

/* A trusted front's client: the address it appended last to
 * X-Forwarded-For, when that is an address. */
static void take_forwarded_for(struct http_req *r)
{
        struct http_server *s = r->srv;
        struct forwarded f = { 0 };
        char key[sizeof(r->remote) + 2], addr[sizeof(r->remote)];
        unsigned char bin[sizeof(struct in6_addr)];

        snprintf(key, sizeof(key), ",%s,", r->remote);
        if (!s->trusted_proxies || !r->remote[0] || !strstr(s->trusted_proxies, key))
                return;
        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, forwarded_cb, &f);
        if (!f.last)
                return;
        const char *p = strrchr(f.last, ',');
        p = p ? p + 1 : f.last;
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t");
        if (n == 0 || n >= sizeof(addr))
                return;
        memcpy(addr, p, n);
        addr[n] = '\0';
        if (inet_pton(AF_INET, addr, bin) == 1 || inet_pton(AF_INET6, addr, bin) == 1)
                memcpy(r->remote, addr, n + 1);
}

/* A body refused for the bytes held: answered at once, the connection
 * closed after the answer (what the client still sends is not read). */
static enum MHD_Result refuse_body(struct http_req *r, unsigned status)
{
        static const char busy[] = "{\"type\":\"https://api.backend.ai/probs/too-many-requests\",\"title\":\"too "
                                   "many request bodies in flight from your address: send fewer at once\","
                                   "\"status\":429}";
        static const char full[] = "{\"type\":\"https://api.backend.ai/probs/service-unavailable\",\"title\":\"the "
                                   "manager holds too many request bodies now: try again shortly\",\"status\":503}";
        static const char no_disk[] = "{\"type\":\"https://api.backend.ai/probs/insufficient-storage\",\"title\":"
                                      "\"the manager has no room on disk for the body now: try again later\","
                                      "\"status\":507}";

        buf_release(&r->body);
        http_spool_close(&r->spool);
        if (status == 429)
                http_reply(r, 429, "application/problem+json", busy, sizeof(busy) - 1);
        else if (status == 507)
                http_reply(r, 507, "application/problem+json", no_disk, sizeof(no_disk) - 1);
        else
                http_reply(r, 503, "application/problem+json", full, sizeof(full) - 1);
        http_add_header(r, "Retry-After", "5");
        http_add_header(r, "Connection", "close");
        r->dispatched = true;
        return queue_answer(r);
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *c UNUSED, const char *url UNUSED,
                                 const char *method, const char *version UNUSED, const char *upload_data,
                                 size_t *upload_data_size, void **req_cls)
{
        struct http_server *s = cls;
        struct http_req *r = *req_cls;

        if (!r->started) {
                r->started = true;
                r->method = xstrdup(method);
                take_forwarded_for(r);
                r->client = client_ref(s, r->remote);
                if (s->stream_body && s->stream_body(method, r->path, s->data)) {
                        r->streamed = r->dispatched = true;
                        s->dispatch(r, s->data);
                        if (r->status && !r->suspended)
                                return queue_answer(r); /* answered at once: the body is not read */
                        return MHD_YES;
                }
                r->max_body = s->body_limit ? s->body_limit(method, r->path, s->data) : s->max_body;
                const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
                unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
                if (len > r->max_body)
                        r->body_too_large = true;
                /* The headers alone may settle it (no such route, not
                 * authenticated, too large): answered now, the body unread. */
                if (s->admit) {
                        s->admit(r, s->data);
                        if (r->status) {
                                r->dispatched = true;
                                /* without a body, answered at the end as usual (the
                                 * connection kept); a body left unread ends it */
                                if (len == 0 && !MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                                             MHD_HTTP_HEADER_TRANSFER_ENCODING))
                                        return MHD_YES;
                                http_add_header(r, "Connection", "close");
                                return queue_answer(r);
                        }
                }
                r->spoolable = s->spool_dir && r->max_body > s->max_body;
                if (len > 0 && !r->body_too_large) {
                        bool to_disk = r->spoolable && len > HTTP_SPOOL_FROM;
                        unsigned refused = to_disk ? spool_start(r, (size_t)len) : body_reserve(r, (size_t)len, false);
                        if (refused)
                                return refuse_body(r, refused);
                        if (!to_disk)
                                buf_grow(&r->body, (size_t)len + 1); /* one allocation, no copies while it comes */
                }
                return MHD_YES;
        }
        if (r->answered) { /* refused on its headers: what still comes is dropped */
                *upload_data_size = 0;
                return MHD_YES;
        }
        if (*upload_data_size > 0 && r->streamed) {
                if (r->sink && !r->status && !r->sink_ended) {
                        size_t took = r->sink(r->sink_data, upload_data, *upload_data_size);
                        *upload_data_size -= took < *upload_data_size ? took : *upload_data_size;
                        if (*upload_data_size > 0 && !r->suspended) {
                                r->suspended = true;
                                MHD_suspend_connection(r->conn);
                        }
                } else {
                        *upload_data_size = 0;
                }
                return MHD_YES;
        }
        if (*upload_data_size > 0) {
                size_t n = *upload_data_size, had = r->spool.fd >= 0 ? r->spool.len : r->body.len;
                *upload_data_size = 0;
                if (r->body_too_large)
                        return MHD_YES;
                if (had + n > r->max_body) {
                        r->body_too_large = true;
                        buf_release(&r->body);
                        http_spool_close(&r->spool);
                        return MHD_YES;
                }
                unsigned refused = body_take(r, upload_data, n);
                return refused ? refuse_body(r, refused) : MHD_YES;
        }
        if (r->answered)
                return MHD_YES;
        if (r->streamed && r->sink && !r->sink_ended) {
                r->sink_ended = true;
                r->sink(r->sink_data, NULL, 0);
        }
        if (!r->dispatched && r->spool.fd >= 0 && !r->body_too_large) {
                int e = http_spool_map(&r->spool, &r->body);
                if (e < 0)
                        return refuse_body(r, e == -ENOSPC || e == -EDQUOT ? 507 : 503);
        }
        if (!r->dispatched) {
                r->dispatched = true;
                s->dispatch(r, s->data);
        }
        if (r->suspended)
                return MHD_YES;
        if (r->status == 0 && r->streamed) { /* answered later */
                http_suspend(r);
                return MHD_YES;
        }
        if (r->status == 0)
                http_reply(r, 500, "text/plain", "no answer\n", 10);
        return queue_answer(r);
}

static void on_epoll(struct loop *l UNUSED, int fd UNUSED, uint32_t events UNUSED, void *data)
{
        struct http_server *s = data;
        MHD_run(s->d);
}

static void on_prepare(struct loop *l UNUSED, int64_t *timeout_usec, void *data)
{
        struct http_server *s = data;
        MHD_UNSIGNED_LONG_LONG ms;

        /* In external-epoll mode a resume does not wake our epoll: MHD must
         * be run once to pick resumed connections up. */
        if (s->need_run) {
                s->need_run = false;
                MHD_run(s->d);
        }
        if (MHD_get_timeout(s->d, &ms) == MHD_YES && ms == 0) {
                MHD_run(s->d);
                /* still ready (a large body is read a buffer at a time, and
                 * MHD's edge-triggered epoll will not signal the rest): do
                 * not wait at all */
                if (MHD_get_timeout(s->d, &ms) != MHD_YES)
                        return;
        }
        if (MHD_get_timeout(s->d, &ms) == MHD_YES && (int64_t)ms * 1000 < *timeout_usec)
                *timeout_usec = (int64_t)ms * 1000;
}

int http_server_start(struct loop *l, const struct http_server_opts *o, http_dispatch_fn dispatch,
                      http_done_fn done, void *data, struct http_server **ret, struct tess_error **err)
{
        struct sockaddr_in sa;
        int r;

        r = netaddr_parse_listen(o->listen, &sa, err);
        if (r < 0)
                return r;
        struct http_server *s = xcalloc(1, sizeof(*s));
        s->loop = l;
        s->max_body = o->max_body;
        s->body_limit = o->body_limit;
        s->stream_body = o->stream_body;
        s->admit = o->admit;
        s->max_inflight = o->max_inflight;
        s->max_inflight_client = o->max_inflight_client;
        s->spool_dir = o->spool_dir ? xstrdup(o->spool_dir) : NULL;
        s->max_spool = o->max_spool;
        s->max_spool_client = o->max_spool_client;
        s->dispatch = dispatch;
        s->done = done;
        s->abort = o->abort;
        s->data = data;
        if (o->trusted_proxies && *o->trusted_proxies) {
                s->trusted_proxies = xasprintf(",%s,", o->trusted_proxies);
                for (char *p = s->trusted_proxies; *p; p++)
                        if (*p == ' ')
                                *p = ',';
        }
        /* A peer gone mid-answer is an error return, not a signal: so MHD
         * may send files with sendfile() (SIGPIPE_HANDLED_BY_APP). */
        signal(SIGPIPE, SIG_IGN);
        s->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE | MHD_USE_TURBO |
                                        MHD_USE_ERROR_LOG,
                                0,
                                NULL, NULL, access_cb, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                MHD_OPTION_SIGPIPE_HANDLED_BY_APP, (int)1,
                                /* large bodies (uploads) are read and answers written in
                                 * pieces of up to half of this */
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
                                MHD_OPTION_CONNECTION_MEMORY_INCREMENT, (size_t)HTTP_CONN_MEMORY_STEP,
                                MHD_OPTION_URI_LOG_CALLBACK, uri_log_cb, s, MHD_OPTION_NOTIFY_COMPLETED,
                                completed_cb, s, MHD_OPTION_CONNECTION_LIMIT, o->max_conns ? o->max_conns : 4096,
                                MHD_OPTION_CONNECTION_TIMEOUT, o->conn_timeout_s ? o->conn_timeout_s : 120,
                                MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, MHD_OPTION_END);
        if (!s->d) {
                free(s->spool_dir);
                free(s);
                return tess_err(err, EADDRINUSE, "cannot listen on '%s'", o->listen);
        }
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
        s->epfd = di->epoll_fd;
        di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
        s->port = di ? di->port : 0;
        r = loop_add_fd(l, s->epfd, 0x001 /* EPOLLIN */, on_epoll, s, err);
        if (r >= 0) {
                r = loop_add_prepare(l, on_prepare, s, err);
                if (r < 0)
                        loop_del_fd(l, s->epfd);
        }
        if (r < 0) {
                MHD_stop_daemon(s->d);
                free(s->spool_dir);
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct http_server *http_server_stop(struct http_server *s)
{
        if (!s)
                return NULL;
        /* MHD refuses to stop with suspended connections: end streams and
         * answer parked requests, then let MHD flush them. */
        for (int round = 0; round < 100; round++) {
                bool any = false;
                for (struct http_req *r = s->reqs; r; r = r->next) {
                        if (!r->suspended)
                                continue;
                        any = true;
                        if (r->stream) {
                                http_stream_end(r);
                        } else {
                                if (s->abort && round == 0) {
                                        s->abort(r, s->data);
                                        if (!r->suspended)
                                                continue;
                                }
                                static const char msg[] = "{\"type\":\"https://api.backend.ai/probs/"
                                                          "service-unavailable\",\"title\":\"the manager is "
                                                          "shutting down\",\"status\":503}";
                                http_reply(r, 503, "application/problem+json", msg, sizeof(msg) - 1);
                                http_resume(r);
                        }
                }
                if (!any)
                        break;
                MHD_run(s->d);
        }
        loop_del_fd(s->loop, s->epfd);
        loop_del_prepare(s->loop, on_prepare, s);
        MHD_stop_daemon(s->d);
        free(s->trusted_proxies);
        free(s->spool_dir);
        free(s);
        return NULL;
}

uint16_t http_server_port(const struct http_server *s)
{
        return s->port;
}

const char *http_method(const struct http_req *r)
{
        return r->method;
}

const char *http_raw_target(const struct http_req *r)
{
        return r->raw_target;
}

const char *http_path(const struct http_req *r)
{
        return r->path;
}

const char *http_query_raw(const struct http_req *r)
{
        return r->query_raw;
}

const char *http_header(const struct http_req *r, const char *name)
{
        return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

struct header_iter {
        void (*fn)(void *data, const char *name, const char *value);
        void *data;
};

static enum MHD_Result header_iter_cb(void *cls, enum MHD_ValueKind kind UNUSED, const char *key, const char *value)
{
        struct header_iter *it = cls;
        it->fn(it->data, key, value ? value : "");
        return MHD_YES;
}

void http_headers_each(const struct http_req *r, void (*fn)(void *data, const char *name, const char *value),
                       void *data)
{
        struct header_iter it = { fn, data };
        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, header_iter_cb, &it);
}

const char *http_remote_addr(const struct http_req *r)
{
        return r->remote;
}

const struct buf *http_body(const struct http_req *r)
{
        return &r->body;
}

size_t http_body_limit(const struct http_req *r)
{
        return r->max_body;
}

bool http_body_too_large(const struct http_req *r)
{
        return r->body_too_large;
}

int64_t http_start_usec(const struct http_req *r)
{
        return r->t_start;
}

static void parse_query(struct http_req *r)
{
        _cleanup_free_ char *copy = xstrdup(r->query_raw);
        char *save = NULL;

        r->q_parsed = true;
        for (char *part = strtok_r(copy, "&", &save); part; part = strtok_r(NULL, "&", &save)) {
                char *eq = strchr(part, '=');
                char *k = eq ? xstrndup(part, (size_t)(eq - part)) : xstrdup(part);
                char *v = xstrdup(eq ? eq + 1 : "");
                if (http_percent_decode(k, true) < 0 || http_percent_decode(v, true) < 0 || r->nq >= 64) {
                        free(k);
                        free(v);
                        continue;
                }
                r->qkeys = xrealloc(r->qkeys, sizeof(char *) * (size_t)(r->nq + 1));
                r->qvals = xrealloc(r->qvals, sizeof(char *) * (size_t)(r->nq + 1));
                r->qkeys[r->nq] = k;
                r->qvals[r->nq] = v;
                r->nq++;
        }
}

const char *http_query(struct http_req *r, const char *name)
{
        if (!r->q_parsed)
                parse_query(r);
        for (int i = 0; i < r->nq; i++)
                if (streq(r->qkeys[i], name))
                        return r->qvals[i];
        return NULL;
}

void http_set_user(struct http_req *r, void *p)
{
        r->user = p;
}

void *http_get_user(const struct http_req *r)
{
        return r->user;
}

void http_add_header(struct http_req *r, const char *name, const char *value)
{
        r->headers = xrealloc(r->headers, sizeof(*r->headers) * (size_t)(r->nheaders + 1));
        r->headers[r->nheaders].name = xstrdup(name);
        r->headers[r->nheaders].value = xstrdup(value);
        r->nheaders++;
}

static void drop_resp_fd(struct http_req *r)
{
        if (r->resp_fd >= 0)
                close(r->resp_fd);
        r->resp_fd = -1;
        r->resp_fd_offset = 0;
        if (r->reader && r->reader_free)
                r->reader_free(r->reader_data);
        r->reader = NULL;
}

void http_reply(struct http_req *r, unsigned status, const char *content_type, const char *body, size_t len)
{
        r->status = status;
        free(r->content_type);
        r->content_type = content_type ? xstrdup(content_type) : NULL;
        buf_reset(&r->resp);
        buf_append(&r->resp, body, len);
        drop_resp_fd(r);
}

void http_reply_take(struct http_req *r, unsigned status, const char *content_type, char *body, size_t len)
{
        r->status = status;
        free(r->content_type);
        r->content_type = content_type ? xstrdup(content_type) : NULL;
        buf_release(&r->resp);
        r->resp = (struct buf){ .data = body, .len = len, .cap = len + 1 };
        drop_resp_fd(r);
}

void http_reply_fd(struct http_req *r, unsigned status, const char *content_type, int fd, uint64_t size)
{
        http_reply(r, status, content_type, "", 0);
        r->resp_fd = fd;
        r->resp_fd_size = size;
}

void http_reply_fd_at(struct http_req *r, unsigned status, const char *content_type, int fd, uint64_t offset,
                      uint64_t size)
{
        http_reply_fd(r, status, content_type, fd, size);
        r->resp_fd_offset = offset;
}

void http_reply_reader(struct http_req *r, unsigned status, const char *content_type, uint64_t size,
                       http_reader_fn fn, void *data, void (*data_free)(void *data))
{
        http_reply(r, status, content_type, "", 0);
        r->reader = fn;
        r->reader_data = data;
        r->reader_free = data_free;
        r->reader_size = size;
}

unsigned http_reply_status(const struct http_req *r)
{
        return r->status;
}

void http_body_sink(struct http_req *r, http_sink_fn fn, void *data)
{
        r->sink = fn;
        r->sink_data = data;
}

void http_suspend(struct http_req *r)
{
        if (r->suspended)
                return;
        r->suspended = true;
        MHD_suspend_connection(r->conn);
}

void http_resume(struct http_req *r)
{
        if (!r->suspended)
                return;
        r->suspended = false;
        r->stream_waiting = false;
        MHD_resume_connection(r->conn);
        r->srv->need_run = true;
}

void http_stream_start(struct http_req *r, unsigned status, const char *content_type)
{
        r->stream = true;
        r->status = status;
        free(r->content_type);
        r->content_type = xstrdup(content_type);
}

void http_stream_write(struct http_req *r, const char *p, size_t n)
{
        buf_append(&r->pending, p, n);
        if (r->stream_waiting)
                http_resume(r);
}

void http_stream_end(struct http_req *r)
{
        r->stream_ended = true;
        if (r->stream_waiting)
                http_resume(r);
}

/* ---- multipart/form-data bodies (libmicrohttpd's post processor) ---- */

struct form_state {
        http_form_part_fn fn;
        void *data;
        struct tess_error **err;
        char *field, *filename;
        struct buf part;
        bool open, failed;
        size_t nparts;
};

static void form_flush(struct form_state *st)
{
        if (st->open && !st->failed &&
            st->fn(st->data, st->field ? st->field : "", st->filename, st->part.data, st->part.len, st->err) < 0)
                st->failed = true;
        st->open = false;
        free(st->field);
        free(st->filename);
        st->field = st->filename = NULL;
        buf_reset(&st->part);
}

static enum MHD_Result form_iter(void *cls, enum MHD_ValueKind kind UNUSED, const char *key, const char *filename,
                                 const char *content_type UNUSED, const char *transfer_encoding UNUSED,
                                 const char *data, uint64_t off, size_t size)
{
        struct form_state *st = cls;

        if (st->failed)
                return MHD_NO;
        if (off == 0 || !st->open) {
                form_flush(st);
                if (st->failed)
                        return MHD_NO;
                st->open = true;
                st->nparts++;
                st->field = key ? xstrdup(key) : NULL;
                st->filename = filename ? xstrdup(filename) : NULL;
        }
        buf_append(&st->part, data, size);
        return MHD_YES;
}

int http_form_parts(struct http_req *r, http_form_part_fn fn, void *data, struct tess_error **err)
{
        struct form_state st = { .fn = fn, .data = data, .err = err, .part = BUF_INIT };
        const char *ct = http_header(r, "Content-Type");

        if (!ct || strncasecmp(ct, "multipart/form-data", 19) != 0)
                return tess_err(err, EINVAL, "the body must be multipart/form-data");
        struct MHD_PostProcessor *pp = MHD_create_post_processor(r->conn, 64 * 1024, form_iter, &st);
        if (!pp)
                return tess_err(err, EINVAL, "the multipart/form-data body has no usable boundary");
        enum MHD_Result ok = MHD_post_process(pp, r->body.data, r->body.len);
        if (MHD_destroy_post_processor(pp) != MHD_YES)
                ok = MHD_NO;
        form_flush(&st);
        buf_release(&st.part);
        if (st.failed)
                return -EINVAL;
        if (ok != MHD_YES)
                return tess_err(err, EINVAL, "the multipart/form-data body is malformed");
        return (int)st.nparts;
}
