/* agent_pty.c - a terminal in a kernel, over a WebSocket, in Backend.AI's
 * terminal protocol (text messages of JSON):
 *
 *   in   {"type": "stdin", "chars": BASE64}   keystrokes
 *        {"type": "resize", "rows": R, "cols": C}
 *        {"type": "ping"}                     (keeps the session from the idle timeout: the manager counts it)
 *        {"type": "restart"}                  a new shell in place of the old one
 *   out  {"type": "out", "data": BASE64}      what the terminal shows
 *        {"type": "error", "data": MESSAGE}
 *
 * The runner opens the terminal (a shell as the session's user) and hands
 * its master over; this relays between it and the socket in the calling
 * thread until the shell ends or the peer closes. */
#include "../common/compat.h"

#include <poll.h>

#include "../common/crypto.h"
#include "../common/log.h"
#include "../common/ws.h"
#include "agent_pty.h"

#define OUT_CHUNK 16384

int agent_pty_open(struct agent_pty *t, struct tess_error **err)
{
        struct runner_client rc = { .socket_path = t->socket_path, .runner_pid = t->runner_pid };
        struct runner_pty_opts o = { .rows = t->rows, .cols = t->cols };

        t->fd = -1;
        return runner_open_pty(&rc, &o, &t->fd, NULL, err);
}

void agent_pty_close(struct agent_pty *t)
{
        if (t->fd >= 0)
                close(t->fd);
        t->fd = -1;
}

static void send_json(struct ws *w, json_t *j)
{
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (text)
                ws_send(w, WS_TEXT, text, strlen(text));
        free(text);
}

static void send_error(struct ws *w, const char *msg)
{
        send_json(w, json_pack("{s:s, s:s}", "type", "error", "data", msg));
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
                        struct pollfd pf = { .fd = fd, .events = POLLOUT };
                        poll(&pf, 1, 100);
                        continue;
                }
                if (w < 0)
                        return -errno;
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

static int on_message(struct ws *w, int opcode, const uint8_t *msg, size_t len, void *data)
{
        struct agent_pty *t = data;
        struct tess_error *err = NULL;
        json_t *j = opcode == WS_TEXT ? json_loadb((const char *)msg, len, 0, NULL) : NULL;
        const char *type = json_string_value(json_object_get(j, "type"));

        if (!type) {
                send_error(w, "messages are JSON objects with a type: stdin, resize, ping or restart");
        } else if (streq(type, "stdin")) {
                const char *chars = json_string_value(json_object_get(j, "chars"));
                size_t clen = chars ? strlen(chars) : 0;
                unsigned char *raw = xmalloc(clen / 4 * 3 + 3);
                int n = chars ? base64_decode(chars, clen, raw, clen / 4 * 3 + 3) : -1;
                if (n < 0)
                        send_error(w, "stdin: chars must be base64");
                else if (t->fd >= 0 && write_all(t->fd, raw, (size_t)n) < 0)
                        send_error(w, "the terminal is gone");
                free(raw);
        } else if (streq(type, "resize")) {
                json_int_t rows = json_integer_value(json_object_get(j, "rows"));
                json_int_t cols = json_integer_value(json_object_get(j, "cols"));
                if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000) {
                        send_error(w, "resize: rows and cols must be 1-1000");
                } else if (t->fd >= 0 && runner_pty_resize(t->fd, (unsigned)rows, (unsigned)cols, &err) < 0) {
                        send_error(w, err->msg);
                        tess_error_free(err);
                } else {
                        t->rows = (unsigned)rows;
                        t->cols = (unsigned)cols;
                }
        } else if (streq(type, "restart")) {
                agent_pty_close(t);
                if (agent_pty_open(t, &err) < 0) {
                        send_error(w, err->msg);
                        tess_error_free(err);
                }
        } else if (!streq(type, "ping")) {
                send_error(w, "unknown message type");
        }
        json_decref(j);
        return 0;
}

void agent_pty_run(struct agent_pty *t, int sock, const void *prefix, size_t prefix_len)
{
        struct ws *w = ws_new(sock, true, prefix, prefix_len, on_message, t);
        unsigned char buf[OUT_CHUNK];
        bool closing = false;

        if (!w)
                return;
        while (!ws_done(w)) {
                short want = ws_poll_events(w);
                /* read the terminal only while the socket keeps up */
                bool read_pty = t->fd >= 0 && !closing && !(want & POLLOUT);
                struct pollfd p[2] = { { .fd = sock, .events = want },
                                       { .fd = read_pty ? t->fd : -1, .events = POLLIN } };
                if (poll(p, 2, 1000) < 0 && errno != EINTR)
                        break;
                if (p[0].revents && ws_pump(w, p[0].revents) < 0)
                        break;
                if (p[1].revents & POLLIN) {
                        ssize_t n = read(t->fd, buf, sizeof(buf));
                        if (n > 0) {
                                _cleanup_free_ char *b64 = base64_encode(buf, (size_t)n);
                                send_json(w, json_pack("{s:s, s:s}", "type", "out", "data", b64));
                        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                                p[1].revents |= POLLHUP;
                        }
                }
                if ((p[1].revents & (POLLHUP | POLLERR)) && !(p[1].revents & POLLIN) && !closing) {
                        ws_close(w, 1000, "the shell ended"); /* EIO on the master: the shell exited */
                        closing = true;
                }
        }
        ws_free(w);
}
