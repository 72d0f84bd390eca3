/* agent_socket.c - see agent_socket.h. */
#include "common/compat.h"

#include <jansson.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/crypto.h"
#include "common/http_head.h"
#include "common/netaddr.h"
#include "common/relay.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "common/ws.h"
#include "manager/agent_link/agent_socket.h"

/* The agent's refusal (status and {"error": ...}) as an errno. */
static int refused(const struct http_head *h, const char *body, size_t len, struct tess_error **err)
{
        json_t *j = json_loadb(body, len, 0, NULL);
        const char *msg = json_string_value(json_object_get(j, "error"));
        int code = h->status == 404                       ? ENOENT
                   : h->status == 401 || h->status == 403 ? EACCES
                   : h->status == 503                     ? ECONNREFUSED
                   : h->status == 504                     ? ETIMEDOUT
                                                          : EIO;
        int r = tess_err(err, code, "%s", msg ? msg : "the agent refused the tunnel");
        json_decref(j);
        return r;
}

/* GET target with Upgrade: tessera-tunnel; its 101. */
static int tunnel_handshake(int fd, const char *host, const char *target, const char *const *headers,
                            struct buf *leftover, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf req = BUF_INIT, in = BUF_INIT;
        struct http_head h;
        int r;

        buf_printf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: " RELAY_TUNNEL_PROTOCOL "\r\nConnection: Upgrade\r\n",
                   target, host);
        for (; *headers; headers++)
                buf_printf(&req, "%s\r\n", *headers);
        buf_puts(&req, "\r\n");
        r = relay_send_all(fd, req.data, req.len, err);
        if (r < 0)
                return r;
        int head_len = http_head_read(fd, AGENT_SOCKET_TIMEOUT_MS, &in, err);
        if (head_len < 0)
                return head_len;
        r = http_head_parse(in.data, (size_t)head_len, &h, err);
        if (r < 0)
                return r;
        if (h.status != 101) {
                /* the refusal's JSON body is small: what came with the head, or within a second */
                const struct str *cl = http_head_get(&h, "Content-Length");
                size_t want = cl ? strtoul(cl->p, NULL, 10) : 0;
                for (int64_t end = monotonic_usec() + USEC_PER_SEC;
                     want <= 4096 && in.len - (size_t)head_len < want && monotonic_usec() < end;) {
                        struct pollfd p = { .fd = fd, .events = POLLIN };
                        char chunk[4096];
                        ssize_t n = poll(&p, 1, 100) == 1 ? recv(fd, chunk, sizeof(chunk), 0) : 0;
                        if (n < 0 && errno != EINTR && errno != EAGAIN)
                                break;
                        if (n > 0)
                                buf_append(&in, chunk, (size_t)n);
                        if (n == 0 && p.revents)
                                break;
                }
                return refused(&h, in.data + head_len, in.len - (size_t)head_len, err);
        }
        buf_append(leftover, in.data + head_len, in.len - (size_t)head_len);
        return 0;
}

int agent_socket_open(const struct agent_endpoint *e, const char *target, enum agent_socket_kind kind,
                      struct buf *leftover, struct tess_error **err)
{
        _cleanup_free_ char *signer = xasprintf("manager:%s", e->agent_id);
        char sig[SIGN_HEX_MAX], hash[65];
        int64_t ts = now_usec() / USEC_PER_SEC;
        int r;

        sha256_hex("", 0, hash);
        r = sign_agent_request_hashed(e->secret, "GET", target, ts, signer, hash, sig, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *auth = xasprintf("Authorization: TesseraManager signature=%s", sig);
        _cleanup_free_ char *tsh = xasprintf("X-Tessera-Agent-Time: %lld", (long long)ts);
        _cleanup_free_ char *hashh = xasprintf("X-Tessera-Content-SHA256: %s", hash);
        const char *headers[] = { auth, tsh, hashh, NULL };
        int fd = netaddr_connect(e->address, AGENT_SOCKET_TIMEOUT_MS, err);
        if (fd < 0) { /* whatever the cause: not to be mistaken for the agent's own refusals */
                (*err)->code = EHOSTUNREACH;
                return tess_err_wrap(err, "agent %s is unreachable", e->agent_id);
        }
        if (kind == AGENT_SOCKET_WEBSOCKET)
                r = ws_client_handshake(fd, e->address, target, headers, AGENT_SOCKET_TIMEOUT_MS, leftover, err);
        else
                r = tunnel_handshake(fd, e->address, target, headers, leftover, err);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}
