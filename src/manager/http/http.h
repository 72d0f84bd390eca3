/* http.h - the manager's HTTP server: libmicrohttpd driven by our own event
 * loop (external epoll mode, single thread).
 *
 * A request is read whole (headers and body, bounded by max_body; a large
 * upload's body on disk, see spool_dir), then handed to the dispatcher.  Before its body is read, opts.admit may
 * answer it on its headers alone (no such route, not authenticated, too
 * large): the answer goes out at once, the body is never read and the
 * connection closes.  The body bytes held are budgeted per client address
 * (max_inflight_client) and in total (max_inflight): a body that would go
 * past either is refused at once, 429 or 503 with Retry-After, its bytes
 * already held let go.  The handler answers at once with http_reply*,
 * or suspends the request (http_suspend) and answers later from a timer or
 * event with http_reply* followed by http_resume; or turns it into a
 * stream (http_stream_start) fed with http_stream_write, for server-sent
 * events.  The raw request target is kept as sent, for request signing.
 *
 * Requests that opts.stream_body picks (the app proxy's) are dispatched as
 * soon as their headers are in: the handler answers at once (the body is
 * then dropped), or takes the body as it comes (http_body_sink) and
 * answers when it can; such a request waits (suspended) until answered. */
#ifndef TESS_HTTP_H
#define TESS_HTTP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/error.h"

struct loop;
struct http_server;
struct http_req;

#define HTTP_SPOOL_FROM ((size_t)1 << 20) /* an upload's body goes to disk past this */

typedef void (*http_dispatch_fn)(struct http_req *req, void *data);
/* Called when a request ends (answered, stream closed or client gone). */
typedef void (*http_done_fn)(struct http_req *req, void *data);
/* Called at shutdown for each parked (suspended, non-stream) request so the
 * application can answer it; those still parked afterwards get a 503. */
typedef void (*http_abort_fn)(struct http_req *req, void *data);

struct http_server_opts {
        const char *listen;   /* "HOST:PORT" */
        size_t max_body;      /* bytes */
        /* optional: the limit for one request (else max_body); data is the
         * dispatcher's */
        size_t (*body_limit)(const char *method, const char *path, void *data);
        /* optional: whether a request's body is streamed (see above) */
        bool (*stream_body)(const char *method, const char *path, void *data);
        /* optional: look at a request when its headers are in; answering
         * it (http_reply) refuses the body (see above) */
        http_dispatch_fn admit;
        /* body bytes held at once in memory, in total and per client
         * address (http_remote_addr); 0 for no limit */
        size_t max_inflight, max_inflight_client;
        /* optional: a folder for the bodies of requests whose limit
         * (body_limit) is above max_body (uploads): past HTTP_SPOOL_FROM
         * bytes such a body goes to an unlinked file there, not memory
         * (http_spool.h), bounded by max_spool in total and
         * max_spool_client per client address (0: no limit); a full disk
         * refuses it with 507 */
        const char *spool_dir;
        size_t max_spool, max_spool_client;
        unsigned max_conns;
        unsigned conn_timeout_s;
        http_abort_fn abort; /* optional */
        /* optional: peers (addresses as inet_ntop writes them, separated by
         * commas) whose X-Forwarded-For names the client: a front such as
         * haproxy.  http_remote_addr() is then the address the front
         * appended last; from any other peer the header is ignored. */
        const char *trusted_proxies;
};

int http_server_start(struct loop *l, const struct http_server_opts *o, http_dispatch_fn dispatch,
                      http_done_fn done, void *data, struct http_server **ret, struct tess_error **err);
struct http_server *http_server_stop(struct http_server *s);
/* Bound port (useful with port 0). */
uint16_t http_server_port(const struct http_server *s);

/* Request accessors.  Strings live as long as the request. */
const char *http_method(const struct http_req *r);
const char *http_raw_target(const struct http_req *r); /* "/session/a%20b?x=1" as sent */
const char *http_path(const struct http_req *r);       /* raw path, no query */
const char *http_query_raw(const struct http_req *r);  /* after '?', or "" */
const char *http_header(const struct http_req *r, const char *name);
/* Every request header, in the order sent: fn(data, name, value). */
void http_headers_each(const struct http_req *r, void (*fn)(void *data, const char *name, const char *value),
                       void *data);
const char *http_remote_addr(const struct http_req *r);
const struct buf *http_body(const struct http_req *r);
bool http_body_too_large(const struct http_req *r);
size_t http_body_limit(const struct http_req *r); /* what was too large for */
/* Decoded query argument, or NULL (first occurrence). */
const char *http_query(struct http_req *r, const char *name);
int64_t http_start_usec(const struct http_req *r);

/* Per-request slot for the application (freed by the done callback). */
void http_set_user(struct http_req *r, void *p);
void *http_get_user(const struct http_req *r);

/* Answers.  Headers added before the reply go out with it. */
void http_add_header(struct http_req *r, const char *name, const char *value);
void http_reply(struct http_req *r, unsigned status, const char *content_type, const char *body, size_t len);
/* The same, taking ownership of a malloc'd, NUL-terminated body. */
void http_reply_take(struct http_req *r, unsigned status, const char *content_type, char *body, size_t len);
/* The same with the first `size` bytes of an open file, streamed from it
 * (never read whole); takes fd. */
void http_reply_fd(struct http_req *r, unsigned status, const char *content_type, int fd, uint64_t size);
/* The same with `size` bytes of fd from `offset` (a Range answer). */
void http_reply_fd_at(struct http_req *r, unsigned status, const char *content_type, int fd, uint64_t offset,
                      uint64_t size);
/* An answer produced while it is sent (an archive built on the fly): MHD
 * calls fn(data, out, max) whenever the client can take more; fn returns
 * the bytes it put in out (> 0), 0 at the end, HTTP_READER_WAIT when it
 * has nothing yet (the connection waits until http_resume), or another
 * value < 0 to abort the connection.  size: the length when known, else
 * HTTP_SIZE_UNKNOWN (chunked).  data_free(data) runs once the answer is
 * done or dropped. */
#define HTTP_SIZE_UNKNOWN UINT64_MAX
#define HTTP_READER_WAIT  (-EAGAIN)
typedef ssize_t (*http_reader_fn)(void *data, char *out, size_t max);
void http_reply_reader(struct http_req *r, unsigned status, const char *content_type, uint64_t size,
                       http_reader_fn fn, void *data, void (*data_free)(void *data));
unsigned http_reply_status(const struct http_req *r);

/* Park the request; answer later with http_reply + http_resume. */
void http_suspend(struct http_req *r);
void http_resume(struct http_req *r);

/* Streaming answer of unknown length (server-sent events). */
void http_stream_start(struct http_req *r, unsigned status, const char *content_type);
void http_stream_write(struct http_req *r, const char *p, size_t n);
void http_stream_end(struct http_req *r);

/* A streamed body (opts.stream_body): fn(data, p, n) gets each piece as
 * it comes and returns how much it took; less than n suspends the request
 * until http_resume (the rest comes again then).  At the end of the body,
 * fn(data, NULL, 0).  Without a sink, or once the request is answered,
 * the body is dropped. */
typedef size_t (*http_sink_fn)(void *data, const char *p, size_t n);
void http_body_sink(struct http_req *r, http_sink_fn fn, void *data);

/* Percent-decode in place; returns -EINVAL on a bad escape or a NUL byte. */
int http_percent_decode(char *s, bool plus_is_space);

/* Protocol upgrades (WebSocket): answer 101 with the headers added so far;
 * once it is sent, fn gets the socket (and bytes already read from it) on
 * the loop, and data is fn's; if it never is, data_free(data) is called.
 * The connection stays open until http_upgraded_close(), which must also
 * run on the loop; never close fd directly. */
struct http_upgraded;
typedef void (*http_upgrade_fn)(void *data, int fd, const char *extra, size_t extra_len, struct http_upgraded *u);
void http_upgrade(struct http_req *r, http_upgrade_fn fn, void *data, void (*data_free)(void *data));
void http_upgraded_close(struct http_upgraded *u);

/* The parts of a multipart/form-data body, each whole: fn(data, field,
 * filename or NULL, bytes, len, err) in order; fn < 0 stops (its *err
 * stands).  Returns the number of parts or -errno. */
typedef int (*http_form_part_fn)(void *data, const char *field, const char *filename, const char *bytes,
                                 size_t len, struct tess_error **err);
int http_form_parts(struct http_req *r, http_form_part_fn fn, void *data, struct tess_error **err);

#endif
