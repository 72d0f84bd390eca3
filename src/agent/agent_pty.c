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
 * thread until the shell ends or the peer closes.
 *
 * A named terminal (?terminal=ID, pty_keep.h) outlives its socket.  Its
 * socket first gets {"type": "terminal", "id": ID, "kept": BOOL} (kept:
 * an existing shell, whose scrollback follows as "out" messages before
 * the live output; false: a new shell), and when the socket ends the
 * terminal stays, detached.  A socket whose terminal another one took
 * over is closed with AGENT_PTY_CLOSE_TAKEN; one whose shell ended with
 * 1000 "the shell ended", as without a name. */
#include "common/compat.h"

#include <poll.h>

#include "common/crypto.h"
#include "common/log.h"
#include "common/ws.h"
#include "agent/agent_pty.h"

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
        pty_view_detach(&t->view);
        if (t->fd >= 0)
                close(t->fd);
        t->fd = -1;
}

/* The master the socket talks to: the named terminal's while held. */
static int master(const struct agent_pty *t)
{
        return t->view.term ? pty_view_fd(&t->view) : t->fd;
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

static void send_out(struct ws *w, const void *p, size_t n)
{
        _cleanup_free_ char *b64 = base64_encode(p, n);
        send_json(w, json_pack("{s:s, s:s}", "type", "out", "data", b64));
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

/* A new shell in place of the old one. */
static void restart(struct agent_pty *t, struct ws *w)
{
        struct tess_error *err = NULL;

        if (!t->view.term)
                agent_pty_close(t);
        if (agent_pty_open(t, &err) < 0) {
                send_error(w, err->msg);
                tess_error_free(err);
                return;
        }
        if (t->view.term) {
                pty_view_replace_fd(&t->view, t->fd);
                t->fd = -1;
        }
}

static int on_message(struct ws *w, int opcode, const uint8_t *msg, size_t len, void *data)
{
        struct agent_pty *t = data;
        struct tess_error *err = NULL;
        json_t *j = opcode == WS_TEXT ? json_loadb((const char *)msg, len, 0, NULL) : NULL;
        const char *type = json_string_value(json_object_get(j, "type"));
        int fd = master(t);

        if (!type) {
                send_error(w, "messages are JSON objects with a type: stdin, resize, ping or restart");
        } else if (streq(type, "stdin")) {
                const char *chars = json_string_value(json_object_get(j, "chars"));
                size_t clen = chars ? strlen(chars) : 0;
                unsigned char *raw = xmalloc(clen / 4 * 3 + 3);
                int n = chars ? base64_decode(chars, clen, raw, clen / 4 * 3 + 3) : -1;
                if (n < 0)
                        send_error(w, "stdin: chars must be base64");
                else if (fd >= 0 && write_all(fd, raw, (size_t)n) < 0)
                        send_error(w, "the terminal is gone");
                free(raw);
        } else if (streq(type, "resize")) {
                json_int_t rows = json_integer_value(json_object_get(j, "rows"));
                json_int_t cols = json_integer_value(json_object_get(j, "cols"));
                if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000) {
                        send_error(w, "resize: rows and cols must be 1-1000");
                } else if (fd >= 0 && runner_pty_resize(fd, (unsigned)rows, (unsigned)cols, &err) < 0) {
                        send_error(w, err->msg);
                        tess_error_free(err);
                } else {
                        t->rows = (unsigned)rows;
                        t->cols = (unsigned)cols;
                }
        } else if (streq(type, "restart")) {
                restart(t, w);
        } else if (!streq(type, "ping")) {
                send_error(w, "unknown message type");
        }
        json_decref(j);
        return 0;
}

static void refuse(struct ws *w, const char *msg)
{
        send_error(w, msg);
        ws_close(w, 1011, "the terminal cannot be attached");
}

/* Attach the socket to its named terminal: a new one (t->fd, or opened
 * here if the kept one ended since the request was answered) or the kept
 * one, whose scrollback is sent first.  false: refused (and closing). */
static bool attach(struct agent_pty *t, struct ws *w)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *replay = NULL;
        size_t len = 0;
        int r;

        for (int tries = 0;; tries++) {
                r = pty_keep_attach(t->keep, t->kernel, t->id, &t->fd, AGENT_PTY_TAKEOVER_MS, &t->view, &replay, &len);
                if (r != -ENOENT || tries > 0)
                        break;
                if (agent_pty_open(t, &err) < 0) {
                        refuse(w, err->msg);
                        tess_error_free(err);
                        return false;
                }
        }
        if (r == -EBUSY) {
                refuse(w, "the terminal is held by another connection that does not let go");
                return false;
        }
        if (r < 0) {
                refuse(w, strerror(-r));
                return false;
        }
        log_debug("kernel %s: terminal '%s' attached (%s, %zu bytes of scrollback)", t->kernel, t->id,
                  t->view.kept ? "kept" : "new", len);
        send_json(w, json_pack("{s:s, s:s, s:b}", "type", "terminal", "id", t->id, "kept", t->view.kept));
        if (t->view.kept && t->size_given && runner_pty_resize(pty_view_fd(&t->view), t->rows, t->cols, &err) < 0)
                err = tess_error_free(err);
        for (size_t off = 0; off < len; off += OUT_CHUNK)
                send_out(w, replay + off, len - off < OUT_CHUNK ? len - off : OUT_CHUNK);
        return true;
}

void agent_pty_run(struct agent_pty *t, int sock, const void *prefix, size_t prefix_len)
{
        struct ws *w = ws_new(sock, true, prefix, prefix_len, on_message, t);
        unsigned char buf[OUT_CHUNK];
        bool closing = false;

        if (!w)
                return;
        if (t->keep && t->id[0] && !attach(t, w))
                closing = true;
        if (!closing)
                ws_pump(w, 0); /* what came with the handshake */
        while (!ws_done(w)) {
                short want = ws_poll_events(w);
                int fd = master(t);
                /* read the terminal only while the socket keeps up */
                bool read_pty = fd >= 0 && !closing && !(want & POLLOUT);
                struct pollfd p[3] = { { .fd = sock, .events = want },
                                       { .fd = read_pty ? fd : -1, .events = POLLIN },
                                       { .fd = closing ? -1 : pty_view_wake_fd(&t->view), .events = POLLIN } };
                if (poll(p, 3, 1000) < 0 && errno != EINTR)
                        break;
                if (p[0].revents && ws_pump(w, p[0].revents) < 0)
                        break;
                if (p[2].revents) {
                        enum pty_view_state s = pty_view_check(&t->view);
                        if (s == PTY_VIEW_TAKEN) {
                                log_debug("kernel %s: terminal '%s' taken over", t->kernel, t->id);
                                ws_close(w, AGENT_PTY_CLOSE_TAKEN, "another connection took this terminal over");
                                closing = true;
                        } else if (s == PTY_VIEW_CLOSED) {
                                ws_close(w, 1000, "the terminal was closed");
                                closing = true;
                        }
                        continue;
                }
                if (p[1].revents & POLLIN) {
                        ssize_t n = read(fd, buf, sizeof(buf));
                        if (n > 0) {
                                pty_view_output(&t->view, buf, (size_t)n);
                                send_out(w, buf, (size_t)n);
                        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                                p[1].revents |= POLLHUP;
                        }
                }
                if ((p[1].revents & (POLLHUP | POLLERR)) && !(p[1].revents & POLLIN) && !closing) {
                        pty_view_end(&t->view);
                        ws_close(w, 1000, "the shell ended"); /* EIO on the master: the shell exited */
                        closing = true;
                }
        }
        pty_view_detach(&t->view); /* a named terminal whose socket ended: kept */
        ws_free(w);
}
