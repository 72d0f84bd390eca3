/* www_authenticate.c - the WWW-Authenticate parser (see www_authenticate.h).
 *
 * One pass over the bytes with a cursor; each step reads one grammar item
 * (token, token68, quoted string) and reports the offset of what it could
 * not read.  A list item that starts with `token BWS "="` is one more
 * parameter of the current challenge; any other token starts a challenge. */
#include "common/compat.h"

#include <strings.h>

#include "registry/www_authenticate.h"

struct cursor {
        const char *start, *p, *end;
};

static bool is_tchar(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_token68_char(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("-._~+/", c));
}

static void skip_ows(struct cursor *c)
{
        while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
                c->p++;
}

static size_t token_len(const struct cursor *c, const char *at)
{
        const char *q = at;
        while (q < c->end && is_tchar((unsigned char)*q))
                q++;
        return (size_t)(q - at);
}

/* Does a parameter (`token BWS "=" BWS` then a value) start at c->p? */
static bool at_param(const struct cursor *c)
{
        const char *q = c->p + token_len(c, c->p);

        if (q == c->p)
                return false;
        while (q < c->end && (*q == ' ' || *q == '\t'))
                q++;
        if (q == c->end || *q != '=')
                return false;
        q++;
        while (q < c->end && (*q == ' ' || *q == '\t'))
                q++;
        return q < c->end && (*q == '"' || is_tchar((unsigned char)*q));
}

/* A token68 (with its '=' padding) followed only by OWS and ',' or the end. */
static size_t token68_len(const struct cursor *c)
{
        const char *q = c->p, *r;

        while (q < c->end && is_token68_char((unsigned char)*q))
                q++;
        if (q == c->p)
                return 0;
        while (q < c->end && *q == '=')
                q++;
        r = q;
        while (r < c->end && (*r == ' ' || *r == '\t'))
                r++;
        return r == c->end || *r == ',' ? (size_t)(q - c->p) : 0;
}

static int parse_error(const struct cursor *c, const char *what, struct tess_error **err)
{
        return tess_err(err, EINVAL, "WWW-Authenticate: %s at offset %zu", what, (size_t)(c->p - c->start));
}

/* quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE; c->p is at the quote. */
static int parse_quoted(struct cursor *c, char **ret, struct tess_error **err)
{
        _cleanup_free_ char *out = xmalloc((size_t)(c->end - c->p));
        size_t n = 0;

        c->p++;
        while (c->p < c->end && *c->p != '"') {
                unsigned char ch = (unsigned char)*c->p;
                if (ch == '\\') {
                        c->p++;
                        if (c->p == c->end)
                                break;
                        ch = (unsigned char)*c->p;
                }
                if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                        return parse_error(c, "control character in a quoted string", err);
                out[n++] = (char)ch;
                c->p++;
        }
        if (c->p == c->end)
                return parse_error(c, "unterminated quoted string", err);
        c->p++;
        out[n] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

static int parse_param(struct cursor *c, struct auth_challenge *ch, struct tess_error **err)
{
        _cleanup_free_ char *name = NULL, *value = NULL;
        size_t n = token_len(c, c->p);
        int r;

        if (ch->n_params >= WWW_AUTH_MAX_PARAMS)
                return parse_error(c, "too many parameters", err);
        name = xstrndup(c->p, n);
        for (char *q = name; *q; q++)
                if (*q >= 'A' && *q <= 'Z')
                        *q = (char)(*q - 'A' + 'a');
        if (auth_challenge_param(ch, name))
                return parse_error(c, "repeated parameter", err);
        c->p += n;
        skip_ows(c);
        c->p++; /* '=', checked by at_param() */
        skip_ows(c);
        if (*c->p == '"') {
                r = parse_quoted(c, &value, err);
                if (r < 0)
                        return r;
        } else {
                n = token_len(c, c->p);
                value = xstrndup(c->p, n);
                c->p += n;
        }
        ch->params = xrealloc(ch->params, (ch->n_params + 1) * sizeof(*ch->params));
        ch->params[ch->n_params++] = (struct auth_param){ TAKE_PTR(name), TAKE_PTR(value) };
        return 0;
}

/* After "scheme 1*SP": a token68, or parameters up to the next challenge. */
static int parse_credentials(struct cursor *c, struct auth_challenge *ch, struct tess_error **err)
{
        size_t n;
        int r;

        if (!at_param(c)) {
                n = token68_len(c);
                if (n > 0) {
                        ch->token68 = xstrndup(c->p, n);
                        c->p += n;
                }
                return 0;
        }
        for (;;) {
                r = parse_param(c, ch, err);
                if (r < 0)
                        return r;
                skip_ows(c);
                if (c->p == c->end)
                        return 0;
                if (*c->p != ',')
                        return parse_error(c, "expected ',' after a parameter", err);
                struct cursor next = *c;
                while (next.p < next.end && (*next.p == ',' || *next.p == ' ' || *next.p == '\t'))
                        next.p++;
                if (!at_param(&next))
                        return 0; /* the next challenge, or the end: c->p stays at the ',' */
                *c = next;
        }
}

int www_authenticate_parse(const char *p, size_t len, struct auth_challenges *ret, struct tess_error **err)
{
        struct cursor c = { p, p, p + len };
        struct auth_challenges out = { 0 };
        size_t n;
        int r;

        if (len > WWW_AUTH_MAX_LEN)
                return tess_err(err, EINVAL, "WWW-Authenticate: longer than %d bytes", WWW_AUTH_MAX_LEN);
        for (;;) {
                while (c.p < c.end && (*c.p == ',' || *c.p == ' ' || *c.p == '\t'))
                        c.p++;
                if (c.p == c.end)
                        break;
                n = token_len(&c, c.p);
                if (n == 0) {
                        r = parse_error(&c, "expected an authentication scheme", err);
                        goto fail;
                }
                if (out.n >= WWW_AUTH_MAX_CHALLENGES) {
                        r = parse_error(&c, "too many challenges", err);
                        goto fail;
                }
                out.v = xrealloc(out.v, (out.n + 1) * sizeof(*out.v));
                struct auth_challenge *ch = &out.v[out.n++];
                *ch = (struct auth_challenge){ .scheme = xstrndup(c.p, n) };
                c.p += n;
                if (c.p == c.end || *c.p == ',')
                        continue;
                if (*c.p != ' ') {
                        r = parse_error(&c, "expected a space after the scheme", err);
                        goto fail;
                }
                skip_ows(&c);
                r = parse_credentials(&c, ch, err);
                if (r < 0)
                        goto fail;
                skip_ows(&c);
                if (c.p < c.end && *c.p != ',') {
                        r = parse_error(&c, "unexpected character", err);
                        goto fail;
                }
        }
        *ret = out;
        return 0;
fail:
        auth_challenges_release(&out);
        return r;
}

void auth_challenges_release(struct auth_challenges *c)
{
        for (size_t i = 0; i < c->n; i++) {
                struct auth_challenge *ch = &c->v[i];
                for (size_t j = 0; j < ch->n_params; j++) {
                        free(ch->params[j].name);
                        free(ch->params[j].value);
                }
                free(ch->params);
                free(ch->scheme);
                free(ch->token68);
        }
        free(c->v);
        *c = (struct auth_challenges){ 0 };
}

const struct auth_challenge *auth_challenges_find(const struct auth_challenges *c, const char *scheme)
{
        for (size_t i = 0; i < c->n; i++)
                if (strcasecmp(c->v[i].scheme, scheme) == 0)
                        return &c->v[i];
        return NULL;
}

const char *auth_challenge_param(const struct auth_challenge *c, const char *name)
{
        for (size_t i = 0; i < c->n_params; i++)
                if (streq(c->params[i].name, name))
                        return c->params[i].value;
        return NULL;
}
