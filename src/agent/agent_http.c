/* agent_http.c - the agent's HTTP server, for its manager only: what the
 * manager relays from a session's owner to a running kernel.
 *
 *   POST /v1/kernels/{id}/execute        {mode, code, runId, options} -> {"result": ...}
 *   POST /v1/kernels/{id}/interrupt      {runId?}
 *   POST /v1/kernels/{id}/restart        every process ends, the session starts
 *                                        over in the same container (runner.h)
 *   PUT  /v1/kernels/{id}/files?path=P[&perm=OCTAL]   body: the file's bytes
 *   GET  /v1/kernels/{id}/files?path=P   the file's bytes
 *   GET  /v1/kernels/{id}/list[?path=P]  {"entries": [...]}
 *   GET  /v1/kernels/{id}/logs           the output so far (text)
 *   GET  /v1/kernels/{id}/pty[?rows=R&cols=C&terminal=NAME]
 *                                        a terminal (WebSocket, agent_pty.h); a named
 *                                        one is kept between sockets (pty_keep.h)
 *   POST /v1/kernels/{id}/commit         {task_id, base, name, tag, labels, exclude}
 *                                        -> 202: a snapshot begins (commit.h)
 *   POST /v1/kernels/{id}/start-service  {name, port, argv, env, waitMs} -> the runner's
 *                                        {name, pid, port, status} once the port listens
 *   POST /v1/kernels/{id}/shutdown-service  {names: [name...]} -> {stopped: [name...]}
 *                                        once they exited; 404 when none ran
 *   GET  /v1/kernels/{id}/tunnel?port=N  Upgrade: tessera-tunnel: raw bytes to a port
 *                                        inside the kernel (agent_tunnel.h)
 *
 * Every request is signed by the manager with the cluster secret
 * (sign_agent_request over the raw target, for "manager:<this agent's
 * id>"), so nobody else on the network reaches the containers through it
 * and a request for one agent is no good at another.  Errors answer
 * {"error": "..."} with a status from the errno (agent_http_status).
 *
 * libmicrohttpd runs one thread per connection: every handler blocks on
 * the kernel's runner, with the runner client's deadlines. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <strings.h>
#include <sys/socket.h>

#include "agent/agent_http.h"
#include "agent/agent_pty.h"
#include "agent/agent_tunnel.h"
#include "agent/commit.h"
#include "agent/container/container.h"
#include "agent/kernel_runtime.h"
#include "agent/runner_client.h"
#include "common/buf.h"
#include "common/crypto.h"
#include "common/env_reserved.h"
#include "common/log.h"
#include "common/netaddr.h"
#include "common/relay.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "common/ws.h"

#define BODY_MAX         (AGENT_HTTP_FILE_MAX + 4096)
#define DOWNLOAD_MAX     AGENT_HTTP_FILE_MAX
#define LOGS_MAX         (1u << 20) /* the end of a live log */
#define EXEC_WAIT_MS_MAX 30000

struct agent_http {
        struct MHD_Daemon *d;
        struct agent_ctx *ctx;
        const char *secret;
        char signer[160]; /* "manager:<agent id>" */
        uint16_t port;
};

/* One request: its raw target (for the signature) and body. */
struct req {
        char *target;
        struct buf body;
        char body_hash[65]; /* what the signature covers */
        bool started, too_large, answered;
        struct tess_error *refused; /* the signature failed: answered once the body is in */
};

struct answer {
        unsigned status;
        const char *type;
        struct buf body;
        struct agent_pty *pty; /* a terminal: answer 101 and relay it */
        char accept[WS_ACCEPT_LEN + 1];
        bool tunnel; /* a tunnel: answer 101 and relay tunnel_fd */
        int tunnel_fd;
};

unsigned agent_http_status(int errnum)
{
        switch (errnum) {
        case EINVAL:
        case ENAMETOOLONG:
        case ELOOP:
        case EISDIR:
        case ENOTDIR:
                return 400;
        case EACCES:
        case EPERM:
                return 403;
        case ENOENT:
                return 404;
        case EEXIST:
                return 409;
        case EFBIG:
                return 413;
        case ECONNREFUSED:
        case ESRCH:
                return 503;
        case ETIMEDOUT:
                return 504;
        default:
                return 500;
        }
}

static void answer_json(struct answer *a, unsigned status, json_t *j)
{
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        a->status = status;
        a->type = "application/json";
        buf_puts(&a->body, text ? text : "{}");
        free(text);
}

static void answer_error(struct answer *a, int errnum, const char *msg)
{
        answer_json(a, agent_http_status(errnum), json_pack("{s:s}", "error", msg));
}

static void answer_err(struct answer *a, struct tess_error *err)
{
        answer_error(a, err->code, err->msg);
        tess_error_free(err);
}

/* The request's signature, from its headers alone (before any body is
 * read); its X-Tessera-Content-SHA256 is checked against the body later. */
static int check_signature(struct agent_http *h, struct MHD_Connection *conn, const char *method, struct req *rq,
                           struct tess_error **err)
{
        const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
        const char *ts_text = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Tessera-Agent-Time");
        const char *hash = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Tessera-Content-SHA256");
        const char *prefix = "TesseraManager signature=";
        char want[SIGN_HEX_MAX];
        char *end;

        if (!auth || strncmp(auth, prefix, strlen(prefix)) != 0 || !ts_text || !hash || strlen(hash) != 64)
                return tess_err(err, EACCES,
                                "requests need 'Authorization: TesseraManager signature=HEX', "
                                "X-Tessera-Agent-Time and X-Tessera-Content-SHA256");
        errno = 0;
        long long ts = strtoll(ts_text, &end, 10), now = now_usec() / USEC_PER_SEC;
        if (errno || *end || end == ts_text || ts < now - SIGN_AGENT_SKEW || ts > now + SIGN_AGENT_SKEW)
                return tess_err(err, EACCES, "X-Tessera-Agent-Time is more than %d s off this agent's clock",
                                SIGN_AGENT_SKEW);
        if (sign_agent_request_hashed(h->secret, method, rq->target, ts, h->signer, hash, want, err) < 0)
                return -EIO;
        if (!sign_equal(auth + strlen(prefix), want))
                return tess_err(err, EACCES, "signature mismatch (is the manager given this cluster's secret?)");
        snprintf(rq->body_hash, sizeof(rq->body_hash), "%s", hash);
        return 0;
}

/* The runner of a running kernel; socket_path is filled in. */
static int kernel_runner(struct agent_http *h, const char *id, char *socket_path, size_t len, struct runner_client *ret,
                         struct tess_error **err)
{
        struct container_config cfg = kernel_runtime_config(h->ctx);
        struct container_state st;

        if (!container_id_valid(id))
                return tess_err(err, EINVAL, "'%s' is not a kernel id", id);
        int r = container_state(&cfg, id, &st, err);
        if (r < 0)
                return r;
        if (st.status != CONTAINER_RUNNING || st.pid <= 0)
                return tess_err(err, ESRCH, "kernel %s is not running", id);
        _cleanup_free_ char *dir = container_dir(&cfg, id);
        snprintf(socket_path, len, "%s/runner/runner.sock", dir);
        *ret = (struct runner_client){ .socket_path = socket_path, .runner_pid = st.pid };
        return 0;
}

static const char *query(struct MHD_Connection *conn, const char *key)
{
        return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

static int body_json(const struct req *rq, json_t **ret, struct tess_error **err)
{
        json_error_t je;

        if (rq->body.len == 0) {
                *ret = json_object();
                return 0;
        }
        *ret = json_loadb(rq->body.data, rq->body.len, 0, &je);
        if (!*ret || !json_is_object(*ret)) {
                json_decref(*ret);
                return tess_err(err, EINVAL, "the body must be a JSON object");
        }
        return 0;
}

static const char *json_str(const json_t *o, const char *key)
{
        return json_string_value(json_object_get(o, key));
}

static void do_execute(const struct runner_client *rc, const struct req *rq, struct answer *a)
{
        struct tess_error *err = NULL;
        json_t *body = NULL, *result = NULL;

        if (body_json(rq, &body, &err) < 0)
                return answer_err(a, err);
        const char *mode = json_str(body, "mode");
        json_int_t wait = json_integer_value(json_object_get(body, "waitMs"));
        if (wait <= 0 || wait > EXEC_WAIT_MS_MAX)
                wait = -1;
        if (runner_execute(rc, mode ? mode : "query", json_str(body, "runId"), json_str(body, "code"),
                           json_object_get(body, "options"), (int)wait, &result, &err) < 0) {
                json_decref(body);
                return answer_err(a, err);
        }
        json_decref(body);
        answer_json(a, 200, json_pack("{s:o}", "result", result));
}

static void do_interrupt(const struct runner_client *rc, const struct req *rq, struct answer *a)
{
        struct tess_error *err = NULL;
        json_t *body = NULL;

        if (body_json(rq, &body, &err) < 0 || runner_interrupt(rc, json_str(body, "runId"), &err) < 0) {
                json_decref(body);
                return answer_err(a, err);
        }
        json_decref(body);
        answer_json(a, 200, json_object());
}

/* Its kept terminals end with the processes behind them. */
static void do_restart(struct agent_http *h, const char *id, const struct runner_client *rc, struct answer *a)
{
        struct tess_error *err = NULL;

        if (h->ctx->terminals)
                pty_keep_drop_kernel(h->ctx->terminals, id);
        if (runner_restart(rc, &err) < 0)
                return answer_err(a, err);
        log_notice("kernel %s: restarted", id);
        answer_json(a, 200, json_object());
}

static void do_upload(const struct runner_client *rc, struct MHD_Connection *conn, const struct req *rq,
                      struct answer *a)
{
        struct tess_error *err = NULL;
        const char *path = query(conn, "path"), *perm_text = query(conn, "perm");
        long perm = -1;
        char *end;

        if (!path || !*path)
                return answer_error(a, EINVAL, "upload: the path is missing");
        if (perm_text) {
                perm = strtol(perm_text, &end, 8);
                if (*end || end == perm_text || perm < 0 || perm > 07777)
                        return answer_error(a, EINVAL, "upload: perm must be octal, 0-7777");
        }
        if (runner_upload_buf(rc, path, rq->body.data ? rq->body.data : "", rq->body.len, (int)perm, &err) < 0)
                return answer_err(a, err);
        answer_json(a, 200, json_pack("{s:I}", "size", (json_int_t)rq->body.len));
}

static void do_download(const struct runner_client *rc, struct MHD_Connection *conn, struct answer *a)
{
        struct tess_error *err = NULL;
        const char *path = query(conn, "path");

        if (!path || !*path)
                return answer_error(a, EINVAL, "download: the path is missing");
        if (runner_download_buf(rc, path, DOWNLOAD_MAX, &a->body, &err) < 0) {
                buf_reset(&a->body);
                return answer_err(a, err);
        }
        a->status = 200;
        a->type = "application/octet-stream";
}

static void do_list(const struct runner_client *rc, struct MHD_Connection *conn, struct answer *a)
{
        struct tess_error *err = NULL;
        json_t *entries = NULL;

        if (runner_list(rc, query(conn, "path"), &entries, &err) < 0)
                return answer_err(a, err);
        answer_json(a, 200, json_pack("{s:o}", "entries", entries));
}

static void do_logs(struct agent_http *h, const char *id, struct answer *a)
{
        if (!container_id_valid(id) || !kernel_runtime_exists(h->ctx, id))
                return answer_error(a, ENOENT, "no such kernel");
        char *text = kernel_runtime_log(h->ctx, id, LOGS_MAX);
        answer_json(a, 200, json_pack("{s:s}", "logs", text ? text : ""));
        free(text);
}

static void do_commit(struct agent_http *h, const char *id, const struct req *rq, struct answer *a)
{
        struct tess_error *err = NULL;
        json_t *body = rq->body.data ? json_loadb(rq->body.data, rq->body.len, 0, NULL) : NULL;

        if (!container_id_valid(id) || !json_is_object(body)) {
                json_decref(body);
                return answer_error(a, EINVAL, "a commit needs a kernel and a JSON object");
        }
        int r = commit_start(h->ctx, id, body, &err);
        json_decref(body);
        if (r < 0)
                return answer_err(a, err);
        answer_json(a, 202, json_pack("{s:s}", "status", "started"));
}

static unsigned dimension(struct MHD_Connection *conn, const char *key, unsigned def)
{
        const char *v = query(conn, key);
        char *end;
        unsigned long n = v ? strtoul(v, &end, 10) : 0;
        return v && !*end && n >= 1 && n <= 1000 ? (unsigned)n : def;
}

/* A terminal; with ?terminal=ID a named one, kept between sockets
 * (pty_keep.h): a new shell is opened here only if the kernel has none of
 * that name, so that the runner's errors still answer the request. */
static void do_pty(struct agent_http *h, const char *kernel, const struct runner_client *rc,
                   struct MHD_Connection *conn, struct answer *a)
{
        const char *upgrade = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Upgrade");
        const char *key = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-WebSocket-Key");
        const char *name = query(conn, "terminal");
        struct tess_error *err = NULL;

        if (!upgrade || strcasecmp(upgrade, "websocket") != 0 || !key)
                return answer_error(a, EINVAL, "a terminal is a WebSocket: Upgrade and Sec-WebSocket-Key are missing");
        if (name && !terminal_id_valid(name))
                return answer_error(a, EINVAL, "terminal: a terminal id is 8-64 letters, digits, '_' or '-'");
        struct agent_pty *t = xcalloc(1, sizeof(*t));
        snprintf(t->socket_path, sizeof(t->socket_path), "%s", rc->socket_path);
        t->runner_pid = rc->runner_pid;
        t->fd = -1;
        t->rows = dimension(conn, "rows", 24);
        t->cols = dimension(conn, "cols", 80);
        t->size_given = query(conn, "rows") && query(conn, "cols");
        if (name && h->ctx->terminals) {
                t->keep = h->ctx->terminals;
                snprintf(t->kernel, sizeof(t->kernel), "%s", kernel);
                snprintf(t->id, sizeof(t->id), "%s", name);
        }
        if ((!t->keep || !pty_keep_has(t->keep, t->kernel, t->id)) && agent_pty_open(t, &err) < 0) {
                free(t);
                return answer_err(a, err);
        }
        ws_accept_key(key, a->accept);
        a->pty = t;
        a->status = 101;
}

#define START_WAIT_MS_MAX 600000

static void do_start_service(const struct runner_client *rc, const struct req *rq, struct answer *a)
{
        struct tess_error *err = NULL;
        json_t *body = NULL, *result = NULL;
        const char **argv = NULL, **env = NULL;

        if (body_json(rq, &body, &err) < 0)
                return answer_err(a, err);
        const json_t *jargv = json_object_get(body, "argv"), *jenv = json_object_get(body, "env");
        json_int_t port = json_integer_value(json_object_get(body, "port"));
        json_int_t wait = json_integer_value(json_object_get(body, "waitMs"));
        bool ok = json_str(body, "name") && json_is_array(jargv) && json_array_size(jargv) > 0 && port >= 0 &&
                  port <= 65535 && (!jenv || json_is_array(jenv));
        if (ok) {
                argv = xcalloc(json_array_size(jargv) + 1, sizeof(char *));
                env = xcalloc(json_array_size(jenv) + 1, sizeof(char *));
                for (size_t i = 0; ok && i < json_array_size(jargv); i++)
                        ok = (argv[i] = json_string_value(json_array_get(jargv, i))) != NULL;
                for (size_t i = 0, n = 0; ok && i < json_array_size(jenv); i++) {
                        const char *kv = json_string_value(json_array_get(jenv, i));
                        ok = kv != NULL;
                        if (ok && env_reserved(kv)) /* the user's, as a session's environment (kernel_runtime.c) */
                                log_warn("start-service %s: the reserved variable %.*s dropped from its environment",
                                         json_str(body, "name"), (int)strcspn(kv, "="), kv);
                        else if (ok)
                                env[n++] = kv;
                }
        }
        if (!ok)
                answer_error(a, EINVAL, "start-service needs {name, argv: [strings], port, env?: [strings]}");
        else if (runner_start_service(rc, json_str(body, "name"), argv, env, (int)port,
                                      wait > 0 && wait <= START_WAIT_MS_MAX ? (int)wait : -1, &result, &err) < 0)
                answer_err(a, err);
        else
                answer_json(a, 200, result);
        free(argv);
        free(env);
        json_decref(body);
}

#define STOP_NAMES_MAX 16

static void do_shutdown_service(const struct runner_client *rc, const struct req *rq, struct answer *a)
{
        struct tess_error *err = NULL;
        json_t *body = NULL;

        if (body_json(rq, &body, &err) < 0)
                return answer_err(a, err);
        const json_t *names = json_object_get(body, "names");
        bool ok = json_is_array(names) && json_array_size(names) > 0 && json_array_size(names) <= STOP_NAMES_MAX;
        for (size_t i = 0; ok && i < json_array_size(names); i++)
                ok = json_is_string(json_array_get(names, i));
        if (!ok) {
                json_decref(body);
                return answer_error(a, EINVAL, "shutdown-service needs {names: [strings]}");
        }
        json_t *stopped = json_array();
        for (size_t i = 0; i < json_array_size(names); i++) {
                const char *name = json_string_value(json_array_get(names, i));
                int r = runner_shutdown_service(rc, name, NULL, &err);
                if (r == -ENOENT) {
                        err = tess_error_free(err);
                        continue;
                }
                if (r < 0) {
                        json_decref(stopped);
                        json_decref(body);
                        return answer_err(a, err);
                }
                json_array_append_new(stopped, json_string(name));
        }
        json_decref(body);
        if (json_array_size(stopped) == 0) {
                json_decref(stopped);
                return answer_error(a, ENOENT, "the app is not running");
        }
        answer_json(a, 200, json_pack("{s:o}", "stopped", stopped));
}

static void do_tunnel(const struct runner_client *rc, struct MHD_Connection *conn, struct answer *a)
{
        const char *upgrade = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Upgrade");
        const char *port_text = query(conn, "port");
        struct tess_error *err = NULL;
        char *end;
        long port = port_text ? strtol(port_text, &end, 10) : 0;

        if (!upgrade || strcasecmp(upgrade, RELAY_TUNNEL_PROTOCOL) != 0)
                return answer_error(a, EINVAL, "a tunnel needs Upgrade: " RELAY_TUNNEL_PROTOCOL);
        if (!port_text || *end || port < 1 || port > 65535)
                return answer_error(a, EINVAL, "a tunnel needs ?port=1-65535");
        int fd = agent_tunnel_connect(rc->runner_pid, (int)port, &err);
        if (fd < 0)
                return answer_err(a, err);
        a->tunnel = true;
        a->tunnel_fd = fd;
        a->status = 101;
}

/* "/v1/kernels/ID/ACTION" -> id, action; false if the path is not that. */
static bool split_path(const char *url, char *id, size_t idlen, const char **action)
{
        const char *prefix = "/v1/kernels/";
        if (strncmp(url, prefix, strlen(prefix)) != 0)
                return false;
        const char *p = url + strlen(prefix), *slash = strchr(p, '/');
        if (!slash || (size_t)(slash - p) >= idlen || slash == p)
                return false;
        memcpy(id, p, (size_t)(slash - p));
        id[slash - p] = '\0';
        *action = slash + 1;
        return true;
}

static void handle(struct agent_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                   struct req *rq, struct answer *a)
{
        struct tess_error *err = NULL;
        char id[CONTAINER_ID_MAX + 1], sock[PATH_MAX];
        struct runner_client rc;
        const char *action;

        char hash[65];

        if (rq->refused) {
                log_warn("agent http: %s %s refused: %s", method, url, rq->refused->msg);
                answer_err(a, rq->refused);
                rq->refused = NULL;
                return;
        }
        if (rq->too_large)
                return answer_error(a, EFBIG, "the body is larger than the agent takes");
        sha256_hex(rq->body.data ? rq->body.data : "", rq->body.len, hash);
        if (!sign_equal(hash, rq->body_hash))
                return answer_error(a, EACCES, "the body does not match X-Tessera-Content-SHA256");
        if (streq(url, "/v1/ping"))
                return answer_json(a, 200, json_pack("{s:s}", "id", h->ctx->conf->id));
        if (!split_path(url, id, sizeof(id), &action))
                return answer_error(a, ENOENT, "no such route");
        if (streq(action, "logs") && streq(method, "GET"))
                return do_logs(h, id, a);
        if (streq(action, "commit") && streq(method, "POST"))
                return do_commit(h, id, rq, a);
        bool known = (streq(action, "execute") && streq(method, "POST")) ||
                     (streq(action, "interrupt") && streq(method, "POST")) ||
                     (streq(action, "restart") && streq(method, "POST")) ||
                     (streq(action, "files") && (streq(method, "PUT") || streq(method, "GET"))) ||
                     (streq(action, "list") && streq(method, "GET")) ||
                     (streq(action, "pty") && streq(method, "GET")) ||
                     (streq(action, "start-service") && streq(method, "POST")) ||
                     (streq(action, "shutdown-service") && streq(method, "POST")) ||
                     (streq(action, "tunnel") && streq(method, "GET"));
        if (!known)
                return answer_error(a, ENOENT, "no such route");
        if (kernel_runner(h, id, sock, sizeof(sock), &rc, &err) < 0)
                return answer_err(a, err);
        if (streq(action, "execute"))
                do_execute(&rc, rq, a);
        else if (streq(action, "interrupt"))
                do_interrupt(&rc, rq, a);
        else if (streq(action, "restart"))
                do_restart(h, id, &rc, a);
        else if (streq(action, "files") && streq(method, "PUT"))
                do_upload(&rc, conn, rq, a);
        else if (streq(action, "files"))
                do_download(&rc, conn, a);
        else if (streq(action, "pty"))
                do_pty(h, id, &rc, conn, a);
        else if (streq(action, "start-service"))
                do_start_service(&rc, rq, a);
        else if (streq(action, "shutdown-service"))
                do_shutdown_service(&rc, rq, a);
        else if (streq(action, "tunnel"))
                do_tunnel(&rc, conn, a);
        else
                do_list(&rc, conn, a);
}

static void *uri_cb(void *cls UNUSED, const char *uri, struct MHD_Connection *conn UNUSED)
{
        struct req *rq = xcalloc(1, sizeof(*rq));
        rq->target = xstrdup(uri);
        rq->body = (struct buf)BUF_INIT;
        return rq;
}

static void completed_cb(void *cls UNUSED, struct MHD_Connection *conn UNUSED, void **con_cls,
                         enum MHD_RequestTerminationCode toe UNUSED)
{
        struct req *rq = *con_cls;
        if (!rq)
                return;
        free(rq->target);
        buf_release(&rq->body);
        tess_error_free(rq->refused);
        free(rq);
        *con_cls = NULL;
}

/* The connection became a WebSocket: relay the terminal in this thread
 * (one per connection), then let libmicrohttpd close the socket. */
static void on_upgraded(void *cls, struct MHD_Connection *conn UNUSED, void *con_cls UNUSED, const char *extra_in,
                        size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
        struct agent_pty *t = cls;

        agent_pty_run(t, sock, extra_in, extra_in_size);
        agent_pty_close(t);
        free(t);
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* The connection became a tunnel: relay it in this thread, then close. */
static void on_tunnel(void *cls, struct MHD_Connection *conn UNUSED, void *con_cls UNUSED, const char *extra_in,
                      size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
        int *fd = cls;

        agent_tunnel_run(*fd, sock, extra_in, extra_in_size);
        free(fd);
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

static enum MHD_Result answer_tunnel(struct MHD_Connection *conn, struct answer *a)
{
        int *fd = xmalloc(sizeof(*fd));
        *fd = a->tunnel_fd;
        struct MHD_Response *resp = MHD_create_response_for_upgrade(on_tunnel, fd);

        if (!resp) {
                close(*fd);
                free(fd);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Upgrade", RELAY_TUNNEL_PROTOCOL);
        MHD_add_response_header(resp, "Connection", "Upgrade");
        enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result answer_upgrade(struct MHD_Connection *conn, struct answer *a)
{
        struct MHD_Response *resp = MHD_create_response_for_upgrade(on_upgraded, a->pty);

        if (!resp) {
                agent_pty_close(a->pty);
                free(a->pty);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Upgrade", "websocket");
        MHD_add_response_header(resp, "Connection", "Upgrade");
        MHD_add_response_header(resp, "Sec-WebSocket-Accept", a->accept);
        enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version UNUSED, const char *upload_data, size_t *upload_size,
                                 void **con_cls)
{
        struct agent_http *h = cls;
        struct req *rq = *con_cls;

        if (rq->answered) { /* refused early: what still comes is dropped */
                *upload_size = 0;
                return MHD_YES;
        }
        if (!rq->started) { /* the headers: refuse at once, or read the body */
                rq->started = true;
                const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
                if (cl && strtoull(cl, NULL, 10) > BODY_MAX)
                        rq->too_large = true;
                check_signature(h, conn, method, rq, &rq->refused);
                if (!rq->refused && !rq->too_large)
                        return MHD_YES;
        } else if (*upload_size > 0) {
                if (rq->body.len + *upload_size > BODY_MAX)
                        rq->too_large = true;
                else
                        buf_append(&rq->body, upload_data, *upload_size);
                *upload_size = 0;
                return MHD_YES;
        }
        struct answer a = { .body = BUF_INIT };
        rq->answered = true;
        handle(h, conn, url, method, rq, &a);
        if (a.pty) {
                buf_release(&a.body);
                return answer_upgrade(conn, &a);
        }
        if (a.tunnel) {
                buf_release(&a.body);
                return answer_tunnel(conn, &a);
        }
        struct MHD_Response *resp;
        if (a.body.len > 0) {
                resp = MHD_create_response_from_buffer(a.body.len, a.body.data, MHD_RESPMEM_MUST_FREE);
                a.body = (struct buf)BUF_INIT; /* MHD frees it */
        } else {
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        }
        buf_release(&a.body);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, "Content-Type", a.type ? a.type : "application/json");
        enum MHD_Result ret = MHD_queue_response(conn, a.status ? a.status : 500, resp);
        MHD_destroy_response(resp);
        return ret;
}

int agent_http_start(struct agent_ctx *ctx, const char *secret, struct agent_http **ret, struct tess_error **err)
{
        struct sockaddr_in sa;
        int r = netaddr_parse_listen(ctx->conf->listen, &sa, err);

        if (r < 0)
                return tess_err_wrap(err, "listen");
        struct agent_http *h = xcalloc(1, sizeof(*h));
        h->ctx = ctx;
        h->secret = secret;
        snprintf(h->signer, sizeof(h->signer), "manager:%s", ctx->conf->id);
        h->d = MHD_start_daemon(
                MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE,
                0, NULL, NULL, access_cb, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_URI_LOG_CALLBACK,
                uri_cb, h, MHD_OPTION_NOTIFY_COMPLETED, completed_cb, h, MHD_OPTION_CONNECTION_LIMIT, 256,
                MHD_OPTION_CONNECTION_TIMEOUT, 300, MHD_OPTION_THREAD_STACK_SIZE, (size_t)256 << 10,
                MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, MHD_OPTION_END);
        if (!h->d) {
                free(h);
                return tess_err(err, EADDRINUSE, "cannot listen on '%s'", ctx->conf->listen);
        }
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
        h->port = di ? di->port : ntohs(sa.sin_port);
        *ret = h;
        return 0;
}

struct agent_http *agent_http_stop(struct agent_http *h)
{
        if (h) {
                MHD_stop_daemon(h->d);
                free(h);
        }
        return NULL;
}

uint16_t agent_http_port(const struct agent_http *h)
{
        return h->port;
}

/* The address of this host that routes to the manager: where the manager
 * can reach us (a UDP "connect" sends nothing). */
static int local_ip_towards(const char *manager_url, char *ip, size_t len)
{
        char host[256];
        const char *p = strstr(manager_url, "://");
        p = p ? p + 3 : manager_url;
        size_t n = strcspn(p, ":/");
        if (n == 0 || n >= sizeof(host))
                return -EINVAL;
        memcpy(host, p, n);
        host[n] = '\0';
        struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM }, *ai = NULL;
        if (getaddrinfo(host, "9", &hints, &ai) != 0 || !ai)
                return -EHOSTUNREACH;
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -EHOSTUNREACH;
        struct sockaddr_in me;
        socklen_t melen = sizeof(me);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)&me, &melen) == 0 &&
            inet_ntop(AF_INET, &me.sin_addr, ip, (socklen_t)len))
                r = 0;
        if (fd >= 0)
                close(fd);
        freeaddrinfo(ai);
        return r;
}

char *agent_http_address(const struct agent_http *h, const struct agent_conf *conf)
{
        struct sockaddr_in sa;
        char ip[INET_ADDRSTRLEN];

        if (conf->address && *conf->address)
                return xstrdup(conf->address);
        if (netaddr_parse_listen(conf->listen, &sa, NULL) == 0 && sa.sin_addr.s_addr != htonl(INADDR_ANY) &&
            inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip)))
                return xasprintf("%s:%u", ip, h->port);
        if (local_ip_towards(conf->manager, ip, sizeof(ip)) == 0)
                return xasprintf("%s:%u", ip, h->port);
        return xasprintf("127.0.0.1:%u", h->port);
}
