/* ws.c - see ws.h.  wslay does the framing (masking, fragments, control
 * frames, the closing handshake); this file feeds it a socket. */
#include "common/compat.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <wslay/wslay.h>

#include "common/crypto.h"
#include "common/http_head.h"
#include "common/timeutil.h"
#include "common/ws.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

struct ws {
        wslay_event_context_ptr ctx;
        int fd;
        struct buf prefix; /* read before the connection was handed over */
        size_t prefix_off;
        ws_message_fn fn;
        void *data;
        bool failed;
        uint16_t close_code; /* the peer's close frame: 0 before one came */
        char close_reason[124];
};

static ssize_t on_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags UNUSED, void *user)
{
        struct ws *w = user;

        if (w->prefix_off < w->prefix.len) {
                size_t n = w->prefix.len - w->prefix_off;
                if (n > len)
                        n = len;
                memcpy(buf, w->prefix.data + w->prefix_off, n);
                w->prefix_off += n;
                return (ssize_t)n;
        }
        ssize_t n = recv(w->fd, buf, len, 0);
        if (n > 0)
                return n;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        else
                wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE); /* EOF or a reset */
        return -1;
}

static ssize_t on_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags UNUSED, void *user)
{
        struct ws *w = user;
        ssize_t n = send(w->fd, data, len, MSG_NOSIGNAL);

        if (n >= 0)
                return n;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        else
                wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
}

static int on_genmask(wslay_event_context_ptr ctx UNUSED, uint8_t *buf, size_t len, void *user UNUSED)
{
        return random_bytes(buf, len, NULL) < 0 ? -1 : 0;
}

static void on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
        struct ws *w = user;

        if (arg->opcode == WSLAY_CONNECTION_CLOSE) { /* wslay answers it; we note why */
                size_t n = arg->msg_length > 2 ? arg->msg_length - 2 : 0;
                if (n >= sizeof(w->close_reason))
                        n = sizeof(w->close_reason) - 1;
                w->close_code = arg->status_code ? arg->status_code : WSLAY_CODE_NO_STATUS_RCVD;
                if (n)
                        memcpy(w->close_reason, arg->msg + 2, n);
                w->close_reason[n] = '\0';
                return;
        }
        if (arg->opcode != WSLAY_TEXT_FRAME && arg->opcode != WSLAY_BINARY_FRAME)
                return; /* ping and pong are wslay's */
        if (w->fn(w, arg->opcode, arg->msg, arg->msg_length, w->data) < 0) {
                w->failed = true;
                wslay_event_queue_close(ctx, 1011, NULL, 0);
        }
}

struct ws *ws_new(int fd, bool server, const void *prefix, size_t prefix_len, ws_message_fn fn, void *data)
{
        const struct wslay_event_callbacks cb = {
                .recv_callback = on_recv,
                .send_callback = on_send,
                .genmask_callback = on_genmask,
                .on_msg_recv_callback = on_msg,
        };
        struct ws *w = xcalloc(1, sizeof(*w));
        int r;

        w->fd = fd;
        w->fn = fn;
        w->data = data;
        w->prefix = (struct buf)BUF_INIT;
        if (prefix_len)
                buf_append(&w->prefix, prefix, prefix_len);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        r = server ? wslay_event_context_server_init(&w->ctx, &cb, w)
                   : wslay_event_context_client_init(&w->ctx, &cb, w);
        if (r != 0) {
                buf_release(&w->prefix);
                free(w);
                return NULL;
        }
        wslay_event_config_set_max_recv_msg_length(w->ctx, WS_MESSAGE_MAX);
        return w;
}

void ws_free(struct ws *w)
{
        if (!w)
                return;
        wslay_event_context_free(w->ctx);
        buf_release(&w->prefix);
        free(w);
}

int ws_send(struct ws *w, int opcode, const void *msg, size_t len)
{
        struct wslay_event_msg m = { .opcode = (uint8_t)opcode, .msg = msg, .msg_length = len };
        return wslay_event_queue_msg(w->ctx, &m) == 0 ? 0 : -EPIPE;
}

void ws_close(struct ws *w, uint16_t code, const char *reason)
{
        wslay_event_queue_close(w->ctx, code, (const uint8_t *)reason, reason ? strlen(reason) : 0);
}

uint16_t ws_close_received(const struct ws *w, const char **ret_reason)
{
        if (ret_reason)
                *ret_reason = w->close_reason;
        return w->close_code;
}

short ws_poll_events(struct ws *w)
{
        short ev = 0;
        if (w->failed)
                return 0;
        if (wslay_event_want_read(w->ctx))
                ev |= POLLIN;
        if (wslay_event_want_write(w->ctx))
                ev |= POLLOUT;
        return ev;
}

int ws_pump(struct ws *w, short revents)
{
        if ((revents & (POLLIN | POLLHUP | POLLERR)) || w->prefix_off < w->prefix.len) {
                if (wslay_event_recv(w->ctx) != 0)
                        w->failed = true;
        }
        if (!w->failed && (revents & POLLOUT) && wslay_event_send(w->ctx) != 0)
                w->failed = true;
        return w->failed ? -EPIPE : 0;
}

bool ws_done(struct ws *w)
{
        return w->failed || (!wslay_event_want_read(w->ctx) && !wslay_event_want_write(w->ctx));
}

int ws_fd(const struct ws *w)
{
        return w->fd;
}

void ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
        unsigned char digest[SHA_DIGEST_LENGTH];
        _cleanup_free_ char *text = xasprintf("%s%s", key, WS_GUID);

        SHA1((const unsigned char *)text, strlen(text), digest);
        _cleanup_free_ char *b64 = base64_encode(digest, SHA_DIGEST_LENGTH);
        snprintf(out, WS_ACCEPT_LEN + 1, "%s", b64);
}

void ws_client_key(char out[25])
{
        unsigned char raw[16] = { 0 };
        random_bytes(raw, sizeof(raw), NULL);
        _cleanup_free_ char *b64 = base64_encode(raw, sizeof(raw));
        snprintf(out, 25, "%s", b64);
}

static int check_answer(const struct buf *in, size_t head_len, const char *want, struct tess_error **err)
{
        struct http_head h;

        if (http_head_parse(in->data, head_len, &h, err) < 0)
                return tess_err_wrap(err, "the WebSocket handshake answer");
        if (h.status != 101)
                return tess_err(err, EPROTO, "%.*s: %.200s", (int)strcspn(in->data, "\r"), in->data,
                                in->data + head_len);
        const struct str *accept = http_head_get(&h, "Sec-WebSocket-Accept");
        if (!accept || accept->len != strlen(want) || memcmp(accept->p, want, accept->len) != 0)
                return tess_err(err, EPROTO, "the WebSocket handshake answer has a wrong Sec-WebSocket-Accept");
        return 0;
}

int ws_client_handshake(int fd, const char *host, const char *target, const char *const *headers, int timeout_ms,
                        struct buf *leftover, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf req = BUF_INIT;
        _cleanup_(buf_release) struct buf in = BUF_INIT;
        char key[25], want[WS_ACCEPT_LEN + 1];

        ws_client_key(key);
        ws_accept_key(key, want);
        buf_printf(&req,
                   "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n",
                   target, host, key);
        for (; headers && *headers; headers++)
                buf_printf(&req, "%s\r\n", *headers);
        buf_puts(&req, "\r\n");
        for (size_t off = 0; off < req.len;) {
                ssize_t n = send(fd, req.data + off, req.len - off, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return tess_err(err, errno, "sending the WebSocket handshake: %s", strerror(errno));
                off += (size_t)n;
        }
        int head_len = http_head_read(fd, timeout_ms, &in, err);
        if (head_len < 0)
                return tess_err_wrap(err, "WebSocket handshake");
        int r = check_answer(&in, (size_t)head_len, want, err);
        if (r >= 0)
                buf_append(leftover, in.data + head_len, in.len - (size_t)head_len);
        return r;
}
