/* http_head.c - see http_head.h. */
#include "common/compat.h"

#include <ctype.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/http_head.h"
#include "common/timeutil.h"

int http_head_read(int fd, int timeout_ms, struct buf *in, struct tess_error **err)
{
        int64_t deadline = monotonic_usec() + (int64_t)timeout_ms * USEC_PER_MSEC;
        const char *end;

        while (!(end = in->len ? memmem(in->data, in->len, "\r\n\r\n", 4) : NULL)) {
                int64_t left = deadline - monotonic_usec();
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char chunk[4096];

                if (in->len > HTTP_HEAD_MAX)
                        return tess_err(err, E2BIG, "the answer's head is longer than %d bytes", HTTP_HEAD_MAX);
                if (left <= 0)
                        return tess_err(err, ETIMEDOUT, "no answer within %d ms", timeout_ms);
                if (poll(&p, 1, (int)(left / USEC_PER_MSEC) + 1) <= 0)
                        continue;
                ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n <= 0)
                        return tess_err(err, ECONNRESET, "the connection closed before the answer's head ended");
                buf_append(in, chunk, (size_t)n);
        }
        return (int)(end - in->data) + 4;
}

/* A token character (RFC 9110 §5.6.2). */
static bool tchar(char c)
{
        return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static struct str trimmed(const char *p, size_t n)
{
        while (n > 0 && (*p == ' ' || *p == '\t'))
                p++, n--;
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
        return (struct str){ p, n };
}

/* "HTTP/1.x NNN reason" */
static int parse_status(const char *p, size_t n, struct http_head *h, struct tess_error **err)
{
        if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)p[7]) || p[8] != ' ' ||
            !isdigit((unsigned char)p[9]) || !isdigit((unsigned char)p[10]) || !isdigit((unsigned char)p[11]) ||
            (n > 12 && p[12] != ' '))
                return tess_err(err, EINVAL, "'%.*s' is not an HTTP/1.x status line", (int)(n > 40 ? 40 : n), p);
        h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
        if (h->status < 100 || h->status > 599)
                return tess_err(err, EINVAL, "status %d is not 100-599", h->status);
        h->reason = n > 13 ? (struct str){ p + 13, n - 13 } : (struct str){ "", 0 };
        return 0;
}

static int parse_field(const char *p, size_t n, struct http_head *h, struct tess_error **err)
{
        const char *colon = memchr(p, ':', n);
        size_t nlen = colon ? (size_t)(colon - p) : 0;

        if (n > 0 && (p[0] == ' ' || p[0] == '\t'))
                return tess_err(err, EINVAL, "folded header lines are not accepted");
        if (nlen == 0)
                return tess_err(err, EINVAL, "'%.*s' is not a header field", (int)(n > 40 ? 40 : n), p);
        for (size_t i = 0; i < nlen; i++)
                if (!tchar(p[i]))
                        return tess_err(err, EINVAL, "a header name holds a character it may not");
        for (size_t i = nlen + 1; i < n; i++)
                if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
                        return tess_err(err, EINVAL, "a header value holds a control character");
        if (h->nfields == HTTP_HEAD_FIELDS_MAX)
                return tess_err(err, EINVAL, "more than %d header fields", HTTP_HEAD_FIELDS_MAX);
        h->fields[h->nfields++] = (struct http_head_field){ { p, nlen }, trimmed(colon + 1, n - nlen - 1) };
        return 0;
}

int http_head_parse(const char *p, size_t len, struct http_head *ret, struct tess_error **err)
{
        struct http_head h = { .nfields = 0 };
        bool first = true;

        if (len < 4 || memcmp(p + len - 4, "\r\n\r\n", 4) != 0)
                return tess_err(err, EINVAL, "the head does not end with an empty line");
        for (size_t off = 0; off < len - 2;) {
                const char *eol = memmem(p + off, len - off, "\r\n", 2);
                size_t n = (size_t)(eol - (p + off));
                if (memchr(p + off, '\0', n) || memchr(p + off, '\n', n) || memchr(p + off, '\r', n))
                        return tess_err(err, EINVAL, "a bare CR, LF or NUL in the head");
                int r = first ? parse_status(p + off, n, &h, err) : parse_field(p + off, n, &h, err);
                if (r < 0)
                        return r;
                first = false;
                off += n + 2;
        }
        *ret = h;
        return 0;
}

const struct str *http_head_get(const struct http_head *h, const char *name)
{
        size_t n = strlen(name);

        for (int i = 0; i < h->nfields; i++)
                if (h->fields[i].name.len == n && strncasecmp(h->fields[i].name.p, name, n) == 0)
                        return &h->fields[i].value;
        return NULL;
}
