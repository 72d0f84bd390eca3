/* registry_auth.c - what the registry client does with a 401: the Docker
 * token flow for a Bearer challenge (GET realm?service=...&scope=... with
 * the Basic credentials if configured, a token from the JSON answer's
 * "token" or "access_token"), or the Basic credentials for a Basic one.
 * See registry-internal.h. */
#include "common/compat.h"

#include <jansson.h>

#include "registry/registry-internal.h"
#include "registry/www_authenticate.h"

#define TOKEN_ANSWER_MAX (1u << 20)
#define TOKEN_MAX 16384

/* A token goes into a header line: visible ASCII only. */
static bool token_valid(const char *t)
{
        size_t n = strlen(t);

        if (n == 0 || n > TOKEN_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (t[i] <= 0x20 || t[i] >= 0x7f)
                        return false;
        return true;
}

static int token_from_answer(const struct buf *b, char **ret, struct tess_error **err)
{
        json_t *j = json_loadb(b->data, b->len, 0, NULL);
        const char *t = json_string_value(json_object_get(j, "token"));
        int r = 0;

        if (!t || !*t)
                t = json_string_value(json_object_get(j, "access_token"));
        if (!t || !token_valid(t))
                r = tess_err(err, EACCES, "the answer holds no usable \"token\" or \"access_token\"");
        else
                *ret = xstrdup(t);
        json_decref(j);
        return r;
}

static char *token_url(struct registry_client *c, const char *realm, const char *service, const char *scope)
{
        struct buf b = BUF_INIT;
        char *e;
        char sep = strchr(realm, '?') ? '&' : '?';

        buf_puts(&b, realm);
        if (service && (e = curl_easy_escape(c->curl, service, 0))) {
                buf_printf(&b, "%cservice=%s", sep, e);
                curl_free(e);
                sep = '&';
        }
        if ((e = curl_easy_escape(c->curl, scope, 0))) {
                buf_printf(&b, "%cscope=%s", sep, e);
                curl_free(e);
        }
        return buf_detach(&b, NULL);
}

/* GET a token from the realm, retrying transient failures. */
static int fetch_token(struct registry_client *c, const char *realm, const char *service, const char *scope,
                       struct tess_error **err)
{
        _cleanup_free_ char *url = token_url(c, realm, service, scope);
        struct registry_buf_sink bs;
        struct registry_sink sink;
        int r;

        registry_buf_sink_init(&bs, TOKEN_ANSWER_MAX, "token answer", &sink);
        for (int attempt = 0;; attempt++) {
                struct registry_response resp = { 0 };
                _cleanup_(buf_release) struct buf body = BUF_INIT;
                _cleanup_free_ char *msg = NULL;
                bool transient;
                long status;

                r = registry_http_get(c, url, "application/json", NULL, c->username != NULL, c->timeout_s * 4, &sink,
                                      &resp, &body, NULL, &transient, err);
                status = resp.status;
                registry_response_release(&resp);
                if (r < 0 && transient && attempt < c->retries) {
                        *err = tess_error_free(*err);
                        registry_backoff(c, attempt);
                        continue;
                }
                if (r < 0)
                        break;
                if (status >= 200 && status < 300) {
                        free(c->bearer);
                        c->bearer = NULL;
                        r = token_from_answer(&bs.buf, &c->bearer, err);
                        break;
                }
                if ((status >= 500 || status == 429) && attempt < c->retries) {
                        registry_backoff(c, attempt);
                        continue;
                }
                msg = registry_error_message(status, body.data, body.len);
                if ((status == 401 || status == 403) && c->username)
                        r = tess_err(err, EACCES, "authentication failed for user '%s': %s", c->username, msg);
                else
                        r = tess_err(err, registry_status_errno(status), "%s", msg);
                break;
        }
        buf_release(&bs.buf);
        if (r < 0)
                return tess_err_wrap(err, "getting a token from '%s'", realm);
        return 0;
}

static int answer_bearer(struct registry_client *c, const struct auth_challenge *ch, const char *message,
                         struct tess_error **err)
{
        const char *realm = auth_challenge_param(ch, "realm");
        const char *scope = auth_challenge_param(ch, "scope");
        _cleanup_free_ char *own_scope = NULL;

        if (!realm || !*realm)
                return tess_err(err, EACCES, "%s: a Bearer challenge without a realm", message);
        /* the token request carries our credentials: never in clear from an https registry */
        if (strncmp(realm, "https://", 8) != 0 && (c->https || strncmp(realm, "http://", 7) != 0))
                return tess_err(err, EACCES, "%s: the token realm is not an https URL", message);
        if (!scope || !*scope)
                scope = own_scope = xasprintf("repository:%s:pull", c->repository);
        return fetch_token(c, realm, auth_challenge_param(ch, "service"), scope, err);
}

int registry_auth_challenge(struct registry_client *c, const char *www_auth, const char *message, int tries,
                            struct tess_error **err)
{
        _cleanup_(auth_challenges_release) struct auth_challenges chs = { 0 };
        const struct auth_challenge *ch;
        int r;

        if (tries > 1) {
                if (c->username)
                        return tess_err(err, EACCES, "authentication failed for user '%s': %s", c->username, message);
                return tess_err(err, EACCES, "%s: no credentials were given", message);
        }
        r = www_authenticate_parse(www_auth, strlen(www_auth), &chs, err);
        if (r < 0)
                return tess_err_wrap(err, "%s", message);
        ch = auth_challenges_find(&chs, "Bearer");
        if (ch)
                return answer_bearer(c, ch, message, err);
        ch = auth_challenges_find(&chs, "Basic");
        if (ch) {
                if (!c->username)
                        return tess_err(err, EACCES, "%s: the registry asks for a username and password", message);
                c->send_basic = true;
                return 0;
        }
        if (chs.n > 0)
                return tess_err(err, EACCES, "%s: unsupported authentication scheme '%.40s'", message, chs.v[0].scheme);
        return tess_err(err, EACCES, "%s: no WWW-Authenticate challenge", message);
}
