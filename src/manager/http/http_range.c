/* http_range.c - see http_range.h. */
#include "common/compat.h"

#include "manager/http/http_range.h"

/* Digits at *p (at least one) into *ret, advancing *p; -1 on overflow. */
static int digits(const char **p, uint64_t *ret)
{
        uint64_t v = 0;
        const char *s = *p;

        if (*s < '0' || *s > '9')
                return -1;
        for (; *s >= '0' && *s <= '9'; s++) {
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return -1;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *p = s;
        *ret = v;
        return 0;
}

static const char *skip_ws(const char *p)
{
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

enum http_range_result http_range_parse(const char *h, uint64_t size, uint64_t *start, uint64_t *len)
{
        uint64_t a = 0, b = 0;
        bool has_a = false, has_b = false;
        const char *p;

        if (!h)
                return HTTP_RANGE_NONE;
        p = skip_ws(h);
        if (strncasecmp(p, "bytes", 5) != 0)
                return HTTP_RANGE_NONE;
        p = skip_ws(p + 5);
        if (*p++ != '=')
                return HTTP_RANGE_NONE;
        p = skip_ws(p);
        if (*p >= '0' && *p <= '9') {
                if (digits(&p, &a) < 0)
                        return HTTP_RANGE_NONE;
                has_a = true;
        }
        if (*p++ != '-')
                return HTTP_RANGE_NONE;
        if (*p >= '0' && *p <= '9') {
                if (digits(&p, &b) < 0)
                        return HTTP_RANGE_NONE;
                has_b = true;
        }
        p = skip_ws(p);
        if (*p != '\0' || (!has_a && !has_b) || (has_a && has_b && b < a))
                return HTTP_RANGE_NONE; /* several ranges, or not a range at all */
        if (!has_a) {                   /* the last b bytes */
                if (b == 0 || size == 0)
                        return HTTP_RANGE_UNSATISFIABLE;
                *len = b < size ? b : size;
                *start = size - *len;
                return HTTP_RANGE_OK;
        }
        if (a >= size)
                return HTTP_RANGE_UNSATISFIABLE;
        if (!has_b || b >= size)
                b = size - 1;
        *start = a;
        *len = b - a + 1;
        return HTTP_RANGE_OK;
}

int http_parse_u64(const char *s, uint64_t *ret)
{
        const char *p = s;
        uint64_t v;

        if (!s || strlen(s) > 19 || digits(&p, &v) < 0 || *p != '\0' || v > INT64_MAX)
                return -EINVAL;
        *ret = v;
        return 0;
}

int http_chunk_range_parse(const char *h, uint64_t *ret_start, uint64_t *ret_end)
{
        char digits[2][24];
        const char *dash;
        size_t n;

        if (!h)
                return -EINVAL;
        if (strncmp(h, "bytes ", 6) == 0 || strncmp(h, "bytes=", 6) == 0)
                h += 6;
        dash = strchr(h, '-');
        if (!dash || (n = (size_t)(dash - h)) >= sizeof(digits[0]) || strlen(dash + 1) >= sizeof(digits[1]))
                return -EINVAL;
        memcpy(digits[0], h, n);
        digits[0][n] = '\0';
        snprintf(digits[1], sizeof(digits[1]), "%s", dash + 1);
        if (http_parse_u64(digits[0], ret_start) < 0 || http_parse_u64(digits[1], ret_end) < 0 ||
            *ret_end < *ret_start)
                return -EINVAL;
        return 0;
}
