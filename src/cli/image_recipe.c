/* image_recipe.c - parsing the recipes of `tessera image build`; see
 * image_recipe.h. */
#include "common/compat.h"

#include <ctype.h>

#include "common/conf.h"
#include "cli/image_recipe.h"

/* Split on blanks into a NULL-terminated vector. */
static char **words(const char *v)
{
        size_t n = 0, cap = 4;
        char **w = xmalloc(cap * sizeof(*w));

        while (*v) {
                while (isspace((unsigned char)*v))
                        v++;
                if (!*v)
                        break;
                const char *e = v;
                while (*e && !isspace((unsigned char)*e))
                        e++;
                if (n + 2 > cap)
                        w = xrealloc(w, (cap *= 2) * sizeof(*w));
                w[n++] = xstrndup(v, (size_t)(e - v));
                v = e;
        }
        w[n] = NULL;
        return w;
}

static void words_free(char **w)
{
        for (char **p = w; p && *p; p++)
                free(*p);
        free(w);
}

static bool printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

/* Labels and variable names: [A-Za-z0-9_.-]+, and no '=' in a variable. */
static bool key_ok(const char *k)
{
        if (!*k)
                return false;
        for (; *k; k++)
                if (!isalnum((unsigned char)*k) && *k != '_' && *k != '.' && *k != '-')
                        return false;
        return true;
}

static int add_kv(struct recipe_kv **v, size_t *n, const char *key, const char *value, const char *what,
                  struct tess_error **err)
{
        for (size_t i = 0; i < *n; i++)
                if (streq((*v)[i].key, key))
                        return tess_err(err, EINVAL, "%s '%s' is set twice", what, key);
        *v = xrealloc(*v, (*n + 1) * sizeof(**v));
        (*v)[(*n)++] = (struct recipe_kv){ xstrdup(key), xstrdup(value) };
        return 0;
}

static int set_str(char **field, const char *key, const char *value, struct tess_error **err)
{
        if (*field)
                return tess_err(err, EINVAL, "'%s' is set twice", key);
        *field = xstrdup(value);
        return 0;
}

static int set_words(char ***field, const char *key, const char *value, struct tess_error **err)
{
        if (*field)
                return tess_err(err, EINVAL, "'%s' is set twice", key);
        *field = words(value);
        return 0;
}

/* A suite, variant, name or tag: [a-z0-9][a-z0-9._-]* (tags: any case). */
static bool token_ok(const char *s, bool upper)
{
        if (!isalnum((unsigned char)*s))
                return false;
        for (; *s; s++)
                if (!(isdigit((unsigned char)*s) || islower((unsigned char)*s) ||
                      (upper && isupper((unsigned char)*s)) || *s == '.' || *s == '_' || *s == '-'))
                        return false;
        return true;
}

static int set_key(struct recipe *r, const char *key, const char *value, struct tess_error **err)
{
        if (strncmp(key, "label.", 6) == 0) {
                if (!key_ok(key + 6))
                        return tess_err(err, EINVAL, "bad label name '%s'", key + 6);
                return add_kv(&r->labels, &r->n_labels, key + 6, value, "label", err);
        }
        if (strncmp(key, "env.", 4) == 0) {
                if (!key_ok(key + 4))
                        return tess_err(err, EINVAL, "bad variable name '%s'", key + 4);
                return add_kv(&r->env, &r->n_env, key + 4, value, "variable", err);
        }
        if (streq(key, "name") || streq(key, "suite") || streq(key, "variant")) {
                if (!token_ok(value, false))
                        return tess_err(err, EINVAL, "%s: '%s' is not a lowercase name", key, value);
                return set_str(streq(key, "name")    ? &r->name
                               : streq(key, "suite") ? &r->suite
                                                     : &r->variant,
                               key, value, err);
        }
        if (streq(key, "tag")) {
                if (!token_ok(value, true) || strlen(value) > 128)
                        return tess_err(err, EINVAL, "tag: '%s' is not a tag", value);
                return set_str(&r->tag, key, value, err);
        }
        if (streq(key, "mirror")) {
                if (strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0)
                        return tess_err(err, EINVAL, "mirror: '%s' is not an http(s) URL", value);
                return set_str(&r->mirror, key, value, err);
        }
        if (streq(key, "workdir")) {
                if (value[0] != '/')
                        return tess_err(err, EINVAL, "workdir: '%s' is not an absolute path", value);
                return set_str(&r->workdir, key, value, err);
        }
        if (streq(key, "packages")) {
                int rc = set_words(&r->packages, key, value, err);
                for (char **p = r->packages; rc == 0 && *p; p++)
                        if (!token_ok(*p, false) || strchr(*p, ','))
                                rc = tess_err(err, EINVAL, "packages: '%s' is not a package name", *p);
                return rc;
        }
        if (streq(key, "cmd"))
                return set_words(&r->cmd, key, value, err);
        if (streq(key, "entrypoint"))
                return set_words(&r->entrypoint, key, value, err);
        return tess_err(err, EINVAL, "unknown key '%s'", key);
}

static int parse_line(struct recipe *r, char *line, struct tess_error **err)
{
        char *key, *val;
        int sr = conf_split_line(line, &key, &val);

        if (sr == 0)
                return 0;
        if (sr < 0)
                return tess_err(err, EINVAL, "expected 'key = value'");
        if (strlen(key) > RECIPE_KEY_MAX || strlen(val) > RECIPE_VALUE_MAX)
                return tess_err(err, EINVAL, "key or value too long");
        if (!printable(val))
                return tess_err(err, EINVAL, "a control character in the value of '%.40s'", key);
        return set_key(r, key, val, err);
}

int recipe_parse(const char *text, size_t len, const char *file, struct recipe *ret, struct tess_error **err)
{
        _cleanup_free_ char *copy = xstrndup(text, len);
        struct recipe r = { 0 };
        int lineno = 0, rc = 0;

        if (strlen(copy) != len)
                return tess_err(err, EINVAL, "%s: contains a NUL byte", file);
        for (char *line = copy, *next; line && rc == 0; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (++lineno > RECIPE_LINES_MAX)
                        rc = tess_err(err, EINVAL, "%s: more than %d lines", file, RECIPE_LINES_MAX);
                else if (parse_line(&r, line, err) < 0)
                        rc = tess_err_wrap(err, "%s:%d", file, lineno);
        }
        if (rc == 0 && (!r.name || !r.suite))
                rc = tess_err(err, EINVAL, "%s: 'name' and 'suite' are required", file);
        if (rc < 0) {
                recipe_release(&r);
                return rc;
        }
        if (!r.tag)
                r.tag = xstrdup("latest");
        if (!r.variant)
                r.variant = xstrdup("minbase");
        if (!r.workdir)
                r.workdir = xstrdup("/home/work");
        if (!r.packages)
                r.packages = words("");
        if (!r.cmd)
                r.cmd = words("");
        if (!r.entrypoint)
                r.entrypoint = words("");
        *ret = r;
        return 0;
}

static void kv_free(struct recipe_kv *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].key);
                free(v[i].value);
        }
        free(v);
}

void recipe_release(struct recipe *r)
{
        free(r->name);
        free(r->tag);
        free(r->suite);
        free(r->variant);
        free(r->mirror);
        free(r->workdir);
        words_free(r->packages);
        words_free(r->cmd);
        words_free(r->entrypoint);
        kv_free(r->env, r->n_env);
        kv_free(r->labels, r->n_labels);
        *r = (struct recipe){ 0 };
}

static int kv_cmp(const void *a, const void *b)
{
        return strcmp(((const struct recipe_kv *)a)->key, ((const struct recipe_kv *)b)->key);
}

static void print_words(struct buf *out, const char *key, char **w)
{
        if (!w || !*w)
                return;
        /* quoted: a word may start with '#' */
        buf_printf(out, "%s = \"", key);
        for (char **p = w; *p; p++)
                buf_printf(out, "%s%s", p == w ? "" : " ", *p);
        buf_puts(out, "\"\n");
}

static void print_kvs(struct buf *out, const char *prefix, const struct recipe_kv *v, size_t n)
{
        struct recipe_kv *s = n ? xmalloc(n * sizeof(*s)) : NULL;

        if (n)
                memcpy(s, v, n * sizeof(*s));
        if (n)
                qsort(s, n, sizeof(*s), kv_cmp);
        for (size_t i = 0; i < n; i++)
                buf_printf(out, "%s%s = \"%s\"\n", prefix, s[i].key, s[i].value);
        free(s);
}

void recipe_print(const struct recipe *r, struct buf *out)
{
        buf_printf(out, "name = %s\ntag = %s\nsuite = %s\nvariant = %s\n", r->name, r->tag, r->suite, r->variant);
        if (r->mirror)
                buf_printf(out, "mirror = \"%s\"\n", r->mirror);
        buf_printf(out, "workdir = \"%s\"\n", r->workdir);
        print_words(out, "packages", r->packages);
        print_words(out, "entrypoint", r->entrypoint);
        print_words(out, "cmd", r->cmd);
        print_kvs(out, "env.", r->env, r->n_env);
        print_kvs(out, "label.", r->labels, r->n_labels);
}
