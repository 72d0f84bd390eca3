/* db_listen.c - see db_listen.h.
 *
 * States: WAITING (no connection; a timer starts the next try),
 * CONNECTING (PQconnectPoll, with a deadline), LISTENING (LISTEN sent,
 * its answer awaited) and UP (reading notifications). */
#include "common/compat.h"

#include <libpq-fe.h>
#include <sys/epoll.h>

#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/db/db_listen.h"

#define RETRY_FIRST_USEC      (200 * 1000)
#define RETRY_MAX_USEC        (5 * USEC_PER_SEC)
#define CONNECT_DEADLINE_USEC (10 * USEC_PER_SEC)

enum phase {
        PHASE_WAITING,
        PHASE_CONNECTING,
        PHASE_LISTENING,
        PHASE_UP,
};

struct db_listen {
        struct loop *loop;
        char *url;
        char *listen_sql; /* LISTEN "channel" */
        struct db_listen_handlers h;
        void *data;
        PGconn *conn;
        int fd;            /* the socket watched on the loop, or -1 */
        uint32_t watching; /* its epoll events */
        enum phase phase;
        bool listen_ok; /* LISTEN answered COMMAND_OK (LISTENING) */
        bool was_up;    /* the next up is "again" */
        bool told_down; /* handlers.down was called for this loss */
        int64_t retry_usec;
        uint64_t timer; /* the next try (WAITING) or the deadline (CONNECTING, LISTENING) */
};

/* libpq's parameters: TCP keepalives find a server gone without a word
 * (about 25 s); the URL comes last, so that what it says wins. */
static const char *const param_keys[] = {
        "keepalives",
        "keepalives_idle",
        "keepalives_interval",
        "keepalives_count",
        "connect_timeout",
        "application_name",
        "dbname",
        NULL,
};

static PGconn *connect_params(const struct db_listen *dl, bool blocking)
{
        const char *values[] = { "1", "10", "5", "3", "10", "tessera-listen", dl->url, NULL };
        return blocking ? PQconnectdbParams(param_keys, values, 1) : PQconnectStartParams(param_keys, values, 1);
}

static void on_io(struct loop *l, int fd, uint32_t events, void *data);
static void on_timer(struct loop *l, void *data);

static void unwatch(struct db_listen *dl)
{
        if (dl->fd >= 0)
                loop_del_fd(dl->loop, dl->fd);
        dl->fd = -1;
        dl->watching = 0;
}

static void cancel_timer(struct db_listen *dl)
{
        if (dl->timer)
                loop_cancel_timer(dl->loop, dl->timer);
        dl->timer = 0;
}

/* msg on one line (libpq's span several), without trailing blanks, into buf. */
static void one_line(const char *msg, char *buf, size_t size)
{
        size_t n = 0;

        for (; *msg && n + 1 < size; msg++)
                if (*msg != '\n' && *msg != '\t')
                        buf[n++] = *msg;
                else if (n > 0 && buf[n - 1] != ' ')
                        buf[n++] = ' ';
        while (n > 0 && buf[n - 1] == ' ')
                n--;
        buf[n] = 0;
        if (n == 0)
                snprintf(buf, size, "connection lost");
}

/* Give up this connection; try again after a pause. */
static void drop(struct db_listen *dl, const char *why)
{
        char msg[512];

        one_line(why ? why : dl->conn ? PQerrorMessage(dl->conn) : "", msg, sizeof(msg));
        unwatch(dl);
        cancel_timer(dl);
        if (dl->conn)
                PQfinish(dl->conn);
        dl->conn = NULL;
        dl->phase = PHASE_WAITING;
        dl->timer = loop_add_timer(dl->loop, dl->retry_usec, on_timer, dl);
        dl->retry_usec = dl->retry_usec * 2 > RETRY_MAX_USEC ? RETRY_MAX_USEC : dl->retry_usec * 2;
        if (!dl->told_down) {
                dl->told_down = true;
                dl->h.down(msg, dl->data);
        }
}

/* Watch the connection's socket for events (libpq may change sockets while
 * it connects, so the socket is asked for every time). */
static bool watch(struct db_listen *dl, uint32_t events)
{
        struct tess_error *err = NULL;
        int fd = PQsocket(dl->conn);

        if (fd < 0) {
                drop(dl, NULL);
                return false;
        }
        if (fd == dl->fd && events == dl->watching && dl->phase == PHASE_UP)
                return true;
        unwatch(dl);
        if (loop_add_fd(dl->loop, fd, events, on_io, dl, &err) < 0) {
                char msg[256];
                snprintf(msg, sizeof(msg), "%s", err->msg);
                tess_error_free(err);
                drop(dl, msg);
                return false;
        }
        dl->fd = fd;
        dl->watching = events;
        return true;
}

static void became_up(struct db_listen *dl)
{
        bool again = dl->was_up;

        cancel_timer(dl);
        dl->phase = PHASE_UP;
        dl->retry_usec = RETRY_FIRST_USEC;
        dl->was_up = true;
        dl->told_down = false;
        dl->h.up(again, dl->data);
}

/* Send what libpq holds; watch for writability only while it holds some. */
static bool flush_and_watch(struct db_listen *dl)
{
        int r = PQflush(dl->conn);
        if (r < 0) {
                drop(dl, NULL);
                return false;
        }
        return watch(dl, r > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
}

static void send_listen(struct db_listen *dl)
{
        if (PQsetnonblocking(dl->conn, 1) < 0 || !PQsendQuery(dl->conn, dl->listen_sql)) {
                drop(dl, NULL);
                return;
        }
        dl->phase = PHASE_LISTENING;
        dl->listen_ok = false;
        flush_and_watch(dl);
}

static void connect_step(struct db_listen *dl)
{
        switch (PQconnectPoll(dl->conn)) {
        case PGRES_POLLING_READING:
                watch(dl, EPOLLIN);
                break;
        case PGRES_POLLING_WRITING:
                watch(dl, EPOLLOUT);
                break;
        case PGRES_POLLING_OK:
                send_listen(dl);
                break;
        default:
                drop(dl, NULL);
                break;
        }
}

/* The answers (LISTEN's) and the notifications that arrived. */
static void read_step(struct db_listen *dl)
{
        PGnotify *n;

        if (!PQconsumeInput(dl->conn)) {
                drop(dl, NULL);
                return;
        }
        while (!PQisBusy(dl->conn)) {
                PGresult *res = PQgetResult(dl->conn);
                if (!res) {
                        if (dl->phase == PHASE_LISTENING && dl->listen_ok)
                                became_up(dl);
                        break;
                }
                bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
                if (dl->phase == PHASE_LISTENING && ok)
                        dl->listen_ok = true;
                if (!ok) {
                        char msg[512];
                        snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(res));
                        PQclear(res);
                        drop(dl, msg);
                        return;
                }
                PQclear(res);
        }
        /* a notification's handler may stop this listener: none runs after */
        while (dl->conn && (n = PQnotifies(dl->conn))) {
                dl->h.notify(n->extra ? n->extra : "", dl->data);
                PQfreemem(n);
        }
        if (dl->conn && PQstatus(dl->conn) == CONNECTION_BAD)
                drop(dl, NULL);
}

static void on_io(struct loop *l UNUSED, int fd UNUSED, uint32_t events, void *data)
{
        struct db_listen *dl = data;

        if (!dl->conn)
                return;
        if (dl->phase == PHASE_CONNECTING) {
                connect_step(dl);
                return;
        }
        if ((events & EPOLLOUT) && !flush_and_watch(dl))
                return;
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                read_step(dl);
}

static void start_connecting(struct db_listen *dl)
{
        dl->conn = connect_params(dl, false);
        if (!dl->conn || PQstatus(dl->conn) == CONNECTION_BAD) {
                drop(dl, dl->conn ? NULL : "out of memory");
                return;
        }
        dl->phase = PHASE_CONNECTING;
        dl->timer = loop_add_timer(dl->loop, CONNECT_DEADLINE_USEC, on_timer, dl);
        /* as if PQconnectPoll had answered PGRES_POLLING_WRITING */
        watch(dl, EPOLLOUT);
}

/* WAITING: the next try; CONNECTING, LISTENING: the deadline passed. */
static void on_timer(struct loop *l UNUSED, void *data)
{
        struct db_listen *dl = data;

        dl->timer = 0;
        if (dl->phase == PHASE_WAITING)
                start_connecting(dl);
        else
                drop(dl, "timed out connecting");
}

static bool plain_identifier(const char *s)
{
        if (!*s || strlen(s) > 63)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

int db_listen_start(struct loop *l, const char *url, const char *channel, const struct db_listen_handlers *handlers,
                    void *data, struct db_listen **ret, struct tess_error **err)
{
        if (!plain_identifier(channel))
                return tess_err(err, EINVAL, "listen channel '%s' is not a plain identifier", channel);

        struct db_listen *dl = xcalloc(1, sizeof(*dl));
        dl->loop = l;
        dl->url = xstrdup(url);
        dl->listen_sql = xasprintf("LISTEN \"%s\"", channel);
        dl->h = *handlers;
        dl->data = data;
        dl->fd = -1;
        dl->retry_usec = RETRY_FIRST_USEC;

        /* the first connection blocks, as db_open's does: LISTEN is in
         * place before the manager answers its first request */
        dl->conn = connect_params(dl, true);
        if (dl->conn && PQstatus(dl->conn) == CONNECTION_OK) {
                PGresult *res = PQexec(dl->conn, dl->listen_sql);
                bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
                PQclear(res);
                if (ok && PQsetnonblocking(dl->conn, 1) == 0) {
                        dl->phase = PHASE_UP;
                        if (watch(dl, EPOLLIN))
                                became_up(dl);
                        *ret = dl;
                        return 0;
                }
        }
        drop(dl, dl->conn ? NULL : "out of memory");
        *ret = dl;
        return 0;
}

struct db_listen *db_listen_stop(struct db_listen *dl)
{
        if (!dl)
                return NULL;
        unwatch(dl);
        cancel_timer(dl);
        if (dl->conn)
                PQfinish(dl->conn);
        free(dl->url);
        free(dl->listen_sql);
        free(dl);
        return NULL;
}

bool db_listen_up(const struct db_listen *dl)
{
        return dl && dl->phase == PHASE_UP;
}
