/* cmd_usage.c - `tessera admin usage`: resource usage per user, project or
 * domain per day (GET /admin/usage), in hours of each resource.
 *
 * The server answers slot-seconds as exact decimal strings; the table
 * shows them as core-hours, GiB-hours, GPU-hours and fGPU-hours with two
 * decimals, then the measured use (docs/design/usage.md): core-hours of
 * CPU time used and GiB read and written; one row per day and scope, then
 * one "total" row per scope. */
#include "common/compat.h"

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"

static const struct cli_opt usage_opts[] = {
        { "from", 0, OPT_STR, DEST_QUERY, "start_date", 0, 0, "DATE",
          "first day, YYYY-MM-DD or YYYYMMDD (default: 29 days before --to)" },
        { "to", 0, OPT_STR, DEST_QUERY, "end_date", 0, 0, "DATE", "last day, included (default: today, UTC)" },
        { "by", 0, OPT_STR, DEST_QUERY, "group_by", 0, 0, "user|project|domain",
          "whose usage each row is (default: user)" },
        {},
};

static const struct column usage_columns[] = {
        { "DAY", "day", COL_TEXT },
        { "SCOPE", "scope", COL_TEXT },
        { "SESSIONS", "sessions", COL_TEXT },
        { "CPU-HOURS", "cpu", COL_TEXT },
        { "MEM-GIB-HOURS", "mem", COL_TEXT },
        { "GPU-HOURS", "gpu", COL_TEXT },
        { "FGPU-HOURS", "fgpu", COL_TEXT },
        { "CPU-USED-HOURS", "cpu_used", COL_TEXT },
        { "IO-GIB", "io", COL_TEXT },
        {},
};

/* slot-seconds (a decimal string) / divisor, with two decimals. */
static json_t *hours(const json_t *slot_seconds, const char *slot, double divisor)
{
        const char *s = json_string_value(json_object_get(slot_seconds, slot));
        char tmp[64];

        snprintf(tmp, sizeof(tmp), "%.2f", s ? strtod(s, NULL) / divisor : 0.0);
        return json_string(tmp);
}

/* The sum of a few numbers of item / divisor, with two decimals. */
static json_t *measured(const json_t *item, const char *a, const char *b, double divisor)
{
        double v = json_number_value(json_object_get(item, a)) + (b ? json_number_value(json_object_get(item, b)) : 0);
        char tmp[64];

        snprintf(tmp, sizeof(tmp), "%.2f", v / divisor);
        return json_string(tmp);
}

static json_t *usage_row(const json_t *item, const char *day)
{
        const json_t *ss = json_object_get(item, "slot_seconds");
        const char *name = json_string_value(json_object_get(item, "scope_name"));

        return json_pack("{s:s, s:s, s:O?, s:o, s:o, s:o, s:o, s:o, s:o}", "day", day, "scope",
                         name ? name : json_string_value(json_object_get(item, "scope_id")), "sessions",
                         json_object_get(item, "sessions"), "cpu", hours(ss, "cpu", 3600.0), "mem",
                         hours(ss, "mem", 3600.0 * 1024 * 1024 * 1024), "gpu", hours(ss, "cuda.device", 3600.0),
                         "fgpu", hours(ss, "cuda.shares", 3600.0), "cpu_used",
                         measured(item, "cpu_used_seconds", NULL, 3600.0), "io",
                         measured(item, "io_read_bytes", "io_write_bytes", 1024.0 * 1024 * 1024));
}

static void print_usage(const json_t *answer, const void *arg UNUSED)
{
        const json_t *items = json_object_get(answer, "items"), *totals = json_object_get(answer, "totals"), *v;
        json_t *rows = json_array();
        size_t i;

        json_array_foreach(items, i, v) {
                json_array_append_new(rows, usage_row(v, json_string_value(json_object_get(v, "day"))));
        }
        json_array_foreach(totals, i, v) {
                json_array_append_new(rows, usage_row(v, "total"));
        }
        if (json_array_size(rows) == 0)
                fprintf(stderr, "no usage from %s to %s\n",
                        json_string_value(json_object_get(answer, "start_date")) ?: "?",
                        json_string_value(json_object_get(answer, "end_date")) ?: "?");
        else
                out_table(usage_columns, rows);
        json_decref(rows);
}

static int usage_run(struct cli_call *call)
{
        _cleanup_(buf_release) struct buf path = BUF_INIT;
        const char *by = json_string_value(json_object_get(call->args.query, "group_by"));

        if (by && !streq(by, "user") && !streq(by, "project") && !streq(by, "domain"))
                return cli_usage_error(call->prefix, "--by must be user, project or domain, not '%s'", by);
        buf_puts(&path, "/admin/usage");
        client_query(&path, call->args.query);
        return cli_request("GET", path.data, NULL, print_usage, NULL);
}

static const struct cli_leaf usage_leaf = {
        "usage", NULL, usage_run, { usage_opts }, 0, 0, 0, NULL,
        "Resource usage per user, project or domain per day (GET /admin/usage).", NULL,
};

int cmd_admin_usage(int argc, char **argv)
{
        return cli_run_leaf("tessera admin usage", &usage_leaf, argc, argv);
}
