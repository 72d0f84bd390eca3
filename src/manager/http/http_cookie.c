/* http_cookie.c - see http_cookie.h. */
#include "common/compat.h"

#include "manager/http/http_cookie.h"

/* cookie-octet: printable US-ASCII but space, '"', ',', ';' and '\' */
static bool cookie_octet(unsigned char ch)
{
        return ch > 0x20 && ch < 0x7f && ch != '"' && ch != ',' && ch != ';' && ch != '\\';
}

int http_cookie_get(const char *header, const char *name, char *out, size_t outlen)
{
        size_t nlen = strlen(name);

        for (const char *p = header; p && *p;) {
                while (*p == ' ' || *p == '\t' || *p == ';')
                        p++;
                const char *end = strchr(p, ';');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
                        const char *v = p + nlen + 1;
                        size_t vlen = len - nlen - 1;
                        while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                                vlen--;
                        if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"')
                                v++, vlen -= 2;
                        if (vlen >= outlen)
                                return -EINVAL;
                        for (size_t i = 0; i < vlen; i++)
                                if (!cookie_octet((unsigned char)v[i]))
                                        return -EINVAL;
                        memcpy(out, v, vlen);
                        out[vlen] = '\0';
                        return 0;
                }
                p += len;
        }
        return -ENOENT;
}
