/* trace.c - the simulator's CSV trace format: read and write.
 *
 *     # comment
 *     arrival,duration,user,project,cpu,mem,gpu,nodes,priority,id
 *     0,3600,alice,vision,4,16g,0.5,1,0,train-1
 *
 * The header names the columns, in any order; arrival, duration and user
 * are required, the others have defaults (the `columns[]` table below).
 * docs/sim.md is the user's description; keep the two in step. */
#include "common/compat.h"

#include <inttypes.h>

#include "common/fs.h"
#include "common/slots.h"
#include "sim/sim-internal.h"

#define TRACE_FILE_MAX ((size_t)4 << 30)

enum column_id {
        COL_ARRIVAL,
        COL_DURATION,
        COL_USER,
        COL_PROJECT,
        COL_CPU,
        COL_MEM,
        COL_GPU,
        COL_NODES,
        COL_PRIORITY,
        COL_ID,
        _COL_MAX,
};

static const struct column {
        const char *name;
        bool required;
        const char *def; /* the value of an absent column or an empty field */
} columns[_COL_MAX] = {
        [COL_ARRIVAL] = { "arrival", true, NULL },
        [COL_DURATION] = { "duration", true, NULL },
        [COL_USER] = { "user", true, NULL },
        [COL_PROJECT] = { "project", false, "default" },
        [COL_CPU] = { "cpu", false, "1" },
        [COL_MEM] = { "mem", false, "1g" },
        [COL_GPU] = { "gpu", false, "0" },
        [COL_NODES] = { "nodes", false, "1" },
        [COL_PRIORITY] = { "priority", false, "0" },
        [COL_ID] = { "id", false, NULL },
};

/* Which field of a record holds each column (-1: absent). */
struct layout {
        int field[_COL_MAX];
        int nfields;
};

static int read_header(struct sim_csv *c, struct layout *l, struct tess_error **err)
{
        for (int k = 0; k < _COL_MAX; k++)
                l->field[k] = -1;
        l->nfields = c->n;
        for (int i = 0; i < c->n; i++) {
                const char *name = sim_csv_field(c, i);
                int k = 0;
                while (k < _COL_MAX && strcasecmp(columns[k].name, name) != 0)
                        k++;
                if (k == _COL_MAX)
                        return sim_csv_error(c, err,
                                             "unknown column '%.64s' (the header names arrival, duration, user and "
                                             "optionally project, cpu, mem, gpu, nodes, priority, id)",
                                             name);
                if (l->field[k] >= 0)
                        return sim_csv_error(c, err, "column '%s' appears twice", columns[k].name);
                l->field[k] = i;
        }
        for (int k = 0; k < _COL_MAX; k++)
                if (columns[k].required && l->field[k] < 0)
                        return sim_csv_error(c, err,
                                             "the header has no '%s' column (is the first line the header: "
                                             "arrival,duration,user,...?)",
                                             columns[k].name);
        return 0;
}

static const char *value_of(const struct sim_csv *c, const struct layout *l, int k)
{
        const char *v = l->field[k] >= 0 ? sim_csv_field(c, l->field[k]) : "";
        return *v ? v : columns[k].def;
}

static int bad(const struct sim_csv *c, struct tess_error **err, int k, const char *v, const char *want)
{
        return sim_csv_error(c, err, "column '%s': '%.64s' is not %s", columns[k].name, v, want);
}

static int read_job(struct sim_csv *c, const struct layout *l, struct sim_workload *w, struct tess_error **err)
{
        const char *v[_COL_MAX];
        int64_t arrival, duration, cpu, mem, gpu, nodes, prio;
        struct tess_error *e = NULL;
        int r;

        if (c->n != l->nfields)
                return sim_csv_error(c, err, "%d fields, but the header names %d", c->n, l->nfields);
        for (int k = 0; k < _COL_MAX; k++) {
                v[k] = value_of(c, l, k);
                if (!v[k] && columns[k].required)
                        return sim_csv_error(c, err, "column '%s' is empty", columns[k].name);
        }
        if (sim_parse_seconds(v[COL_ARRIVAL], &arrival) < 0)
                return bad(c, err, COL_ARRIVAL, v[COL_ARRIVAL], "a number of seconds from 0 to a century");
        if (sim_parse_seconds(v[COL_DURATION], &duration) < 0)
                return bad(c, err, COL_DURATION, v[COL_DURATION], "a number of seconds from 0 to a century");
        if (sim_parse_fixed(v[COL_CPU], 1000, SIM_CPU_MAX, &cpu) < 0)
                return bad(c, err, COL_CPU, v[COL_CPU], "a number of cores (at most 3 decimals)");
        r = slot_parse_string("mem", v[COL_MEM], &mem, &e);
        if (r < 0) {
                r = sim_csv_error(c, err, "column 'mem': %s", e->msg);
                tess_error_free(e);
                return r;
        }
        if (mem > SIM_MEM_MAX)
                return bad(c, err, COL_MEM, v[COL_MEM], "a memory size up to 1 EiB");
        if (sim_parse_fixed(v[COL_GPU], 100, SIM_GPU_MAX, &gpu) < 0)
                return bad(c, err, COL_GPU, v[COL_GPU], "a number of GPUs (at most 2 decimals: 0.25)");
        if (sim_parse_int(v[COL_NODES], 1, SIM_MAX_NODES, &nodes) < 0)
                return bad(c, err, COL_NODES, v[COL_NODES], "a whole number from 1 to 1024");
        if (sim_parse_int(v[COL_PRIORITY], -1000000000, 1000000000, &prio) < 0)
                return bad(c, err, COL_PRIORITY, v[COL_PRIORITY], "a whole number (-1e9 to 1e9)");
        for (int k = COL_USER; k <= COL_PROJECT; k++)
                if (!sim_name_ok(v[k], strlen(v[k])))
                        return bad(c, err, k, v[k], "a name (printable, shorter than 128 bytes)");
        if (v[COL_ID] && !sim_name_ok(v[COL_ID], strlen(v[COL_ID])))
                return bad(c, err, COL_ID, v[COL_ID], "a name (printable, shorter than 128 bytes)");
        if (w->n >= SIM_MAX_JOBS)
                return sim_csv_error(c, err, "more than %d jobs", SIM_MAX_JOBS);

        char *id = v[COL_ID] ? xstrdup(v[COL_ID]) : xasprintf("line-%lld", (long long)c->line);
        struct sim_job *j = sim_workload_add(w, id);
        j->arrival = arrival;
        j->duration = duration;
        j->cpu = cpu;
        j->mem = mem;
        j->gpu = gpu;
        j->nodes = (int)nodes;
        j->priority = prio;
        j->user = sim_names_intern(&w->users, v[COL_USER], strlen(v[COL_USER]));
        j->project = sim_names_intern(&w->projects, v[COL_PROJECT], strlen(v[COL_PROJECT]));
        return 0;
}

int sim_trace_parse(const char *origin, const char *p, size_t len, struct sim_workload *w,
                    struct tess_error **err)
{
        _cleanup_(sim_csv_release) struct sim_csv c;
        struct layout l;
        int r;

        sim_csv_init(&c, origin, p, len);
        r = sim_csv_next(&c, err);
        if (r < 0)
                return r;
        if (r == 0)
                return tess_err(err, EINVAL, "%s: no header line (arrival,duration,user,...)", origin);
        r = read_header(&c, &l, err);
        if (r < 0)
                return r;
        while ((r = sim_csv_next(&c, err)) > 0) {
                r = read_job(&c, &l, w, err);
                if (r < 0)
                        return r;
        }
        return r;
}

int sim_trace_load(const char *path, struct sim_workload *w, struct tess_error **err)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        r = fs_read_file(path, TRACE_FILE_MAX, &data, &len, err);
        if (r < 0)
                return tess_err_wrap(err, "reading the trace");
        r = sim_trace_parse(path, data, len, w, err);
        if (r < 0)
                return r;
        sim_workload_sort(w);
        return 0;
}

/* ---- writing ---- */

static void put_fixed(struct buf *b, int64_t v, int64_t scale)
{
        int digits = 0;
        int64_t fp = v % scale;

        buf_printf(b, "%" PRId64, v / scale);
        if (fp == 0)
                return;
        for (int64_t s = scale; s > 1; s /= 10)
                digits++;
        while (fp % 10 == 0) {
                fp /= 10;
                digits--;
        }
        buf_printf(b, ".%0*" PRId64, digits, fp);
}

static void put_mem(struct buf *b, int64_t v)
{
        static const char units[] = "kmgtpe";

        for (int u = 5; u >= 0; u--) {
                int64_t m = (int64_t)1 << (10 * (u + 1));
                /* slots.c reads "4g" through thousandths: keep within its range */
                if (v >= m && v % m == 0 && v / m <= (INT64_MAX >> (10 * (u + 1))) / 1000) {
                        buf_printf(b, "%" PRId64 "%c", v / m, units[u]);
                        return;
                }
        }
        buf_printf(b, "%" PRId64, v);
}

void sim_trace_format(struct buf *b, const struct sim_workload *w)
{
        buf_puts(b, "arrival,duration,user,project,cpu,mem,gpu,nodes,priority,id\n");
        for (size_t i = 0; i < w->n; i++) {
                const struct sim_job *j = &w->jobs[i];
                put_fixed(b, j->arrival, 1000000);
                buf_putc(b, ',');
                put_fixed(b, j->duration, 1000000);
                buf_printf(b, ",%s,%s,", w->users.v[j->user], w->projects.v[j->project]);
                put_fixed(b, j->cpu, 1000);
                buf_putc(b, ',');
                put_mem(b, j->mem);
                buf_putc(b, ',');
                put_fixed(b, j->gpu, 100);
                buf_printf(b, ",%d,%" PRId64 ",%s\n", j->nodes, j->priority, j->id);
        }
}

int sim_trace_write(const char *path, const struct sim_workload *w, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf b = BUF_INIT;
        FILE *f = fopen(path, "we");

        if (!f)
                return tess_err(err, errno, "creating '%s': %s", path, strerror(errno));
        sim_trace_format(&b, w);
        size_t n = fwrite(b.data, 1, b.len, f);
        bool failed = n != b.len || ferror(f);
        if (fclose(f) != 0 || failed)
                return tess_err(err, EIO, "writing '%s': %s", path, strerror(errno ? errno : EIO));
        return 0;
}
