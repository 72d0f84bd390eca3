/* api_stream_execute.c - GET /stream/session/{name}/execute: code run in
 * a running session over a WebSocket, in Backend.AI's streamed-execution
 * protocol (what `backend.ai run` speaks):
 *
 *   client: {"code": C, "mode": "query"|"batch", "options": {...}}   (first)
 *   server: {"status", "console", "exitCode", "options", "files"}    (each round)
 *   client: the input as a plain text frame                  (after "waiting-input")
 *
 * Each round is one execute call to the agent of the session's main
 * kernel (POST /v1/kernels/ID/execute, as POST /session/{name} makes),
 * with a run id the manager chose: "continued" goes on with mode
 * continue, "waiting-input" waits for the client's next text frame and
 * sends it with mode input, "finished" ends the socket (1000).  A round
 * that fails is answered {"status": "error", "msg", "console": [["stderr",
 * msg]]} and closes the
 * socket (1008 for what the client sent, 1011 when the agent failed);
 * so does revoked access (1008).  Every frame from the client is the
 * owner's activity. */
#include "common/compat.h"

#include <poll.h>

#include "common/crypto.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/ws.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/stream_ws.h"

#define EXEC_ROUND_TIMEOUT_S 60    /* the runner answers within its wait (at most 30 s) */
#define FIRST_MESSAGE_MS     30000 /* the client's request comes right after the upgrade */
#define INBOX_MAX            16    /* frames read ahead of the run (more are an error) */
#define CLOSE_GRACE_MS       2000

struct exec_stream {
        struct stream_ws *s;
        json_t *inbox; /* text frames not read yet (strings) */
        bool flooded;  /* more than INBOX_MAX arrived ahead */
        bool binary;   /* a binary frame, or text that is not UTF-8, arrived */
};

static int on_frame(struct ws *w UNUSED, int opcode, const uint8_t *msg, size_t len, void *data)
{
        struct exec_stream *x = data;
        stream_ws_touch(x->s);
        if (opcode != WS_TEXT) {
                x->binary = true;
                return 0;
        }
        json_t *text = json_stringn((const char *)msg, len);
        if (!text) {
                x->binary = true;
                return 0;
        }
        if (json_array_size(x->inbox) >= INBOX_MAX)
                x->flooded = true;
        json_array_append_new(x->inbox, text);
        return 0;
}

/* Pump the client's socket for up to wait_ms (-1: until something
 * happens); false when it is done or access was revoked. */
static bool pump(struct exec_stream *x, struct ws *w, int wait_ms)
{
        struct pollfd p = { .fd = ws_fd(w), .events = ws_poll_events(w) };
        if (poll(&p, 1, wait_ms) > 0)
                ws_pump(w, p.revents);
        return !ws_done(w) && !stream_ws_revoked(x->s);
}

/* The next text frame (caller frees), or NULL when the client left, access
 * was revoked, sent a binary frame, or none came within timeout_ms (-1: no
 * limit). */
static char *next_frame(struct exec_stream *x, struct ws *w, int timeout_ms)
{
        int64_t until = timeout_ms < 0 ? INT64_MAX : monotonic_usec() + (int64_t)timeout_ms * USEC_PER_MSEC;
        while (json_array_size(x->inbox) == 0) {
                if (x->binary || !pump(x, w, 500) || monotonic_usec() > until)
                        return NULL;
        }
        char *text = xstrdup(json_string_value(json_array_get(x->inbox, 0)));
        json_array_remove(x->inbox, 0);
        return text;
}

/* Send j now: queued frames go out before anything else is queued (a
 * close frame would overtake them: control frames go first). */
static void send_json(struct ws *w, json_t *j)
{
        char *text = json_dumps(j, JSON_COMPACT);
        ws_send(w, WS_TEXT, text, strlen(text));
        free(text);
        json_decref(j);
        int64_t until = monotonic_usec() + CLOSE_GRACE_MS * USEC_PER_MSEC;
        while (!ws_done(w) && (ws_poll_events(w) & POLLOUT) && monotonic_usec() < until) {
                struct pollfd p = { .fd = ws_fd(w), .events = POLLOUT };
                if (poll(&p, 1, 100) > 0)
                        ws_pump(w, p.revents & ~POLLIN);
        }
}

/* {"status": "error", "msg"} and the close code. */
static void fail(struct ws *w, uint16_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct ws *w, uint16_t code, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* the message also as a console record: Backend.AI's CLI prints those */
        send_json(w,
                  json_pack("{s:s, s:s, s:[[s, s+]]}", "status", "error", "msg", msg, "console", "stderr", msg, "\n"));
        ws_close(w, code, code == 1011 ? "execution failed" : "bad request");
}

/* The first frame: {code, mode, options}; NULL after answering a bad one. */
static json_t *read_request(struct exec_stream *x, struct ws *w)
{
        _cleanup_free_ char *text = next_frame(x, w, FIRST_MESSAGE_MS);
        if (!text) {
                if (x->binary)
                        fail(w, 1008, "text frames (UTF-8) only");
                else if (!ws_done(w) && !stream_ws_revoked(x->s))
                        fail(w, 1008, "no request: send {\"code\", \"mode\", \"options\"} first");
                return NULL;
        }
        json_t *rq = json_loads(text, 0, NULL);
        const char *mode = json_string_value(json_object_get(rq, "mode"));
        json_t *code = json_object_get(rq, "code"), *opts = json_object_get(rq, "options");
        const char *why = !json_is_object(rq)                                      ? "the request is not a JSON object"
                          : code && !json_is_string(code) && !json_is_null(code)   ? "code: must be a string"
                          : mode && !streq(mode, "query") && !streq(mode, "batch") ? "mode: must be query or batch"
                          : opts && !json_is_object(opts) && !json_is_null(opts)   ? "options: must be an object"
                                                                                   : NULL;
        if (why) {
                fail(w, 1008, "%s", why);
                json_decref(rq);
                return NULL;
        }
        return rq;
}

/* One round at the agent: its result object (caller frees), or NULL after
 * failing the socket. */
static json_t *round_at_agent(struct stream_ws *s, struct ws *w, const char *mode, const char *code, const char *run_id,
                              json_t *opts)
{
        struct agent_call call = { .agent_id = s->t.agent, .address = s->t.address, .answer = BUF_INIT };
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/execute", s->t.kernel);
        json_t *fwd = json_pack("{s:s, s:s, s:s, s:O}", "mode", mode, "code", code, "runId", run_id, "options", opts);
        _cleanup_free_ char *body = json_dumps(fwd, JSON_COMPACT);
        json_t *result = NULL;

        json_decref(fwd);
        snprintf(call.secret, sizeof(call.secret), "%s", s->secret);
        if (agent_call_request(&call, "POST", target, body, strlen(body), "application/json", EXEC_ROUND_TIMEOUT_S) <
            0) {
                fail(w, call.status >= 400 && call.status < 500 ? 1008 : 1011, "%s",
                     call.err ? call.err->msg : "the agent failed");
        } else {
                json_t *answer = json_loadb(call.answer.data, call.answer.len, 0, NULL);
                result = json_incref(json_object_get(answer, "result"));
                json_decref(answer);
                if (!json_is_string(json_object_get(result, "status"))) {
                        fail(w, 1011, "agent %s answered an execution without a status", s->t.agent);
                        json_decref(result);
                        result = NULL;
                }
        }
        tess_error_free(call.err);
        buf_release(&call.answer);
        return result;
}

static void run_rounds(struct exec_stream *x, struct ws *w)
{
        json_t *rq = read_request(x, w);
        if (!rq)
                return;
        char run_id[17];
        random_string(run_id, 16, "0123456789abcdef");
        const char *first_mode = json_string_value(json_object_get(rq, "mode"));
        _cleanup_free_ char *code = xstrdup(json_string_value(json_object_get(rq, "code")) ?: "");
        _cleanup_free_ char *mode = xstrdup(first_mode ? first_mode : "query");
        json_t *opts = json_is_object(json_object_get(rq, "options")) ? json_incref(json_object_get(rq, "options"))
                                                                      : json_object();
        json_decref(rq);
        for (;;) {
                if (x->binary || x->flooded) {
                        fail(w, 1008, "%s",
                             x->binary ? "text frames (UTF-8) only" : "too many frames ahead of the run");
                        break;
                }
                json_t *result = round_at_agent(x->s, w, mode, code, run_id, opts);
                if (!result)
                        break;
                const char *status = json_string_value(json_object_get(result, "status"));
                json_t *frame = json_pack(
                        "{s:s, s:O?, s:O?, s:O?, s:O?}", "status", status, "console",
                        json_object_get(result, "console"), "exitCode", json_object_get(result, "exitCode"), "options",
                        json_object_get(result, "options"), "files", json_object_get(result, "files"));
                bool finished = streq(status, "finished"), input = streq(status, "waiting-input");
                json_decref(result);
                send_json(w, frame);
                if (finished) {
                        ws_close(w, 1000, NULL);
                        break;
                }
                free(code);
                free(mode);
                if (input) {
                        code = next_frame(x, w, -1);
                        mode = xstrdup("input");
                        if (!code && x->binary) {
                                fail(w, 1008, "text frames (UTF-8) only");
                                break;
                        }
                } else { /* continued, build-finished, clean-finished */
                        code = xstrdup("");
                        mode = xstrdup("continue");
                }
                json_decref(opts);
                opts = json_object();
                if (!code || !pump(x, w, 0))
                        break; /* the client left or access was revoked */
        }
        json_decref(opts);
}

static void serve(struct stream_ws *s)
{
        struct exec_stream x = { .s = s, .inbox = json_array() };
        struct ws *w = ws_new(s->fd, true, s->extra.data, s->extra.len, on_frame, &x);

        if (w) {
                run_rounds(&x, w);
                if (stream_ws_revoked(s))
                        ws_close(w, 1008, "access revoked");
                else if (!ws_done(w))
                        ws_close(w, 1000, NULL);
                int64_t until = monotonic_usec() + CLOSE_GRACE_MS * USEC_PER_MSEC;
                while (!ws_done(w) && monotonic_usec() < until) {
                        struct pollfd p = { .fd = s->fd, .events = ws_poll_events(w) };
                        if (poll(&p, 1, 100) > 0)
                                ws_pump(w, p.revents);
                }
        }
        ws_free(w);
        json_decref(x.inbox);
}

void api_stream_execute(struct api_ctx *c)
{
        stream_ws_accept(c, "streamed execution", serve, NULL, NULL);
}
