/* config.c - the hook's limits.  Two sources, one format of values:
 *
 *   file  /etc/tessera/fgpu.conf, written by the agent and mounted
 *         read-only: lines `key = value`, `#` comments; keys memory_limit,
 *         memory_limit_<i>, sm_limit, sm_limit_<i>, region.  When it exists
 *         it is the only source of limits and its region wins, whatever
 *         the environment says: a user cannot raise their own limit, point
 *         the hook at another file or leave the container's region.
 *         Without it, TESSERA_FGPU_CONFIG may name a file of the same form
 *         (standalone use, tests).
 *   env   CUDA_DEVICE_MEMORY_LIMIT[_<i>], CUDA_DEVICE_SM_LIMIT[_<i>]
 *         (HAMi-core's names), for standalone use when there is no file.
 *
 * Sizes are bytes or k/m/g/t (binary); SM limits are 1-100 percent.  A value
 * that does not parse, an unknown key or a device index out of range makes
 * the whole configuration closed: allocations fail, nothing is unlimited.
 * TESSERA_FGPU_REGION names the shared region unless a file names one. */
#include "common/compat.h"

#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "fgpu/fgpu.h"

#define DEFAULT_CONFIG "/etc/tessera/fgpu.conf"
#define CONFIG_MAX     (64 * 1024)

bool fgpu_parse_size(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        while (isspace((unsigned char)*s))
                s++;
        if (!isdigit((unsigned char)*s))
                return false;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return false;
        unsigned shift = 0;
        switch (tolower((unsigned char)*end)) {
        case 'k':
                shift = 10;
                break;
        case 'm':
                shift = 20;
                break;
        case 'g':
                shift = 30;
                break;
        case 't':
                shift = 40;
                break;
        default:
                if (*end && !isspace((unsigned char)*end))
                        return false;
        }
        if (shift) {
                end++;
                if (tolower((unsigned char)*end) == 'i')
                        end++;
                if (tolower((unsigned char)*end) == 'b')
                        end++;
        }
        while (isspace((unsigned char)*end))
                end++;
        if (*end || (shift && v > (UINT64_MAX >> shift)))
                return false;
        *ret = (uint64_t)v << shift;
        return true;
}

static void close_config(struct fgpu_config *c, const char *what, const char *value)
{
        if (!c->closed)
                snprintf(c->error, sizeof(c->error), "%s: '%.64s' is not valid", what, value);
        c->closed = true;
}

/* "<base>" or "<base>_<i>": -1 for all devices, the index, or -2 if key is not of base. */
static int key_device(const char *key, const char *base)
{
        size_t n = strlen(base);
        char *end;

        if (strncmp(key, base, n) != 0)
                return -2;
        if (key[n] == '\0')
                return -1;
        if (key[n] != '_' || !isdigit((unsigned char)key[n + 1]))
                return -2;
        long i = strtol(key + n + 1, &end, 10);
        if (*end || i < 0 || i >= FGPU_MAX_DEVICES)
                return -3;
        return (int)i;
}

/* One limit; all: the value for every device unless a device has its own. */
struct pending {
        bool mem_all_set, sm_all_set;
        uint64_t mem_all;
        unsigned sm_all;
        bool mem_set[FGPU_MAX_DEVICES], sm_set[FGPU_MAX_DEVICES];
};

static void set_value(struct fgpu_config *c, struct pending *p, const char *key, const char *value,
                      const char *mem_base, const char *sm_base)
{
        int d;
        uint64_t v;

        if ((d = key_device(key, mem_base)) != -2) {
                if (d == -3 || !fgpu_parse_size(value, &v))
                        return close_config(c, key, value);
                if (d == -1) {
                        p->mem_all = v;
                        p->mem_all_set = true;
                } else {
                        c->memory[d] = v;
                        p->mem_set[d] = true;
                }
                if (v == 0) /* a limit of nothing: nothing may be allocated, which is not "no limit" */
                        return close_config(c, key, value);
                return;
        }
        if ((d = key_device(key, sm_base)) != -2) {
                char *end;
                long pct = strtol(value, &end, 10);
                while (isspace((unsigned char)*end))
                        end++;
                if (d == -3 || *end || end == value || pct < 1 || pct > 100)
                        return close_config(c, key, value);
                if (d == -1) {
                        p->sm_all = (unsigned)pct;
                        p->sm_all_set = true;
                } else {
                        c->sm[d] = (unsigned)pct;
                        p->sm_set[d] = true;
                }
                return;
        }
        close_config(c, "unknown key", key);
}

static void finish(struct fgpu_config *c, const struct pending *p)
{
        for (int d = 0; d < FGPU_MAX_DEVICES; d++) {
                if (!p->mem_set[d] && p->mem_all_set)
                        c->memory[d] = p->mem_all;
                if (!p->sm_set[d] && p->sm_all_set)
                        c->sm[d] = p->sm_all;
                c->memory_limited = c->memory_limited || c->memory[d] > 0;
                c->sm_limited = c->sm_limited || (c->sm[d] > 0 && c->sm[d] < 100);
        }
}

static char *trim(char *s)
{
        while (isspace((unsigned char)*s))
                s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
                *--e = '\0';
        if (e - s >= 2 && (*s == '"' || *s == '\'') && e[-1] == *s) {
                e[-1] = '\0';
                s++;
        }
        return s;
}

void fgpu_config_parse_file(const char *text, size_t len, struct fgpu_config *c)
{
        struct pending p = { 0 };
        char line[1024];
        size_t i = 0;

        memset(c, 0, sizeof(*c));
        while (i < len) {
                size_t n = 0;
                while (i < len && text[i] != '\n') {
                        if (n + 1 >= sizeof(line) || text[i] == '\0') {
                                close_config(c, "line", "too long or holds a NUL byte");
                                return finish(c, &p);
                        }
                        line[n++] = text[i++];
                }
                i++;
                line[n] = '\0';
                char *hash = strchr(line, '#');
                if (hash)
                        *hash = '\0';
                char *s = trim(line);
                if (!*s)
                        continue;
                char *eq = strchr(s, '=');
                if (!eq) {
                        close_config(c, "line without '='", s);
                        continue;
                }
                *eq = '\0';
                char *key = trim(s), *value = trim(eq + 1);
                if (streq(key, "region")) {
                        if (!*value || strlen(value) >= sizeof(c->region))
                                close_config(c, "region", value);
                        else
                                snprintf(c->region, sizeof(c->region), "%s", value);
                        continue;
                }
                set_value(c, &p, key, value, "memory_limit", "sm_limit");
        }
        finish(c, &p);
}

void fgpu_config_from_env(const char *(*get)(const char *name), struct fgpu_config *c)
{
        static const char *const bases[] = { "CUDA_DEVICE_MEMORY_LIMIT", "CUDA_DEVICE_SM_LIMIT" };
        struct pending p = { 0 };
        char key[64];

        memset(c, 0, sizeof(*c));
        for (size_t b = 0; b < ARRAY_SIZE(bases); b++) {
                for (int d = -1; d < FGPU_MAX_DEVICES; d++) {
                        if (d < 0)
                                snprintf(key, sizeof(key), "%s", bases[b]);
                        else
                                snprintf(key, sizeof(key), "%s_%d", bases[b], d);
                        const char *v = get(key);
                        if (v && *v)
                                set_value(c, &p, key, v, bases[0], bases[1]);
                }
        }
        finish(c, &p);
}

static const char *env_get(const char *name)
{
        return getenv(name);
}

void fgpu_config_load(struct fgpu_config *c)
{
        const char *path = getenv("TESSERA_FGPU_CONFIG");
        const char *region = getenv("TESSERA_FGPU_REGION");
        struct stat st;

        /* the agent's file, when there is one, is not the user's choice */
        if (!path || !*path || lstat(DEFAULT_CONFIG, &st) == 0 || errno != ENOENT)
                path = DEFAULT_CONFIG;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
                fgpu_config_from_env(env_get, c);
        } else if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX) {
                memset(c, 0, sizeof(*c));
                close_config(c, "config file", path);
        } else {
                char *text = malloc((size_t)st.st_size + 1);
                ssize_t n = text ? read(fd, text, (size_t)st.st_size) : -1;
                if (n < 0) {
                        memset(c, 0, sizeof(*c));
                        close_config(c, "config file", path);
                } else {
                        fgpu_config_parse_file(text, (size_t)n, c);
                }
                free(text);
        }
        if (fd >= 0)
                close(fd);
        if (!c->region[0] && region && *region && strlen(region) < sizeof(c->region))
                snprintf(c->region, sizeof(c->region), "%s", region);
}
