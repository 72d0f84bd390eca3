/* cgroup_stats.c - see cgroup_stats.h.  Missing counter files read as 0
 * (a controller not mounted, a kernel without memory.peak); a missing
 * cgroup is ENOENT. */
#include "common/compat.h"

#include <inttypes.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "agent/container/cgroup_stats.h"
#include "agent/container/container.h"
#include "common/fs.h"

#define CGROUP_FILE_MAX (1 << 20)

enum cgroup_mode cgroup_mode_detect(const char *root)
{
        struct statfs sf;

        if (statfs(root, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
                return CGROUP_V2;
        return CGROUP_V1;
}

static bool is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The contents of dir/name, or NULL when it cannot be read. */
static char *read_text(const char *dir, const char *name)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
        char *data = NULL;
        size_t len;

        if (fs_read_file(path, CGROUP_FILE_MAX, &data, &len, NULL) < 0)
                return NULL;
        return data;
}

static uint64_t read_u64(const char *dir, const char *name)
{
        _cleanup_free_ char *t = read_text(dir, name);
        return t ? strtoull(t, NULL, 10) : 0;
}

/* The value of "key N" in a flat-keyed file (memory.stat, cpu.stat, ...). */
static uint64_t read_keyed(const char *dir, const char *name, const char *key)
{
        _cleanup_free_ char *t = read_text(dir, name);
        size_t n = strlen(key);

        for (char *line = t; line && *line;) {
                if (strncmp(line, key, n) == 0 && line[n] == ' ')
                        return strtoull(line + n + 1, NULL, 10);
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return 0;
}

/* v1 blkio.throttle.io_service_bytes: "8:0 Read 4096" lines, and a Total. */
static void parse_blkio(const char *t, uint64_t *rd, uint64_t *wr)
{
        for (const char *line = t; line && *line;) {
                char op[16];
                unsigned long long v;
                if (sscanf(line, "%*u:%*u %15s %llu", op, &v) == 2) {
                        if (streq(op, "Read"))
                                *rd += v;
                        else if (streq(op, "Write"))
                                *wr += v;
                }
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
}

/* v2 io.stat: "8:0 rbytes=N wbytes=N rios=N ..." lines. */
static void parse_io_stat(const char *t, uint64_t *rd, uint64_t *wr)
{
        for (const char *line = t; line && *line;) {
                const char *end = strchr(line, '\n');
                for (const char *p = line; p && (!end || p < end); p = strchr(p + 1, ' ')) {
                        const char *f = *p == ' ' ? p + 1 : p;
                        if (strncmp(f, "rbytes=", 7) == 0)
                                *rd += strtoull(f + 7, NULL, 10);
                        else if (strncmp(f, "wbytes=", 7) == 0)
                                *wr += strtoull(f + 7, NULL, 10);
                }
                line = end ? end + 1 : NULL;
        }
}

static int read_v1(const char *root, const char *path, struct container_stats *st, struct tess_error **err)
{
        _cleanup_free_ char *mem = xasprintf("%s/memory%s", root, path);
        _cleanup_free_ char *cpu = xasprintf("%s/cpuacct%s", root, path);
        _cleanup_free_ char *pids = xasprintf("%s/pids%s", root, path);
        _cleanup_free_ char *blkio = xasprintf("%s/blkio%s", root, path);
        _cleanup_free_ char *io = NULL;

        if (!is_dir(mem))
                return tess_err(err, ENOENT, "no cgroup '%s'", mem);
        if (!is_dir(cpu)) {
                free(cpu);
                cpu = xasprintf("%s/cpu,cpuacct%s", root, path);
        }
        st->cpu_usage_ns = read_u64(cpu, "cpuacct.usage");
        st->mem_usage_bytes = read_u64(mem, "memory.usage_in_bytes");
        st->mem_peak_bytes = read_u64(mem, "memory.max_usage_in_bytes");
        st->mem_cache_bytes = read_keyed(mem, "memory.stat", "total_cache");
        st->pids = read_u64(pids, "pids.current");
        io = read_text(blkio, "blkio.throttle.io_service_bytes");
        parse_blkio(io, &st->io_read_bytes, &st->io_write_bytes);
        return 0;
}

static int read_v2(const char *root, const char *path, struct container_stats *st, struct tess_error **err)
{
        _cleanup_free_ char *dir = xasprintf("%s%s", root, path);
        _cleanup_free_ char *io = NULL;

        if (!is_dir(dir))
                return tess_err(err, ENOENT, "no cgroup '%s'", dir);
        st->cpu_usage_ns = read_keyed(dir, "cpu.stat", "usage_usec") * 1000;
        st->mem_usage_bytes = read_u64(dir, "memory.current");
        st->mem_peak_bytes = read_u64(dir, "memory.peak");
        st->mem_cache_bytes = read_keyed(dir, "memory.stat", "file");
        st->pids = read_u64(dir, "pids.current");
        io = read_text(dir, "io.stat");
        parse_io_stat(io, &st->io_read_bytes, &st->io_write_bytes);
        return 0;
}

int cgroup_stats_read(const char *root, enum cgroup_mode mode, const char *path, struct container_stats *ret,
                      struct tess_error **err)
{
        ret->cpu_usage_ns = ret->mem_usage_bytes = ret->mem_peak_bytes = ret->mem_cache_bytes = 0;
        ret->pids = ret->io_read_bytes = ret->io_write_bytes = 0;
        return mode == CGROUP_V2 ? read_v2(root, path, ret, err) : read_v1(root, path, ret, err);
}

int cgroup_oom_kills(const char *root, enum cgroup_mode mode, const char *path, uint64_t *ret,
                     struct tess_error **err)
{
        _cleanup_free_ char *dir = mode == CGROUP_V2 ? xasprintf("%s%s", root, path)
                                                     : xasprintf("%s/memory%s", root, path);

        if (!is_dir(dir))
                return tess_err(err, ENOENT, "no cgroup '%s'", dir);
        *ret = read_keyed(dir, mode == CGROUP_V2 ? "memory.events" : "memory.oom_control", "oom_kill");
        return 0;
}

int cgroup_pids_read(const char *root, enum cgroup_mode mode, const char *path, pid_t **ret, size_t *ret_n,
                     struct tess_error **err)
{
        _cleanup_free_ char *dir = mode == CGROUP_V2 ? xasprintf("%s%s", root, path)
                                                     : xasprintf("%s/pids%s", root, path);
        _cleanup_free_ char *t = NULL;
        pid_t *pids = NULL;
        size_t n = 0, cap = 0;

        if (!is_dir(dir))
                return tess_err(err, ENOENT, "no cgroup '%s'", dir);
        t = read_text(dir, "cgroup.procs");
        for (char *p = t, *end; p && *p; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p)
                        break;
                if (v > 0) {
                        if (n == cap)
                                pids = xrealloc(pids, (cap = cap ? 2 * cap : 16) * sizeof(*pids));
                        pids[n++] = (pid_t)v;
                }
        }
        *ret = pids;
        *ret_n = n;
        return 0;
}

bool cgroup_swap_limit_supported(const char *root, enum cgroup_mode mode)
{
        _cleanup_free_ char *path = NULL;

        if (mode == CGROUP_V2)
                return true;
        path = xasprintf("%s/memory/memory.memsw.limit_in_bytes", root);
        return access(path, F_OK) == 0;
}

int net_dev_read(const char *path, uint64_t *ret_rx, uint64_t *ret_tx, struct tess_error **err)
{
        _cleanup_free_ char *t = NULL;
        uint64_t rx = 0, tx = 0;
        size_t len;
        int r;

        r = fs_read_file(path, CGROUP_FILE_MAX, &t, &len, err);
        if (r < 0)
                return r;
        /* two header lines, then "  eth0: rx_bytes rx_packets ... (8 rx fields) tx_bytes ..." */
        for (char *line = t; line && *line;) {
                char *colon = strchr(line, ':'), *end = strchr(line, '\n');
                if (colon && (!end || colon < end)) {
                        char *name = line;
                        unsigned long long v[9];
                        while (*name == ' ')
                                name++;
                        if (!(colon - name == 2 && strncmp(name, "lo", 2) == 0) &&
                            sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9) {
                                rx += v[0];
                                tx += v[8];
                        }
                }
                line = end ? end + 1 : NULL;
        }
        *ret_rx = rx;
        *ret_tx = tx;
        return 0;
}
