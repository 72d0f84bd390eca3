/* subcall.c - see subcall.h. */
#include "common/compat.h"

#include "common/buf.h"
#include "manager/api/api.h"
#include "manager/api/server_state.h"
#include "manager/api/subcall.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

struct subcall {
        struct api_ctx *parent;
        api_subcall_done_fn done;
        void *data;
        void (*data_free)(void *data); /* when dropped before done ran */
        bool delivered;
        char *path;      /* the pattern with its parameters, for the audit log */
        unsigned status; /* 0 until answered */
        json_t *answer;
        bool running; /* inside the handler's first call */
};

bool api_is_subcall(const struct api_ctx *c)
{
        return c->sub != NULL;
}

const char *api_method(const struct api_ctx *c)
{
        return c->sub ? c->route->method : http_method(c->req);
}

const char *api_path(const struct api_ctx *c)
{
        return c->sub ? c->sub->path : http_path(c->req);
}

static const struct route *route_of(const struct manager *m, const char *method, const char *pattern)
{
        for (size_t t = 0; m->routes[t]; t++)
                for (const struct route *r = m->routes[t]; r->method; r++)
                        if (streq(r->method, method) && streq(r->pattern, pattern))
                                return r;
        abort(); /* a route the code names is in the tables */
}

static char *path_of(const char *pattern, const char *const *params)
{
        struct buf b = BUF_INIT;
        const char *p = pattern;

        while (*p) {
                const char *open = strchr(p, '{');
                if (!open || !params || !*params) {
                        buf_puts(&b, p);
                        break;
                }
                buf_append(&b, p, (size_t)(open - p));
                buf_puts(&b, *params++);
                p = strchr(open, '}') + 1;
        }
        return buf_detach(&b, NULL);
}

static void forward_shutdown(struct api_ctx *parent);

void api_subcall_forget(struct api_ctx *c)
{
        struct subcall *s = c->sub;

        if (!s->delivered && s->data_free)
                s->data_free(s->data);
        json_decref(s->answer);
        free(s->path);
        free(s);
        c->sub = NULL;
}

static void subcall_free(struct api_ctx *child)
{
        struct api_ctx *parent = child->sub->parent;

        parent->subcall_child = NULL;
        if (parent->on_shutdown == forward_shutdown)
                parent->on_shutdown = NULL;
        api_ctx_release(child->m, child);
}

/* The answer is final: hand it over and end the subcall. */
static void deliver(struct api_ctx *child)
{
        struct subcall *s = child->sub;
        struct api_ctx *parent = s->parent;

        if (!s->status) /* resumed without an answer: as http.c answers such a request */
                api_problem(child, 500, "internal-server-error", "no answer");
        api_record_outcome(child->m, child, s->status);
        json_t *answer = json_incref(s->answer);
        unsigned status = s->status;
        api_subcall_done_fn done = s->done;
        void *data = s->data;
        s->delivered = true;
        subcall_free(child);
        done(parent, status, answer, data);
        json_decref(answer);
}

void api_subcall_answer(struct api_ctx *c, unsigned status, json_t *answer)
{
        struct subcall *s = c->sub;

        if (s->status) { /* a handler answers once */
                json_decref(answer);
                return;
        }
        s->status = status;
        s->answer = answer;
}

/* A parked parent asked to stop: its subcall answers first. */
static void forward_shutdown(struct api_ctx *parent)
{
        struct api_ctx *child = parent->subcall_child;
        if (child && child->on_shutdown)
                child->on_shutdown(child);
}

void api_suspend(struct api_ctx *c)
{
        http_suspend(c->req);
}

void api_resume(struct api_ctx *c)
{
        if (!c->sub)
                return http_resume(c->req);
        if (!c->sub->running)
                deliver(c);
}

bool api_may_call(const struct api_ctx *c, const char *method, const char *pattern)
{
        return api_role_may_use(c, route_of(c->m, method, pattern));
}

void api_subcall(struct api_ctx *c, const char *method, const char *pattern, const char *const *params, json_t *body,
                 api_subcall_done_fn done, void (*data_free)(void *data), void *data)
{
        struct api_ctx *child = xcalloc(1, sizeof(*child));
        struct subcall *s = xcalloc(1, sizeof(*s));

        if (c->subcall_child)
                abort(); /* one at a time */
        s->parent = c;
        s->done = done;
        s->data = data;
        s->data_free = data_free;
        s->path = path_of(pattern, params);
        child->sub = s;
        child->m = c->m;
        child->req = c->req;
        child->route = route_of(c->m, method, pattern);
        child->who = c->who;
        child->authenticated = c->authenticated;
        memcpy(child->web_login, c->web_login, sizeof(child->web_login));
        for (int i = 0; params && i < API_MAX_PARAMS && params[i]; i++)
                child->param[i] = xstrdup(params[i]);
        child->body = body ? json_incref(body) : NULL;
        c->subcall_child = child;
        c->on_shutdown = forward_shutdown;

        s->running = true;
        if (!api_role_may_use(child, child->route))
                api_problem(child, 403, "forbidden", "your role (%s) may not use %s %s",
                            role_to_string(child->who.role), method, pattern);
        else if ((child->route->flags & ROUTE_CREATES) && server_frozen(c->m))
                api_problem(child, 503, "server-frozen",
                            "the service is frozen for maintenance: nothing new can be created until an "
                            "administrator unfreezes it; please try again later");
        else
                child->route->fn(child);
        s->running = false;
        if (s->status)
                deliver(child); /* answered now; else at its api_resume() */
}

/* ---- a sequence of subcalls ---- */

struct steps {
        struct api_ctx *c;
        const struct api_step *v;
        size_t n, next;
        bool in_call, answered;
        api_step_done_fn step_done;
        api_steps_end_fn end;
        void (*data_free)(void *data);
        void *data;
};

static void steps_dropped(void *p)
{
        struct steps *s = p;
        if (s->data_free)
                s->data_free(s->data);
        free(s);
}

static void steps_run(struct steps *s);

static void step_answered(struct api_ctx *c, unsigned status, json_t *answer, void *p)
{
        struct steps *s = p;

        s->answered = true;
        s->next = s->step_done(c, s->next, status, answer, s->data) ? s->next + 1 : s->n;
        if (!s->in_call) /* answered later: go on from here */
                steps_run(s);
}

static void steps_run(struct steps *s)
{
        while (s->next < s->n) {
                const struct api_step *st = &s->v[s->next];
                const char *params[] = { st->param, NULL };
                s->in_call = true;
                s->answered = false;
                api_subcall(s->c, st->method, st->pattern, params, st->body, step_answered, steps_dropped, s);
                s->in_call = false;
                if (!s->answered)
                        return; /* step_answered goes on */
        }
        struct api_ctx *c = s->c;
        api_steps_end_fn end = s->end;
        void *data = s->data;
        free(s);
        end(c, data);
}

void api_subcall_steps(struct api_ctx *c, const struct api_step *steps, size_t n, api_step_done_fn step_done,
                       api_steps_end_fn end, void (*data_free)(void *data), void *data)
{
        struct steps *s = xcalloc(1, sizeof(*s));

        *s = (struct steps){ .c = c, .v = steps, .n = n, .step_done = step_done, .end = end, .data_free = data_free,
                             .data = data };
        steps_run(s);
}
