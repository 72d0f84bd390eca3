/* api.c - what handlers answer with and read from (see api.h): roles,
 * answers (JSON, problem+json), body fields, paging, names. */
#include "common/compat.h"

#include <ctype.h>
#include <stdarg.h>

#include "common/log.h"
#include "common/vfolder_hosts.h"
#include "manager/api/api.h"
#include "manager/api/subcall.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"


static const char *const role_names[] = {
        [ROLE_MONITOR] = "monitor",
        [ROLE_USER] = "user",
        [ROLE_ADMIN] = "admin",
        [ROLE_SUPERADMIN] = "superadmin",
};

const char *role_to_string(enum role r)
{
        return r >= 0 && r < _ROLE_MAX ? role_names[r] : NULL;
}

enum role role_from_string(const char *s)
{
        for (int i = 0; s && i < _ROLE_MAX; i++)
                if (streq(role_names[i], s))
                        return (enum role)i;
        return _ROLE_INVALID;
}

/* ---- answers ---- */

static void reply_json_text(struct api_ctx *c, unsigned status, const char *ctype, json_t *body)
{
        if (api_is_subcall(c))
                return api_subcall_answer(c, status, body);
        char *text = json_dumps(body, JSON_COMPACT);
        if (!text)
                abort();
        http_reply_take(c->req, status, ctype, text, strlen(text));
        json_decref(body);
}

void api_json(struct api_ctx *c, unsigned status, json_t *body)
{
        reply_json_text(c, status, "application/json", body);
}

void api_event_stream_start(struct api_ctx *c)
{
        http_add_header(c->req, "Cache-Control", "no-cache");
        http_add_header(c->req, "X-Accel-Buffering", "no");
        http_stream_start(c->req, 200, "text/event-stream");
        http_stream_write(c->req, API_EVENT_STREAM_OPENED, strlen(API_EVENT_STREAM_OPENED));
}

static json_t *problem_json(unsigned status, const char *kind, const char *title)
{
        return json_pack("{s:s+, s:s, s:i}", "type", "https://api.backend.ai/probs/", kind, "title", title, "status",
                         (int)status);
}

char *api_problem_text(unsigned status, const char *kind, const char *title)
{
        json_t *j = problem_json(status, kind, title);
        char *t = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        return t;
}

void api_problem(struct api_ctx *c, unsigned status, const char *kind, const char *fmt, ...)
{
        _cleanup_free_ char *title = NULL;
        va_list ap;

        va_start(ap, fmt);
        title = xvasprintf(fmt, ap);
        va_end(ap);
        reply_json_text(c, status, "application/problem+json", problem_json(status, kind, title));
}

/* What a client is told to wait before trying an unavailable service again. */
#define RETRY_AFTER_S "2"

void api_fail(struct api_ctx *c, struct tess_error *err)
{
        unsigned status;
        const char *kind;

        switch (err ? err->code : EIO) {
        case EINVAL: status = 400, kind = "invalid-api-params"; break;
        case EACCES:
        case EPERM: status = 403, kind = "forbidden"; break;
        case ENOENT: status = 404, kind = "object-not-found"; break;
        case EEXIST: status = 409, kind = "already-exists"; break;
        case ETXTBSY: status = 409, kind = "in-use"; break;
        case EDQUOT: status = 412, kind = "quota-exceeded"; break;
        case EBUSY: status = 503, kind = "service-unavailable"; break;
        case ENOSPC: status = 507, kind = "insufficient-storage"; break;
        default: status = 500, kind = "internal-server-error";
        }
        /* the database logs its outages once, not at every request */
        if (status == 503 || status == 507)
                log_debug("%s %s: %s", http_method(c->req), http_path(c->req), err->msg);
        else if (status >= 500)
                log_error("%s %s: %s", http_method(c->req), http_path(c->req), err ? err->msg : "unknown error");
        if (status == 503)
                http_add_header(c->req, "Retry-After", RETRY_AFTER_S);
        if (status == 500)
                api_problem(c, status, kind, "internal server error");
        else
                api_problem(c, status, kind, "%s", err ? err->msg : "error");
        tess_error_free(err);
}

/* ---- body helpers ---- */

json_t *api_field(const json_t *obj, const char *const *names)
{
        if (!json_is_object(obj))
                return NULL;
        for (; *names; names++) {
                json_t *v = json_object_get(obj, *names);
                if (v && !json_is_null(v))
                        return v;
        }
        return NULL;
}

int api_get_string(const json_t *obj, const char *const *names, size_t maxlen, const char **ret,
                   struct tess_error **err)
{
        json_t *v = api_field(obj, names);
        if (!v)
                return 0;
        if (!json_is_string(v))
                return tess_err(err, EINVAL, "'%s' must be a string", names[0]);
        if (json_string_length(v) > maxlen)
                return tess_err(err, EINVAL, "'%s' is longer than %zu characters", names[0], maxlen);
        if (strlen(json_string_value(v)) != json_string_length(v))
                return tess_err(err, EINVAL, "'%s' contains a NUL character", names[0]);
        *ret = json_string_value(v);
        return 0;
}

int api_get_bool(const json_t *obj, const char *const *names, bool *ret, struct tess_error **err)
{
        json_t *v = api_field(obj, names);
        if (!v)
                return 0;
        if (json_is_boolean(v)) {
                *ret = json_is_true(v);
                return 0;
        }
        if (json_is_string(v)) {
                const char *s = json_string_value(v);
                if (!strcasecmp(s, "true") || streq(s, "1")) {
                        *ret = true;
                        return 0;
                }
                if (!strcasecmp(s, "false") || streq(s, "0")) {
                        *ret = false;
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "'%s' must be a boolean", names[0]);
}

int api_get_int(const json_t *obj, const char *const *names, int64_t min, int64_t max, int64_t *ret,
                struct tess_error **err)
{
        json_t *v = api_field(obj, names);
        int64_t x;

        if (!v)
                return 0;
        if (json_is_integer(v)) {
                x = json_integer_value(v);
        } else if (json_is_real(v) && json_real_value(v) > -9e18 && json_real_value(v) < 9e18 &&
                   json_real_value(v) == (double)(int64_t)json_real_value(v)) {
                x = (int64_t)json_real_value(v);
        } else if (json_is_string(v)) {
                const char *s = json_string_value(v);
                char *end;
                errno = 0;
                x = strtoll(s, &end, 10);
                if (!*s || *end || errno)
                        return tess_err(err, EINVAL, "'%s' must be an integer", names[0]);
        } else {
                return tess_err(err, EINVAL, "'%s' must be an integer", names[0]);
        }
        if (x < min || x > max)
                return tess_err(err, EINVAL, "'%s' must be between %lld and %lld", names[0], (long long)min,
                                (long long)max);
        *ret = x;
        return 0;
}

int api_page(struct api_ctx *c, int64_t *ret_limit, int64_t *ret_offset, struct tess_error **err)
{
        const char *l = http_query(c->req, "limit"), *o = http_query(c->req, "offset");
        int64_t max = (int64_t)c->m->conf.max_page_size, limit = max < 100 ? max : 100, offset = 0;
        char *end;

        if (l) {
                errno = 0;
                limit = strtoll(l, &end, 10);
                if (!*l || *end || errno || limit < 1 || limit > max)
                        return tess_err(err, EINVAL, "'limit' must be an integer between 1 and %lld",
                                        (long long)max);
        }
        if (o) {
                errno = 0;
                offset = strtoll(o, &end, 10);
                if (!*o || *end || errno || offset < 0)
                        return tess_err(err, EINVAL, "'offset' must be a non-negative integer");
        }
        *ret_limit = limit;
        *ret_offset = offset;
        return 0;
}

const char *api_param(struct api_ctx *c, const char *name)
{
        const char *q = http_query(c->req, name);
        return q ? q : json_string_value(json_object_get(c->body, name));
}

bool api_is_admin(const struct api_ctx *c)
{
        return c->who.role == ROLE_ADMIN || c->who.role == ROLE_SUPERADMIN;
}

bool api_is_superadmin(const struct api_ctx *c)
{
        return c->who.role == ROLE_SUPERADMIN;
}

bool api_sees_domain(const struct api_ctx *c, const char *domain)
{
        if (c->who.role == ROLE_SUPERADMIN)
                return true;
        if (c->who.role == ROLE_ADMIN || c->who.role == ROLE_MONITOR)
                return domain && streq(domain, c->who.domain);
        return false;
}

void api_audit_target(struct api_ctx *c, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->audit_target, sizeof(c->audit_target), fmt, ap);
        va_end(ap);
}

bool api_valid_name(const char *s)
{
        return vf_host_name_valid(s);
}

bool api_valid_session_name(const char *s)
{
        size_t n = strlen(s);
        if (n < 4 || n > 64)
                return false;
        if (!(isalnum((unsigned char)s[0]) || s[0] == '_') || !(isalnum((unsigned char)s[n - 1]) || s[n - 1] == '_'))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
                        return false;
        return true;
}

bool api_valid_email(const char *s)
{
        const char *at = strchr(s, '@');
        size_t n = strlen(s);
        if (n < 3 || n > 254 || !at || at == s || !at[1] || strchr(at + 1, '@'))
                return false;
        for (; *s; s++)
                if ((unsigned char)*s <= ' ' || *s == '"' || *s == '\\' || *s == '<' || *s == '>' || *s == ',')
                        return false;
        return true;
}
