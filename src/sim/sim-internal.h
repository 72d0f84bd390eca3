/* sim-internal.h - pieces of the simulator shared between its files. */
#ifndef TESS_SIM_INTERNAL_H
#define TESS_SIM_INTERNAL_H

#include "common/buf.h"
#include "sim/sim.h"

/* ---- csv.c: records of a comma-separated file held in memory ---- */

#define SIM_CSV_MAX_FIELDS 64
#define SIM_CSV_MAX_LINE 65536

/* Fields may be double-quoted ("a, b", "say ""hi"""); unquoted fields are
 * trimmed of spaces and tabs.  Blank lines and lines whose first character
 * is '#' are skipped; \r\n ends a line as \n does; a UTF-8 byte order mark
 * at the start is ignored.  A quoted field may not span lines. */
struct sim_csv {
        const char *origin;
        const char *p, *end;
        int64_t line;      /* of the record last read */
        int64_t next_line;
        struct buf fields; /* the record's fields, each NUL-terminated */
        size_t off[SIM_CSV_MAX_FIELDS];
        int n;
};

void sim_csv_init(struct sim_csv *c, const char *origin, const char *p, size_t len);
void sim_csv_release(struct sim_csv *c);
/* Read the next record: 1, or 0 at the end, or -EINVAL ("origin:line: ..."). */
int sim_csv_next(struct sim_csv *c, struct tess_error **err);
static inline const char *sim_csv_field(const struct sim_csv *c, int i)
{
        return c->fields.data + c->off[i];
}
/* An error about the current record: "origin:line: <fmt>" (-EINVAL). */
int sim_csv_error(const struct sim_csv *c, struct tess_error **err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* ---- values shared by the trace reader and the converters ---- */

/* Seconds with up to 6 decimals ("12", "0.25") into usec in [0, SIM_TIME_MAX]. */
int sim_parse_seconds(const char *s, int64_t *ret_usec);
/* A whole number in [min, max]. */
int sim_parse_int(const char *s, int64_t min, int64_t max, int64_t *ret);
/* Fixed point: "1.5" with scale 100 is 150; at most as many decimals as
 * the scale has zeros; in [0, max]. */
int sim_parse_fixed(const char *s, int64_t scale, int64_t max, int64_t *ret);
/* May name[0..len) name a user, project or job?  Printable, no comma or
 * quote, no space at either end, shorter than SIM_NAME_MAX. */
bool sim_name_ok(const char *s, size_t len);

/* ---- report.c and svg.c: what a person reads ---- */

struct sim_run {
        const char *label;  /* "fifo/fractional" */
        const struct sim_config *cfg;
        const struct sim_result *res;
        const struct sim_metrics *m;
};

void sim_report_print(FILE *f, const struct sim_workload *w, const struct sim_run *run);
/* Write timeseries.csv, jobs.csv, summary.csv and chart.svg into dir. */
int sim_report_write(const char *dir, const struct sim_workload *w, const struct sim_run *run,
                     struct tess_error **err);
/* The --compare table on f; compare.csv and compare.svg into dir (if any). */
int sim_report_compare(FILE *f, const char *dir, const struct sim_run *runs, int n, struct tess_error **err);
/* "1h 05m", "12.3 s", "850 ms" */
char *sim_format_duration(double seconds, char *buf, size_t len);

/* One line of a chart: y values at the samples' times. */
struct sim_series {
        const char *label;
        const char *color;
        const struct sim_sample *s;
        size_t n;
        int field; /* SIM_SERIES_* */
};

enum {
        SIM_SERIES_GPU_UTIL,
        SIM_SERIES_GPU_ALLOC,
        SIM_SERIES_CPU_UTIL,
        SIM_SERIES_QUEUE,
        SIM_SERIES_FRAG,
};

struct sim_panel {
        const char *title;
        const char *unit;   /* "%" draws 0..100 from fractions; else an auto scale */
        const struct sim_series *series;
        int nseries;
};

/* An SVG document of panels stacked vertically, sharing the time axis. */
void sim_svg_chart(struct buf *out, const char *title, const struct sim_panel *panels, int npanels);

#endif
