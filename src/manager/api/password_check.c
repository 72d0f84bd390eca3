/* password_check.c - see password_check.h. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/log.h"
#include "manager/api/api.h"
#include "manager/api/password_check.h"
#include "manager/core/worker.h"
#include "manager/http/http.h"

struct check {
        struct manager *m;
        struct api_ctx *c; /* NULL once the request ended */
        char *password, *stored, *new_password;
        bool ok;
        char *new_hash;
        password_done_fn done;
        void *data;
        void (*data_free)(void *data);
        int refs;           /* the request's, and the queue's or thread's */
        struct check *next; /* waiting */
};

static int running, waiting;
static struct check *queue_head, **queue_tail = &queue_head;

static void wipe(char **s)
{
        if (*s)
                explicit_bzero(*s, strlen(*s));
        free(*s);
        *s = NULL;
}

static void check_unref(struct check *k)
{
        if (--k->refs > 0)
                return;
        wipe(&k->password);
        free(k->stored);
        wipe(&k->new_password);
        free(k->new_hash);
        if (k->data_free)
                k->data_free(k->data);
        free(k);
}

/* The request ended (answered, or its client gone). */
static void ctx_released(void *state)
{
        struct check *k = state;
        k->c = NULL;
        check_unref(k);
}

static void on_shutdown(struct api_ctx *c)
{
        struct check *k = c->state;
        k->c = NULL;
        api_problem(c, 503, "service-unavailable", "the manager is stopping");
        api_resume(c);
}

static void work(struct worker *w UNUSED, void *data)
{
        struct check *k = data;

        k->ok = !k->stored || password_verify(k->password, k->stored);
        if (k->ok && k->new_password)
                k->new_hash = password_hash(k->new_password);
}

static void start_next(struct manager *m);

/* On the loop, once the thread is done. */
static void checked(struct manager *m, void *data, void *msg UNUSED)
{
        struct check *k = data;
        struct api_ctx *c = k->c;

        running--;
        if (c) {
                char *h = k->new_hash;
                k->new_hash = NULL;
                c->on_shutdown = NULL;
                k->done(c, k->ok, h, k->data);
                api_resume(c);
        }
        check_unref(k); /* the thread's */
        start_next(m);
}

static void start_next(struct manager *m)
{
        while (running < PASSWORD_THREADS && queue_head) {
                struct check *k = queue_head;
                struct tess_error *err = NULL;

                queue_head = k->next;
                if (!queue_head)
                        queue_tail = &queue_head;
                waiting--;
                if (!k->c) { /* nobody waits for it any more */
                        check_unref(k);
                        continue;
                }
                running++;
                if (worker_start(m, work, checked, k, &err) < 0) {
                        running--;
                        struct api_ctx *c = k->c;
                        c->on_shutdown = NULL;
                        api_problem(c, 503, "service-unavailable", "cannot check the password now: %s", err->msg);
                        http_add_header(c->req, "Retry-After", "1");
                        api_resume(c);
                        tess_error_free(err);
                        check_unref(k);
                }
        }
}

void password_check(struct api_ctx *c, const char *password, const char *stored, const char *new_password,
                    password_done_fn done, void *data, void (*data_free)(void *data))
{
        if (waiting >= PASSWORD_QUEUE) {
                if (data_free)
                        data_free(data);
                http_add_header(c->req, "Retry-After", "1");
                return api_problem(c, 503, "service-unavailable",
                                   "too many passwords being checked: try again shortly");
        }
        struct check *k = xcalloc(1, sizeof(*k));
        k->m = c->m;
        k->c = c;
        k->password = password ? xstrdup(password) : NULL;
        k->stored = stored ? xstrdup(stored) : NULL;
        k->new_password = new_password ? xstrdup(new_password) : NULL;
        k->done = done;
        k->data = data;
        k->data_free = data_free;
        k->refs = 2;
        c->state = k;
        c->state_free = ctx_released;
        c->on_shutdown = on_shutdown;
        api_suspend(c);
        *queue_tail = k;
        queue_tail = &k->next;
        waiting++;
        start_next(c->m);
}

void password_hash_off_loop(struct api_ctx *c, const char *password, password_done_fn done, void *data,
                            void (*data_free)(void *data))
{
        password_check(c, NULL, NULL, password, done, data, data_free);
}
