/* app_proxy.c - what the app proxy's HTTP and WebSocket forwarding share
 * (see app_proxy.h): threads, one pipe back to the loop, the headers
 * passed on. */
#include "common/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <strings.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/loop.h"
#include "manager/api/api.h"
#include "manager/api/web_session.h"
#include "manager/apps/app_proxy.h"
#include "manager/apps/app_token.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

struct post {
        void (*fn)(void *data);
        void *data;
};

static int post_pipe[2] = { -1, -1 };
static int threads; /* running, __atomic */

static void on_posts(struct loop *l UNUSED, int fd, uint32_t events UNUSED, void *data UNUSED)
{
        struct post p;

        while (read(fd, &p, sizeof(p)) == (ssize_t)sizeof(p))
                p.fn(p.data);
}

int app_proxy_start(struct api_ctx *c, struct tess_error **err)
{
        if (post_pipe[0] >= 0)
                return 0;
        if (pipe2(post_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return tess_err(err, errno, "pipe: %s", strerror(errno));
        fcntl(post_pipe[1], F_SETFL, 0); /* the threads' writes block */
        return loop_add_fd(c->m->loop, post_pipe[0], 0x001 /* EPOLLIN */, on_posts, NULL, err);
}

void app_proxy_post(void (*fn)(void *data), void *data)
{
        struct post p = { fn, data };

        if (write(post_pipe[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
                log_error("app proxy: cannot reach the loop: %s", strerror(errno));
}

bool app_proxy_thread(void *(*fn)(void *), void *data)
{
        pthread_attr_t attr;
        pthread_t t;

        if (__atomic_add_fetch(&threads, 1, __ATOMIC_SEQ_CST) > APP_PROXY_THREADS_MAX) {
                __atomic_sub_fetch(&threads, 1, __ATOMIC_SEQ_CST);
                return false;
        }
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)256 << 10);
        int r = pthread_create(&t, &attr, fn, data);
        pthread_attr_destroy(&attr);
        if (r != 0)
                __atomic_sub_fetch(&threads, 1, __ATOMIC_SEQ_CST);
        return r == 0;
}

void app_proxy_thread_exit(void)
{
        __atomic_sub_fetch(&threads, 1, __ATOMIC_SEQ_CST);
}

char *app_proxy_tunnel_target(const struct app_target *t)
{
        return xasprintf("/v1/kernels/%s/tunnel?port=%d", t->s.kernel, t->port);
}

struct agent_endpoint app_proxy_endpoint(const struct app_target *t, const char *secret)
{
        return (struct agent_endpoint){ .secret = secret, .agent_id = t->s.agent, .address = t->s.address };
}

/* ---- headers ---- */

/* Hop-by-hop headers (RFC 9110 §7.6.1) and what the servers on either
 * side write themselves. */
static const char *const not_passed[] = {
        "Connection",
        "Keep-Alive",
        "Proxy-Connection",
        "Proxy-Authenticate",
        "Proxy-Authorization",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Content-Length",
        "Expect",
        NULL,
};

static bool listed(const char *const *names, const char *name, size_t len)
{
        for (; *names; names++)
                if (strlen(*names) == len && strncasecmp(*names, name, len) == 0)
                        return true;
        return false;
}

static bool manager_cookie(const char *name, size_t len)
{
        return (len == strlen(APP_COOKIE) && memcmp(name, APP_COOKIE, len) == 0) ||
               (len == strlen(APP_STATE_COOKIE) && memcmp(name, APP_STATE_COOKIE, len) == 0) ||
               (len == strlen(WEB_SESSION_COOKIE) && memcmp(name, WEB_SESSION_COOKIE, len) == 0);
}

void app_proxy_cookies(struct buf *out, const char *header)
{
        for (const char *p = header; *p;) {
                while (*p == ' ' || *p == ';')
                        p++;
                size_t n = strcspn(p, ";");
                size_t name_len = strcspn(p, "=;");
                while (name_len > 0 && p[name_len - 1] == ' ')
                        name_len--;
                if (n > 0 && !manager_cookie(p, name_len)) {
                        if (out->len)
                                buf_puts(out, "; ");
                        buf_append(out, p, n);
                }
                p += n;
        }
}

struct headers_ctx {
        char **v;
        size_t n, cap;
        bool upgrade;
};

static void push(struct headers_ctx *h, char *line)
{
        if (h->n + 2 > h->cap) {
                h->cap = h->cap ? 2 * h->cap : 16;
                h->v = xrealloc(h->v, h->cap * sizeof(char *));
        }
        h->v[h->n++] = line;
        h->v[h->n] = NULL;
}

static void add_request_header(void *data, const char *name, const char *value)
{
        struct headers_ctx *h = data;

        if (strchr(value, '\r') || strchr(value, '\n'))
                return;
        if (!strcasecmp(name, "Cookie")) {
                struct buf b = BUF_INIT;
                app_proxy_cookies(&b, value);
                if (b.len)
                        push(h, xasprintf("Cookie: %s", b.data));
                buf_release(&b);
                return;
        }
        if (!strcasecmp(name, "Authorization") && !strncasecmp(value, "BackendAI ", 10))
                return; /* the manager's API signature is not the app's business */
        if (h->upgrade && (!strcasecmp(name, "Upgrade") || !strcasecmp(name, "Connection")))
                push(h, xasprintf("%s: %s", name, value));
        else if (!listed(not_passed, name, strlen(name)) && strcasecmp(name, "X-Forwarded-For") != 0)
                push(h, xasprintf("%s: %s", name, value));
}

char **app_proxy_request_headers(struct http_req *r, bool upgrade)
{
        struct headers_ctx h = { .upgrade = upgrade };
        const char *prior = http_header(r, "X-Forwarded-For");

        http_headers_each(r, add_request_header, &h);
        if (prior && !strchr(prior, '\r') && !strchr(prior, '\n'))
                push(&h, xasprintf("X-Forwarded-For: %s, %s", prior, http_remote_addr(r)));
        else
                push(&h, xasprintf("X-Forwarded-For: %s", http_remote_addr(r)));
        return h.v;
}

void app_proxy_strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

bool app_proxy_answer_header(const char *name, size_t nlen, const char *value, size_t vlen)
{
        if (listed(not_passed, name, nlen) || (nlen == 4 && strncasecmp(name, "Date", 4) == 0))
                return false;
        if (nlen == 10 && strncasecmp(name, "Set-Cookie", 10) == 0) {
                while (vlen > 0 && *value == ' ')
                        value++, vlen--;
                size_t cn = 0;
                while (cn < vlen && value[cn] != '=' && value[cn] != ';' && value[cn] != ' ')
                        cn++;
                return !manager_cookie(value, cn);
        }
        return true;
}
