/* convert.c - public GPU-cluster job logs into the simulator's workload.
 *
 * Microsoft Philly (msr-fiddle/philly-traces, `cluster_job_log`): a JSON
 * array of jobs (a stream of JSON objects is accepted too):
 *     {"status": "Pass", "vc": "ee9e8c", "jobid": "application_..._14199",
 *      "submitted_time": "2017-10-07 01:11:39", "user": "ce2f4c",
 *      "attempts": [{"start_time": "...", "end_time": "...",
 *                    "detail": [{"ip": "m47", "gpus": ["gpu0", ...]}]}]}
 *   arrival  = submitted_time - the earliest submitted_time
 *   duration = the sum over attempts of end_time - start_time
 *   nodes    = machines of the largest attempt; gpu = its GPUs / nodes
 *   cpu, mem = per GPU from the options (the log has neither)
 *   user, project = user, vc;  id = jobid
 * A job without a complete attempt or with a time of None is skipped.
 *
 * SenseTime Helios (S-Lab-System-Group/HeliosData, `cluster_log.csv`):
 *     job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,
 *     end_time,duration,queue
 *   arrival  = submit_time - the earliest submit_time;  duration = duration
 *   nodes    = node_num; gpu, cpu = gpu_num, cpu_num divided over the nodes
 *     (rounded up);  mem = the larger of cpu x mem_per_cpu and gpu x mem_per_gpu
 *   user, project = user, vc;  id = job_id
 * A row with an empty submit_time or duration is skipped.
 *
 * Times in both logs carry no zone; only differences matter. */
#include "common/compat.h"

#include <jansson.h>

#include "common/timeutil.h"
#include "sim/sim-internal.h"

#define GIB ((int64_t)1 << 30)

void sim_convert_opts_default(struct sim_convert_opts *o)
{
        *o = (struct sim_convert_opts){ .cpu_per_gpu = 4000, .mem_per_gpu = 32 * GIB, .mem_per_cpu = 4 * GIB };
}

int sim_source_from_string(const char *s)
{
        if (streq(s, "philly"))
                return SIM_SOURCE_PHILLY;
        if (streq(s, "helios"))
                return SIM_SOURCE_HELIOS;
        return -1;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
        return (a + b - 1) / b;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
        int64_t r;
        return __builtin_mul_overflow(a, b, &r) || r > SIM_MEM_MAX ? SIM_MEM_MAX : r;
}

/* A converted job within the bounds a trace can hold. */
static bool job_ok(const struct sim_job *j)
{
        return j->cpu <= SIM_CPU_MAX && j->mem <= SIM_MEM_MAX && j->gpu <= SIM_GPU_MAX;
}

/* Arrivals were stored as absolute times: make them relative to the first. */
static int rebase(const char *origin, struct sim_workload *w, size_t first, struct tess_error **err)
{
        int64_t min = INT64_MAX;

        for (size_t i = first; i < w->n; i++)
                if (w->jobs[i].arrival < min)
                        min = w->jobs[i].arrival;
        for (size_t i = first; i < w->n; i++) {
                w->jobs[i].arrival -= min;
                if (w->jobs[i].arrival > SIM_TIME_MAX)
                        return tess_err(err, EINVAL, "%s: job '%s' arrives more than a century after the first",
                                        origin, w->jobs[i].id);
        }
        return 0;
}

/* A date as both logs write it; false for "", "None", malformed. */
static bool parse_time(const char *s, int64_t *ret)
{
        return s && *s && time_parse(s, ret, NULL) == 0;
}

/* ---- Helios ---- */

enum helios_col { H_JOB_ID, H_USER, H_VC, H_GPU, H_CPU, H_NODES, H_SUBMIT, H_DURATION, _H_MAX };
static const char *const helios_cols[_H_MAX] = {
        [H_JOB_ID] = "job_id", [H_USER] = "user",         [H_VC] = "vc",
        [H_GPU] = "gpu_num",   [H_CPU] = "cpu_num",       [H_NODES] = "node_num",
        [H_SUBMIT] = "submit_time", [H_DURATION] = "duration",
};

static int helios_row(struct sim_csv *c, const int *col, int ncols, const struct sim_convert_opts *o,
                      struct sim_workload *w, size_t *skipped, struct tess_error **err)
{
        const char *v[_H_MAX];
        int64_t submit, duration, gpus, cpus, nodes;

        if (c->n != ncols)
                return sim_csv_error(c, err, "%d fields, but the header names %d", c->n, ncols);
        for (int k = 0; k < _H_MAX; k++)
                v[k] = sim_csv_field(c, col[k]);
        if (!*v[H_SUBMIT] || !*v[H_DURATION] || streq(v[H_SUBMIT], "None")) {
                (*skipped)++;
                return 0;
        }
        if (!parse_time(v[H_SUBMIT], &submit))
                return sim_csv_error(c, err, "submit_time '%.40s' is not a date (2020-06-09 18:41:01)", v[H_SUBMIT]);
        if (sim_parse_seconds(v[H_DURATION], &duration) < 0)
                return sim_csv_error(c, err, "duration '%.40s' is not a number of seconds", v[H_DURATION]);
        if (sim_parse_int(v[H_GPU], 0, 100000, &gpus) < 0)
                return sim_csv_error(c, err, "gpu_num '%.40s' is not a whole number from 0 to 100000", v[H_GPU]);
        if (sim_parse_int(v[H_CPU], 0, 1000000, &cpus) < 0)
                return sim_csv_error(c, err, "cpu_num '%.40s' is not a whole number from 0 to 1000000", v[H_CPU]);
        if (sim_parse_int(*v[H_NODES] ? v[H_NODES] : "1", 0, SIM_MAX_NODES, &nodes) < 0)
                return sim_csv_error(c, err, "node_num '%.40s' is not a whole number from 0 to %d", v[H_NODES],
                                     SIM_MAX_NODES);
        for (int k = H_JOB_ID; k <= H_VC; k++)
                if (!sim_name_ok(v[k], strlen(v[k])))
                        return sim_csv_error(c, err, "%s '%.40s' is not a name (printable, shorter than 128 bytes)",
                                             helios_cols[k], v[k]);
        if (w->n >= SIM_MAX_JOBS)
                return sim_csv_error(c, err, "more than %d jobs", SIM_MAX_JOBS);
        if (nodes == 0)
                nodes = 1;
        struct sim_job *j = sim_workload_add(w, xstrdup(v[H_JOB_ID]));
        j->arrival = submit;
        j->duration = duration;
        j->nodes = (int)nodes;
        j->gpu = ceil_div(gpus, nodes) * 100;
        j->cpu = ceil_div(cpus, nodes) * 1000;
        j->mem = sat_mul(j->cpu / 1000, o->mem_per_cpu);
        if (sat_mul(j->gpu / 100, o->mem_per_gpu) > j->mem)
                j->mem = sat_mul(j->gpu / 100, o->mem_per_gpu);
        j->user = sim_names_intern(&w->users, v[H_USER], strlen(v[H_USER]));
        j->project = sim_names_intern(&w->projects, v[H_VC], strlen(v[H_VC]));
        if (!job_ok(j))
                return sim_csv_error(c, err, "job '%s' asks more than a trace can hold", j->id);
        return 0;
}

static int convert_helios(const char *origin, const char *p, size_t len, const struct sim_convert_opts *o,
                          struct sim_workload *w, size_t *skipped, struct tess_error **err)
{
        _cleanup_(sim_csv_release) struct sim_csv c;
        int col[_H_MAX], ncols, r;

        sim_csv_init(&c, origin, p, len);
        r = sim_csv_next(&c, err);
        if (r <= 0)
                return r < 0 ? r : tess_err(err, EINVAL, "%s: empty file: no header line", origin);
        ncols = c.n;
        for (int k = 0; k < _H_MAX; k++) {
                col[k] = -1;
                for (int i = 0; i < c.n; i++)
                        if (streq(sim_csv_field(&c, i), helios_cols[k]))
                                col[k] = i;
                if (col[k] < 0)
                        return sim_csv_error(&c, err,
                                             "no '%s' column: is this a Helios cluster_log.csv (job_id,user,vc,"
                                             "gpu_num,cpu_num,node_num,state,submit_time,...)?",
                                             helios_cols[k]);
        }
        while ((r = sim_csv_next(&c, err)) > 0) {
                r = helios_row(&c, col, ncols, o, w, skipped, err);
                if (r < 0)
                        return r;
        }
        return r;
}

/* ---- Philly ---- */

static const char *str_of(const json_t *obj, const char *key)
{
        const json_t *v = json_object_get(obj, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

static int philly_job(const char *origin, size_t n, const json_t *job, const struct sim_convert_opts *o,
                      struct sim_workload *w, size_t *skipped, struct tess_error **err)
{
        const char *id = str_of(job, "jobid"), *user = str_of(job, "user"), *vc = str_of(job, "vc");
        const json_t *attempts = json_object_get(job, "attempts"), *a;
        int64_t submit, duration = 0, gpus = 0, nodes = 1;
        size_t i, complete = 0;

        if (!json_is_object(job))
                return tess_err(err, EINVAL, "%s: job %zu: not a JSON object", origin, n);
        if (!id || !sim_name_ok(id, strlen(id)))
                return tess_err(err, EINVAL, "%s: job %zu: no \"jobid\" string (printable, shorter than 128 bytes)",
                                origin, n);
        if (!user || !sim_name_ok(user, strlen(user)) || (vc && !sim_name_ok(vc, strlen(vc))))
                return tess_err(err, EINVAL, "%s: job %zu ('%s'): \"user\" and \"vc\" must be names", origin, n, id);
        if (attempts && !json_is_array(attempts) && !json_is_null(attempts))
                return tess_err(err, EINVAL, "%s: job %zu ('%s'): \"attempts\" is not a list", origin, n, id);
        if (!parse_time(str_of(job, "submitted_time"), &submit)) {
                (*skipped)++;
                return 0;
        }
        json_array_foreach(attempts, i, a) {
                const json_t *detail = json_object_get(a, "detail"), *d;
                int64_t start, end, g = 0;
                size_t k;
                if (!json_is_object(a) || (detail && !json_is_array(detail)))
                        return tess_err(err, EINVAL, "%s: job %zu ('%s'): attempt %zu is malformed", origin, n, id, i);
                json_array_foreach(detail, k, d) {
                        const json_t *gl = json_object_get(d, "gpus");
                        if (!json_is_object(d) || (gl && !json_is_array(gl)))
                                return tess_err(err, EINVAL, "%s: job %zu ('%s'): attempt %zu: malformed detail",
                                                origin, n, id, i);
                        g += (int64_t)json_array_size(gl);
                }
                if (g > gpus || (g == gpus && (int64_t)json_array_size(detail) > nodes)) {
                        gpus = g;
                        nodes = json_array_size(detail) > 0 ? (int64_t)json_array_size(detail) : 1;
                }
                if (!parse_time(str_of(a, "start_time"), &start) || !parse_time(str_of(a, "end_time"), &end) ||
                    end < start)
                        continue;
                if (end - start > SIM_TIME_MAX - duration)
                        return tess_err(err, EINVAL, "%s: job %zu ('%s'): runs longer than a century", origin, n, id);
                duration += end - start;
                complete++;
        }
        if (complete == 0) {
                (*skipped)++;
                return 0;
        }
        if (nodes > SIM_MAX_NODES || gpus > 100000)
                return tess_err(err, EINVAL, "%s: job %zu ('%s'): %lld GPUs on %lld machines is too large", origin, n,
                                id, (long long)gpus, (long long)nodes);
        if (w->n >= SIM_MAX_JOBS)
                return tess_err(err, EINVAL, "%s: more than %d jobs", origin, SIM_MAX_JOBS);
        struct sim_job *j = sim_workload_add(w, xstrdup(id));
        int64_t per = ceil_div(gpus, nodes);
        j->arrival = submit;
        j->duration = duration;
        j->nodes = (int)nodes;
        j->gpu = per * 100;
        j->cpu = per > 0 ? sat_mul(per, o->cpu_per_gpu) : 1000;
        j->mem = per > 0 ? sat_mul(per, o->mem_per_gpu) : o->mem_per_cpu;
        j->user = sim_names_intern(&w->users, user, strlen(user));
        j->project = sim_names_intern(&w->projects, vc ? vc : "default", strlen(vc ? vc : "default"));
        if (!job_ok(j))
                return tess_err(err, EINVAL, "%s: job %zu ('%s') asks more than a trace can hold", origin, n, id);
        return 0;
}

static int json_fail(const char *origin, const json_error_t *je, struct tess_error **err)
{
        return tess_err(err, EINVAL, "%s:%d:%d: not valid JSON: %s", origin, je->line, je->column, je->text);
}

static int convert_philly(const char *origin, const char *p, size_t len, const struct sim_convert_opts *o,
                          struct sim_workload *w, size_t *skipped, struct tess_error **err)
{
        size_t off = 0, n = 0;
        json_error_t je;
        int r;

        while (off < len && strchr(" \t\r\n", p[off]))
                off++;
        if (off == len)
                return tess_err(err, EINVAL, "%s: empty file: no jobs", origin);
        if (p[off] == '[') {
                json_t *all = json_loadb(p + off, len - off, 0, &je);
                json_t *job;
                size_t i;
                if (!all)
                        return json_fail(origin, &je, err);
                json_array_foreach(all, i, job) {
                        r = philly_job(origin, i + 1, job, o, w, skipped, err);
                        if (r < 0) {
                                json_decref(all);
                                return r;
                        }
                }
                json_decref(all);
                return 0;
        }
        /* a stream of objects, one after the other */
        while (off < len) {
                json_t *job = json_loadb(p + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
                if (!job)
                        return json_fail(origin, &je, err);
                off += (size_t)je.position;
                r = philly_job(origin, ++n, job, o, w, skipped, err);
                json_decref(job);
                if (r < 0)
                        return r;
                while (off < len && strchr(" \t\r\n,", p[off]))
                        off++;
        }
        return 0;
}

int sim_convert(enum sim_source src, const char *origin, const char *p, size_t len,
                const struct sim_convert_opts *o, struct sim_workload *w, size_t *ret_skipped,
                struct tess_error **err)
{
        size_t first = w->n, skipped = 0;
        int r;

        if (memchr(p, '\0', len) && src == SIM_SOURCE_PHILLY)
                return tess_err(err, EINVAL, "%s: NUL byte in a JSON file", origin);
        r = src == SIM_SOURCE_PHILLY ? convert_philly(origin, p, len, o, w, &skipped, err)
                                     : convert_helios(origin, p, len, o, w, &skipped, err);
        if (r < 0)
                return r;
        r = rebase(origin, w, first, err);
        if (r < 0)
                return r;
        sim_workload_sort(w);
        if (ret_skipped)
                *ret_skipped = skipped;
        return 0;
}
