/* conf.c - see conf.h. */
#include "common/compat.h"

#include <ctype.h>
#include <inttypes.h>

#include "common/conf.h"
#include "common/timeutil.h"

static const struct conf_opt *find(const struct conf_opt *opts, const char *key)
{
        for (; opts->name; opts++)
                if (streq(opts->name, key))
                        return opts;
        return NULL;
}

static int parse_u64(const char *v, uint64_t *ret)
{
        char *end;
        if (!isdigit((unsigned char)*v))
                return -EINVAL;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || *end)
                return -EINVAL;
        *ret = x;
        return 0;
}

static int parse_size(const char *v, uint64_t *ret)
{
        char *end;
        if (!isdigit((unsigned char)*v))
                return -EINVAL;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        int shift = 0;
        if (errno)
                return -EINVAL;
        switch (tolower((unsigned char)*end)) {
        case '\0': break;
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        default: return -EINVAL;
        }
        if (*end && end[1] && strcasecmp(end + 1, "b") && strcasecmp(end + 1, "ib"))
                return -EINVAL;
        if (shift && x > (UINT64_MAX >> shift))
                return -EINVAL;
        *ret = x << shift;
        return 0;
}

int conf_set(const struct conf_opt *opts, void *out, const char *key, const char *value, struct tess_error **err)
{
        const struct conf_opt *o = find(opts, key);
        char *field;
        uint64_t u;
        int64_t us;

        if (!o)
                return tess_err(err, EINVAL, "%s: unknown option", key);
        field = (char *)out + o->offset;
        switch (o->type) {
        case CONF_T_STR:
                free(*(char **)field);
                *(char **)field = xstrdup(value);
                return 0;
        case CONF_T_U64:
                if (parse_u64(value, &u) < 0)
                        return tess_err(err, EINVAL, "%s: '%.64s' is not a non-negative integer", key, value);
                if ((o->min || o->max) && (u < o->min || u > o->max))
                        return tess_err(err, EINVAL, "%s: %" PRIu64 " is out of range [%" PRIu64 ", %" PRIu64 "]",
                                        key, u, o->min, o->max);
                *(uint64_t *)field = u;
                return 0;
        case CONF_T_SIZE:
                if (parse_size(value, &u) < 0)
                        return tess_err(err, EINVAL, "%s: '%.64s' is not a size (like 4m)", key, value);
                if ((o->min || o->max) && (u < o->min || u > o->max))
                        return tess_err(err, EINVAL, "%s: %" PRIu64 " is out of range", key, u);
                *(uint64_t *)field = u;
                return 0;
        case CONF_T_BOOL:
                if (streq(value, "true") || streq(value, "yes") || streq(value, "1") || streq(value, "on"))
                        *(bool *)field = true;
                else if (streq(value, "false") || streq(value, "no") || streq(value, "0") || streq(value, "off"))
                        *(bool *)field = false;
                else
                        return tess_err(err, EINVAL, "%s: '%.64s' is not a boolean", key, value);
                return 0;
        case CONF_T_USEC:
                if (duration_parse(value, &us) < 0)
                        return tess_err(err, EINVAL, "%s: '%.64s' is not a duration (like 30s)", key, value);
                *(int64_t *)field = us;
                return 0;
        }
        return tess_err(err, EINVAL, "%s: bad option type", key);
}

int conf_defaults(const struct conf_opt *opts, void *out, struct tess_error **err)
{
        for (const struct conf_opt *o = opts; o->name; o++) {
                if (!o->def) {
                        if (o->type == CONF_T_STR)
                                *(char **)((char *)out + o->offset) = NULL;
                        continue;
                }
                int r = conf_set(opts, out, o->name, o->def, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static char *trim(char *s)
{
        while (isspace((unsigned char)*s))
                s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                s[--n] = '\0';
        return s;
}

int conf_parse(const struct conf_opt *opts, void *out, const char *name, const char *text, size_t len,
               struct tess_error **err)
{
        _cleanup_free_ char *copy = xstrndup(text, len);
        int lineno = 0;

        if (strlen(copy) != len)
                return tess_err(err, EINVAL, "%s: contains a NUL byte", name);
        char *line = copy, *next;
        for (; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                lineno++;
                char *key, *val;
                int r = conf_split_line(line, &key, &val);
                if (r == 0)
                        continue;
                if (r < 0)
                        return tess_err(err, EINVAL, "%s:%d: expected 'key = value'", name, lineno);
                r = conf_set(opts, out, key, val, err);
                if (r < 0)
                        return tess_err_wrap(err, "%s:%d", name, lineno);
        }
        return 0;
}

int conf_split_line(char *line, char **ret_key, char **ret_val)
{
        char *s = trim(line), *eq;

        if (!*s || *s == '#')
                return 0;
        eq = strchr(s, '=');
        if (!eq)
                return -EINVAL;
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        size_t vl = strlen(val);
        if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
                val[vl - 1] = '\0';
                val++;
        } else {
                char *hash = strstr(val, " #");
                if (hash) {
                        *hash = '\0';
                        val = trim(val);
                }
        }
        *ret_key = key;
        *ret_val = val;
        return 1;
}

int conf_load_file(const struct conf_opt *opts, void *out, const char *path, struct tess_error **err)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        struct buf b = BUF_INIT;
        char tmp[4096];
        size_t n;
        int r;

        if (!f)
                return tess_err(err, errno, "opening config '%s': %s", path, strerror(errno));
        while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
                buf_append(&b, tmp, n);
                if (b.len > 1 << 20) {
                        buf_release(&b);
                        return tess_err(err, EFBIG, "config '%s' is larger than 1 MiB", path);
                }
        }
        r = conf_parse(opts, out, path, b.data, b.len, err);
        buf_release(&b);
        return r;
}

void conf_release(const struct conf_opt *opts, void *out)
{
        for (const struct conf_opt *o = opts; o->name; o++) {
                if (o->type == CONF_T_STR) {
                        char **p = (char **)((char *)out + o->offset);
                        free(*p);
                        *p = NULL;
                }
        }
}

void conf_print(const struct conf_opt *opts, const void *in, struct buf *out)
{
        for (const struct conf_opt *o = opts; o->name; o++) {
                const char *field = (const char *)in + o->offset;
                if (o->help)
                        buf_printf(out, "# %s\n", o->help);
                switch (o->type) {
                case CONF_T_STR: {
                        const char *s = *(char *const *)field;
                        buf_printf(out, "%s = \"%s\"\n", o->name, s ? s : "");
                        break;
                }
                case CONF_T_U64:
                case CONF_T_SIZE: buf_printf(out, "%s = %" PRIu64 "\n", o->name, *(const uint64_t *)field); break;
                case CONF_T_BOOL: buf_printf(out, "%s = %s\n", o->name, *(const bool *)field ? "true" : "false"); break;
                case CONF_T_USEC:
                        if (*(const int64_t *)field % USEC_PER_SEC)
                                buf_printf(out, "%s = %lld.%06llds\n", o->name,
                                           (long long)(*(const int64_t *)field / USEC_PER_SEC),
                                           (long long)(*(const int64_t *)field % USEC_PER_SEC));
                        else
                                buf_printf(out, "%s = %llds\n", o->name,
                                           (long long)(*(const int64_t *)field / USEC_PER_SEC));
                        break;
                }
        }
}
