/* api.h - the REST API framework: routes, authentication, JSON, errors.
 *
 * Every route is one row of the table in routes.c: method, path pattern with
 * {params}, handler, and what it needs (signed or not, role, read-only).
 * The dispatcher authenticates (Backend.AI HMAC signing, see auth.c),
 * applies the rate limit, parses the JSON body within the configured
 * limits, calls the handler, and records metrics and the audit log.
 *
 * A handler reads ctx->param[], ctx->body (parsed JSON object or NULL) and
 * ctx->who, and answers exactly once with api_json() or api_problem() (or
 * api_fail() for a struct tess_error), or suspends ctx->req to answer later
 * (see http.h).  Answers are application/json, errors problem+json. */
#ifndef TESS_API_H
#define TESS_API_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/slots.h"

struct manager;
struct http_req;
struct db_rows;

enum role {
        ROLE_MONITOR,
        ROLE_USER,
        ROLE_ADMIN,
        ROLE_SUPERADMIN,
        _ROLE_MAX,
        _ROLE_INVALID = -EINVAL,
};

const char *role_to_string(enum role r);
enum role role_from_string(const char *s);

/* The authenticated caller. */
struct principal {
        char access_key[24];
        char user_id[40];
        char email[256];
        char domain[128];
        char resource_policy[128];
        enum role role;
        int64_t rate_limit;
        /* from the keypair resource policy, checked at enqueue */
        int64_t max_pending_count; /* -1: unlimited */
        bool has_max_pending_slots;
        struct slots max_pending_slots;
        int64_t max_session_priority; /* the highest priority a plain user may ask for */
        int64_t max_container_disk;   /* bytes of a session's writable layers; 0: the node's limit */
        bool must_change_password;    /* users.need_password_change (web logins are held to it) */
};

#define API_MAX_PARAMS 4

struct api_ctx {
        struct manager *m;
        struct http_req *req;
        const struct route *route;
        struct principal who;
        bool authenticated;
        char web_login[65];          /* the web login (web_sessions.id) that authenticated it, or "" */
        bool func_prefix;            /* asked as /func/<route> (Backend.AI's webserver mode): the login
                                        cookie only (web_session.h) */
        char *password_hash;         /* a password of the body hashed off the loop (admin.c), or NULL */
        char *param[API_MAX_PARAMS]; /* percent-decoded path parameters */
        json_t *body;                /* parsed JSON body, or NULL if none */
        char audit_target[256];      /* set by handlers that change things */
        /* for answers that outlive the handler call: released when the
         * request ends (client gone or answered) */
        uint64_t listener_id; /* events_listen() id */
        uint64_t timer_id;    /* loop_add_timer() id */
        void *state;
        void (*state_free)(void *state);
        void (*on_shutdown)(struct api_ctx *ctx); /* answer a parked request */
        struct subcall *sub;                      /* a route run by api_subcall (subcall.h), or NULL */
        struct api_ctx *subcall_child;            /* the subcall this request waits for, or NULL */
};

typedef void (*api_handler_fn)(struct api_ctx *ctx);

enum route_flags {
        ROUTE_PUBLIC = 1 << 0,     /* no signature needed */
        ROUTE_READ = 1 << 1,       /* does not change state (monitor may call) */
        ROUTE_ADMIN = 1 << 2,      /* admin or superadmin (monitor too if ROUTE_READ) */
        ROUTE_SUPERADMIN = 1 << 3, /* superadmin only */
        ROUTE_RAW_BODY = 1 << 4,   /* body is not JSON; handler reads http_body() */
        ROUTE_SELF = 1 << 5,       /* changes only the caller's own account (monitor may call) */
        ROUTE_AUDIT = 1 << 6,      /* reads the audit log: queued entries are written first */
        ROUTE_AGENT = 1 << 7,      /* called by agents, signed with the cluster secret (auth.h) */
        ROUTE_UPLOAD = 1 << 8,     /* a raw body of up to conf.max_upload bytes */
        ROUTE_TAIL = 1 << 9,       /* the last {param} takes the rest of the path, slashes included */
        ROUTE_STREAM = 1 << 10,    /* dispatched when the headers are in; the handler takes the body as
                                     it comes (http_body_sink) */
        ROUTE_APP = 1 << 11,       /* the app proxy's: with conf.app_listen, served there and only there */
        ROUTE_CREATES = 1 << 12,   /* makes a session or a folder: refused while the service is frozen
                                     (server_state.h) */
};

struct route {
        const char *method;
        const char *pattern; /* "/session/{name}/logs" */
        api_handler_fn fn;
        unsigned flags;
        const char *summary; /* for /openapi.json */
        const char *tag;     /* OpenAPI tag */
        /* optional, for a public route: a check on the headers alone (a
         * token in the query) before its body is read; answers to refuse */
        api_handler_fn admit;
};

/* Dispatch entries for http.c (the API's listener; the app listener of
 * conf.app_listen, which serves the ROUTE_APP routes and nothing else,
 * while the API's listener then answers them 404) and request-end hook. */
void api_dispatch(struct http_req *req, void *data);
void api_dispatch_apps(struct http_req *req, void *data);
/* The same requests on their headers (http_server_opts.admit): the route,
 * the size and the caller are checked before the body is read. */
void api_admit(struct http_req *req, void *data);
void api_admit_apps(struct http_req *req, void *data);
void api_request_done(struct http_req *req, void *data);
/* What the end of a request does but for the HTTP side (dispatch.c):
 * the audit entry and the revocation checks of a write, then freeing
 * what the handler held. */
void api_record_outcome(struct manager *m, struct api_ctx *c, unsigned status);
void api_ctx_release(struct manager *m, struct api_ctx *c);
void api_request_abort(struct http_req *req, void *data);
/* The largest body a request may send (http_server_opts.body_limit). */
size_t api_body_limit(const char *method, const char *path, void *data);
/* The same on the app listener: nothing but for the app proxy's routes. */
size_t api_body_limit_apps(const char *method, const char *path, void *data);
/* Whether a request's body is streamed: ROUTE_STREAM (http_server_opts.stream_body). */
bool api_stream_body(const char *method, const char *path, void *data);

/* Answers.  api_json steals `body`. */
void api_json(struct api_ctx *c, unsigned status, json_t *body);
void api_problem(struct api_ctx *c, unsigned status, const char *kind, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* errno-style code to status: EINVAL 400, EACCES/EPERM 403, ENOENT 404,
 * EEXIST 409, ETXTBSY 409 (in use), EDQUOT 412, EBUSY 503 with
 * Retry-After (unavailable now, e.g. the database: try again), ENOSPC 507
 * (the database's disk is full), else 500.  Frees err. */
void api_fail(struct api_ctx *c, struct tess_error *err);
/* Answer with a stream of server-sent events (then http_stream_write):
 * uncached, unbuffered by proxies, opened by a comment (`: open`) so that
 * the client sees its headers at once.  No `retry:` field: browsers wait
 * about 3 s by default, and Backend.AI's SDK reads it as seconds. */
void api_event_stream_start(struct api_ctx *c);
#define API_EVENT_STREAM_OPENED ": open\n\n"

/* Park the request to answer later, then answer and api_resume(): the
 * same as http_suspend/http_resume, which also works for a route run as
 * a subcall (subcall.h). */
void api_suspend(struct api_ctx *c);
void api_resume(struct api_ctx *c);

/* Problem body as text (used for streaming / late answers). */
char *api_problem_text(unsigned status, const char *kind, const char *title);

/* Body field helpers: first present key among NULL-terminated aliases. */
json_t *api_field(const json_t *obj, const char *const *names);
/* A request parameter: the query string's, else the JSON body's string of
 * that name (Backend.AI's clients send GET parameters as a JSON body). */
const char *api_param(struct api_ctx *c, const char *name);
/* Typed getters: -EINVAL with a message naming the field on a wrong type.
 * Absent (or null) leaves *ret untouched and returns 0. */
int api_get_string(const json_t *obj, const char *const *names, size_t maxlen, const char **ret,
                   struct tess_error **err);
int api_get_bool(const json_t *obj, const char *const *names, bool *ret, struct tess_error **err);
/* Accepts numbers and numeric strings. */
int api_get_int(const json_t *obj, const char *const *names, int64_t min, int64_t max, int64_t *ret,
                struct tess_error **err);
#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Pagination from ?limit=&offset= within conf.max_page_size. */
int api_page(struct api_ctx *c, int64_t *ret_limit, int64_t *ret_offset, struct tess_error **err);

bool api_is_admin(const struct api_ctx *c); /* admin or superadmin */
/* May c's caller use route r, by its role and r's flags?  (dispatch.c) */
bool api_role_may_use(const struct api_ctx *c, const struct route *r);
bool api_is_superadmin(const struct api_ctx *c);
/* May the caller see things of `domain`?  superadmin: all; admin and
 * monitor: their own domain; user: no (users see only their own objects). */
bool api_sees_domain(const struct api_ctx *c, const char *domain);
/* Record what a write acted on, for the audit log. */
void api_audit_target(struct api_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Names: 1-64 chars of [A-Za-z0-9._-], starting with an alphanumeric. */
bool api_valid_name(const char *s);
/* Session names: 4-64 chars, \w[\w.-]*\w */
bool api_valid_session_name(const char *s);
bool api_valid_email(const char *s);

#endif
