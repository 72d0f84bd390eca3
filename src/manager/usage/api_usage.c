/* api_usage.c - usage reports from usage_daily plus live sessions' open
 * intervals (usage.h), allocation and measured use (usage_measure.h):
 *
 *   GET /resource/usage/month?month=YYYYMM[&group_ids=]   the month's sessions,
 *       as usage/period's c_infos in one list (Backend.AI's; superadmins)
 *   GET /resource/usage/period?start_date=&end_date=[&project_id=]
 *       (the parameters also as a JSON body, as Backend.AI's SDK sends them)
 *       Backend.AI's shape: a list with one object per project
 *       {domain_name, g_id, g_name, g_cpu_allocated, g_mem_allocated,
 *        g_gpu_allocated, g_cpu_used, g_mem_used, g_io_read, g_io_write,
 *        g_used_seconds, g_slot_seconds, g_days[], c_infos[]}, each c_info
 *       one session that occupied resources in the period {id,
 *       session_id, name, domain_name, group_id, group_name, user_id,
 *       access_key, email, full_name, agent, scaling_group, cpu_allocated,
 *       mem_allocated, gpu_allocated, occupied_slots, cpu_used, mem_used,
 *       io_read, io_write, image_id, image_name, created_at,
 *       terminated_at, status, status_info, cluster_mode, used_time,
 *       used_days, used_seconds, slot_seconds, days[]}.  Dates are
 *       YYYYMMDD (or YYYY-MM-DD), both inclusive, at most 100 days.
 *       Measured fields, in Backend.AI's units, cover the period's days
 *       (Backend.AI's are the session's whole life): cpu_used is msec of
 *       CPU time, io_read and io_write bytes, mem_used the peak memory in
 *       bytes (g_mem_used: the sum of the sessions' peaks, as Backend.AI
 *       sums them).  Each days[] and g_days[] entry has them too.
 *   GET /resource/stats/user/month
 *       the caller's own usage on each of the last 30 days (today last):
 *       Backend.AI's time-binned shape with one bin per day {date (UNIX
 *       time of the day's midnight), num_sessions, cpu_allocated,
 *       mem_allocated, gpu_allocated (each {value, unit_hint}, allocation
 *       averaged over the day), io_read_bytes, io_write_bytes (bytes),
 *       and Tessera's cpu_used (msec) and mem_used (peak bytes)}, plus the
 *       exact {day, seconds, slot_seconds}.
 *   GET /admin/usage?start_date=&end_date=&group_by=user|project|domain
 *       per scope per day {start_date, end_date, group_by, items[{day,
 *       scope_id, scope_name, domain_name, sessions, seconds,
 *       slot_seconds, cpu_used_seconds, io_read_bytes, io_write_bytes,
 *       mem_peak_bytes}], totals[{scope_id, scope_name, domain_name,
 *       sessions, seconds, slot_seconds, cpu_used_seconds, io_read_bytes,
 *       io_write_bytes, mem_peak_bytes}]}; start_date defaults to 29 days
 *       before end_date, end_date to today.  mem_peak_bytes is the largest
 *       memory one kernel of the scope reported.
 *
 * Who sees what: superadmins everything, admins and monitors their domain,
 * users only their own sessions. */
#include "common/compat.h"

#include "common/buf.h"
#include "common/strmap.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/usage/usage.h"

#define ALL_DAYS   INT32_MIN
#define STATS_DAYS 30

/* ---- accumulating pieces into (scope, day) buckets ---- */

struct bucket {
        char *scope;  /* a session, user, project or domain id */
        int32_t day;  /* ALL_DAYS: the whole period */
        char *domain; /* of the first piece */
        char *project_id;
        int64_t sessions, seconds;
        struct usage_amount amount;
        struct usage_measured measured;
        const char *name; /* filled in before output */
};

struct buckets {
        struct strmap index; /* "day|scope" -> position in v */
        struct bucket *v;
        int n, cap;
};

static void buckets_init(struct buckets *b)
{
        *b = (struct buckets){ 0 };
        strmap_init(&b->index);
}

static void buckets_release(struct buckets *b)
{
        for (int i = 0; i < b->n; i++) {
                free(b->v[i].scope);
                free(b->v[i].domain);
                free(b->v[i].project_id);
        }
        free(b->v);
        strmap_free(&b->index);
}

static void bucket_key(struct buf *k, const char *scope, int32_t day)
{
        buf_reset(k);
        buf_printf(k, "%d|%s", (int)day, scope);
}

static int bucket_find(const struct buckets *b, const char *scope, int32_t day)
{
        _cleanup_(buf_release) struct buf k = BUF_INIT;
        bucket_key(&k, scope, day);
        return strmap_get(&b->index, k.data);
}

/* Add a piece to the bucket (scope, day), counting `sessions`. */
static int bucket_add(struct buckets *b, const char *scope, int32_t day, const struct usage_piece *p, int64_t sessions,
                      struct tess_error **err)
{
        _cleanup_(buf_release) struct buf k = BUF_INIT;
        int i;

        bucket_key(&k, scope, day);
        i = strmap_get(&b->index, k.data);
        if (i < 0) {
                if (b->n == b->cap) {
                        b->cap = b->cap ? 2 * b->cap : 64;
                        b->v = xrealloc(b->v, (size_t)b->cap * sizeof(*b->v));
                }
                i = b->n++;
                b->v[i] = (struct bucket){ .scope = xstrdup(scope),
                                           .day = day,
                                           .domain = xstrdup(p->domain),
                                           .project_id = xstrdup(p->project_id) };
                usage_amount_init(&b->v[i].amount);
                strmap_put(&b->index, k.data, i);
        }
        b->v[i].sessions += sessions;
        b->v[i].seconds += p->seconds;
        usage_measured_add(&b->v[i].measured, &p->measured);
        return usage_amount_add(&b->v[i].amount, &p->amount, err);
}

static json_t *str_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}

static json_t *day_json(int32_t day)
{
        char d[16];
        return json_string(usage_day_format(day, d, sizeof(d)));
}

/* Backend.AI's measured fields: cpu_used (msec), mem_used (bytes, the
 * peak), io_read and io_write (bytes), each with `prefix` ("g_" for
 * projects). */
static void measured_fields(json_t *o, const char *prefix, const struct usage_measured *u)
{
        char key[32];

        snprintf(key, sizeof(key), "%scpu_used", prefix);
        json_object_set_new(o, key, json_real((double)u->cpu_used_usec / 1000.0));
        snprintf(key, sizeof(key), "%smem_used", prefix);
        json_object_set_new(o, key, json_integer(u->mem_peak_bytes));
        snprintf(key, sizeof(key), "%sio_read", prefix);
        json_object_set_new(o, key, json_integer(u->io_read_bytes));
        snprintf(key, sizeof(key), "%sio_write", prefix);
        json_object_set_new(o, key, json_integer(u->io_write_bytes));
}

static void measured_json(json_t *o, const struct usage_measured *u)
{
        measured_fields(o, "", u);
}

/* ---- parameters ---- */

/* start_date and end_date (inclusive days).  Required ones must be given;
 * else end_date defaults to today and start_date to 29 days before it. */
static int parse_period(struct api_ctx *c, bool required, int32_t *ret_first, int32_t *ret_last,
                        struct tess_error **err)
{
        const char *s = api_param(c, "start_date"), *e = api_param(c, "end_date");
        int32_t first, last = usage_day_of(now_usec());
        int r;

        if (required && !s)
                return tess_err(err, EINVAL, "'start_date' is required: the first day, YYYYMMDD");
        if (required && !e)
                return tess_err(err, EINVAL, "'end_date' is required: the last day, YYYYMMDD");
        if (e && (r = usage_day_parse("end_date", e, &last, err)) < 0)
                return r;
        first = last - (STATS_DAYS - 1);
        if (s && (r = usage_day_parse("start_date", s, &first, err)) < 0)
                return r;
        if (last < first)
                return tess_err(err, EINVAL, "'end_date' (%s) is before 'start_date' (%s)", e ? e : "today",
                                s ? s : "?");
        if (last - first + 1 > USAGE_MAX_PERIOD_DAYS)
                return tess_err(err, EINVAL, "the period from %s to %s is %d days: at most %d may be asked at once",
                                s ? s : "?", e ? e : "today", (int)(last - first + 1), USAGE_MAX_PERIOD_DAYS);
        *ret_first = first;
        *ret_last = last;
        return 0;
}

/* Narrow the filter to what the caller may see. */
static void caller_scope(const struct api_ctx *c, struct usage_filter *f)
{
        if (c->who.role == ROLE_SUPERADMIN)
                return;
        if (c->who.role == ROLE_ADMIN || c->who.role == ROLE_MONITOR)
                f->domain = c->who.domain;
        else
                f->user_id = c->who.user_id;
}

/* ---- GET /resource/usage/period ---- */

struct period_acc {
        struct buckets sessions; /* (session, ALL_DAYS) and (session, day) */
        struct buckets projects; /* (project, ALL_DAYS): distinct sessions; (project, day): session-days */
};

static int period_piece(const struct usage_piece *p, void *data, struct tess_error **err)
{
        struct period_acc *a = data;
        bool new_session = bucket_find(&a->sessions, p->session_id, ALL_DAYS) < 0;
        int r;

        if ((r = bucket_add(&a->sessions, p->session_id, ALL_DAYS, p, 0, err)) < 0 ||
            (r = bucket_add(&a->sessions, p->session_id, p->day, p, 0, err)) < 0 ||
            (r = bucket_add(&a->projects, p->project_id, ALL_DAYS, p, new_session, err)) < 0 ||
            (r = bucket_add(&a->projects, p->project_id, p->day, p, p->counted, err)) < 0)
                return r;
        return 0;
}

/* What the sessions of the report are: one row per session. */
static int session_meta(struct api_ctx *c, const struct usage_filter *f, int64_t now, struct db_rows **ret,
                        struct tess_error **err)
{
        _cleanup_(buf_release) struct buf sql = BUF_INIT;
        struct db_arg args[12];
        char first[16], last[16];
        int nargs = 0;
        int64_t end = usage_day_start(f->last_day + 1);

        usage_day_format(f->first_day, first, sizeof(first));
        usage_day_format(f->last_day, last, sizeof(last));
        buf_puts(&sql, "SELECT s.id, s.name, s.status, s.status_info, s.user_id, s.access_key, s.image,"
                       " s.occupying_slots, s.requested_slots, s.created_at, s.terminated_at, s.cluster_mode,"
                       " s.resource_group,"
                       " u.email, u.full_name, p.name AS project_name, k.agent_id"
                       " FROM sessions s LEFT JOIN users u ON u.id = s.user_id"
                       " LEFT JOIN projects p ON p.id = s.project_id"
                       " LEFT JOIN kernels k ON k.session_id = s.id AND k.cluster_role = 'main'"
                       " WHERE (s.id IN (SELECT d.session_id FROM usage_daily d WHERE d.day >= ? AND d.day <= ?");
        args[nargs++] = DB_TEXT(first);
        args[nargs++] = DB_TEXT(last);
        usage_filter_sql(f, "d", &sql, args, &nargs);
        buf_puts(&sql, ") OR (s.occupied_at IS NOT NULL AND s.occupied_at < ?"
                       " AND s.status IN " USAGE_OCCUPYING_STATUSES);
        args[nargs++] = DB_INT(end < now ? end : now);
        usage_filter_sql(f, "s", &sql, args, &nargs);
        buf_puts(&sql, "))");
        return db_query(c->m->db, sql.data, args, nargs, ret, err);
}

/* Python's str(timedelta) of whole seconds: "2:03:04", "1 day, 0:00:10". */
static json_t *used_time_json(int64_t s)
{
        int64_t d = s / USAGE_SEC_PER_DAY, r = s % USAGE_SEC_PER_DAY;
        _cleanup_free_ char *t = NULL;

        if (d)
                t = xasprintf("%lld day%s, %lld:%02lld:%02lld", (long long)d, d == 1 ? "" : "s", (long long)(r / 3600),
                              (long long)(r / 60 % 60), (long long)(r % 60));
        else
                t = xasprintf("%lld:%02lld:%02lld", (long long)(r / 3600), (long long)(r / 60 % 60),
                              (long long)(r % 60));
        return json_string(t);
}

static json_t *iso_or_null(const char *usec)
{
        char when[48];
        return usec ? json_string(time_format_iso(strtoll(usec, NULL, 10), when, sizeof(when))) : json_null();
}

static double gpu_of(const struct slots *s)
{
        if (slots_has(s, "cuda.shares"))
                return (double)slots_get(s, "cuda.shares") / (double)slot_scale("cuda.shares");
        return (double)slots_get(s, "cuda.device");
}

/* One c_info: the session bucket `k` with what the sessions table says
 * of it (meta row `row`, or -1 when the session is gone). */
static json_t *c_info_json(const struct bucket *k, const struct db_rows *meta, int row)
{
        const char *occ = row >= 0 ? db_getn(meta, row, "occupying_slots") : NULL;
        struct slots s;
        json_t *o;

#define M(col) (row >= 0 ? db_getn(meta, row, col) : NULL)
        if (slots_from_text(&s, occ && strcmp(occ, "{}") ? occ : M("requested_slots"), NULL) < 0)
                slots_init(&s);
        o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", k->scope, "session_id",
                      k->scope, "name", str_or_null(M("name")), "domain_name", str_or_null(k->domain), "group_id",
                      str_or_null(k->project_id), "group_name", str_or_null(M("project_name")), "user_id",
                      str_or_null(M("user_id")), "access_key", str_or_null(M("access_key")), "email",
                      str_or_null(M("email")), "full_name", str_or_null(M("full_name")), "agent",
                      str_or_null(M("agent_id")), "scaling_group", str_or_null(M("resource_group")));
        json_object_set_new(o, "cpu_allocated", json_real((double)slots_get(&s, "cpu") / 1000.0));
        json_object_set_new(o, "mem_allocated", json_integer(slots_get(&s, "mem")));
        json_object_set_new(o, "gpu_allocated", json_real(gpu_of(&s)));
        json_object_set_new(o, "occupied_slots", slots_to_json(&s));
        json_object_set_new(o, "image_id", str_or_null(M("image")));
        json_object_set_new(o, "image_name", str_or_null(M("image")));
        json_object_set_new(o, "created_at", iso_or_null(M("created_at")));
        json_object_set_new(o, "terminated_at", iso_or_null(M("terminated_at")));
        json_object_set_new(o, "status", str_or_null(M("status")));
        json_object_set_new(o, "status_info", str_or_null(M("status_info")));
        json_object_set_new(o, "cluster_mode", str_or_null(M("cluster_mode")));
        measured_json(o, &k->measured);
        json_object_set_new(o, "used_time", used_time_json(k->seconds));
        json_object_set_new(o, "used_days", json_integer(0));
        json_object_set_new(o, "used_seconds", json_integer(k->seconds));
        json_object_set_new(o, "slot_seconds", usage_amount_to_json(&k->amount));
        json_object_set_new(o, "days", json_array());
#undef M
        return o;
}

struct sort_ctx {
        const struct buckets *b;
        const struct db_rows *meta;
        const struct strmap *meta_index;
};

static int cmp_bucket_scope_day(const void *x, const void *y, void *data)
{
        const struct sort_ctx *s = data;
        const struct bucket *a = &s->b->v[*(const int *)x], *b = &s->b->v[*(const int *)y];
        int c = strcmp(a->scope, b->scope);
        return c ? c : (a->day > b->day) - (a->day < b->day);
}

static int cmp_bucket_name(const void *x, const void *y, void *data)
{
        const struct sort_ctx *s = data;
        const struct bucket *a = &s->b->v[*(const int *)x], *b = &s->b->v[*(const int *)y];
        int c = strcmp(a->name ? a->name : "", b->name ? b->name : "");
        if (!c)
                c = strcmp(a->scope, b->scope);
        return c ? c : (a->day > b->day) - (a->day < b->day);
}

/* Sessions in order of creation (gone ones last), then id. */
static int cmp_session_created(const void *x, const void *y, void *data)
{
        const struct sort_ctx *s = data;
        const struct bucket *a = &s->b->v[*(const int *)x], *b = &s->b->v[*(const int *)y];
        int ra = strmap_get(s->meta_index, a->scope), rb = strmap_get(s->meta_index, b->scope);
        long long ca = ra >= 0 ? db_get_int(s->meta, ra, "created_at") : INT64_MAX;
        long long cb = rb >= 0 ? db_get_int(s->meta, rb, "created_at") : INT64_MAX;
        if (ca != cb)
                return ca < cb ? -1 : 1;
        return strcmp(a->scope, b->scope);
}

/* Positions of the buckets with day == ALL_DAYS (all_days) or not, sorted. */
static int *bucket_order(const struct buckets *b, bool all_days, int (*cmp)(const void *, const void *, void *),
                         struct sort_ctx *sc, int *ret_n)
{
        int *order = xcalloc((size_t)b->n + 1, sizeof(int)), n = 0;
        for (int i = 0; i < b->n; i++)
                if ((b->v[i].day == ALL_DAYS) == all_days)
                        order[n++] = i;
        qsort_r(order, (size_t)n, sizeof(int), cmp, sc);
        *ret_n = n;
        return order;
}

static json_t *day_entry(const struct bucket *k, bool with_sessions)
{
        json_t *o = json_pack("{s:o}", "day", day_json(k->day));
        if (with_sessions)
                json_object_set_new(o, "sessions", json_integer(k->sessions));
        json_object_set_new(o, "seconds", json_integer(k->seconds));
        json_object_set_new(o, "slot_seconds", usage_amount_to_json(&k->amount));
        measured_json(o, &k->measured);
        return o;
}

/* Name each project bucket: from a session's row, else from projects
 * (`names`, which must outlive the buckets' use). */
static int name_projects(struct api_ctx *c, struct period_acc *a, const struct db_rows *meta,
                         const struct strmap *meta_index, struct db_rows **names, struct tess_error **err)
{
        int r;

        for (int i = 0; i < a->sessions.n; i++) {
                const struct bucket *k = &a->sessions.v[i];
                int row = strmap_get(meta_index, k->scope), g = bucket_find(&a->projects, k->project_id, ALL_DAYS);
                if (row >= 0 && g >= 0 && !a->projects.v[g].name)
                        a->projects.v[g].name = db_getn(meta, row, "project_name");
        }
        r = DBQ(c->m->db, "SELECT id, name FROM projects", names, err);
        if (r < 0)
                return r;
        for (int i = 0; i < (*names)->nrows; i++) {
                int g = bucket_find(&a->projects, db_get(*names, i, 0), ALL_DAYS);
                if (g >= 0 && !a->projects.v[g].name)
                        a->projects.v[g].name = db_get(*names, i, 1);
        }
        return 0;
}

static void add_real(json_t *o, const char *key, double v)
{
        json_object_set_new(o, key, json_real(json_real_value(json_object_get(o, key)) + v));
}

static json_t *build_period(struct period_acc *a, const struct db_rows *meta, const struct strmap *meta_index)
{
        struct strmap group_of, cinfo_of;
        struct sort_ctx sc = { .meta = meta, .meta_index = meta_index };
        _cleanup_free_ int *gorder = NULL, *sorder = NULL, *dorder = NULL, *pdorder = NULL;
        _cleanup_free_ json_t **cinfos = NULL;
        json_t *groups = json_array();
        int ng, ns, nd, npd;

        strmap_init(&group_of);
        strmap_init(&cinfo_of);

        /* groups by name, each with its per-day totals */
        sc.b = &a->projects;
        gorder = bucket_order(&a->projects, true, cmp_bucket_name, &sc, &ng);
        for (int i = 0; i < ng; i++) {
                const struct bucket *k = &a->projects.v[gorder[i]];
                json_t *g = json_pack("{s:o, s:s, s:o, s:f, s:I, s:f, s:I, s:I, s:o, s:[], s:[]}", "domain_name",
                                      str_or_null(k->domain), "g_id", k->scope, "g_name", str_or_null(k->name),
                                      "g_cpu_allocated", 0.0, "g_mem_allocated", (json_int_t)0, "g_gpu_allocated", 0.0,
                                      "g_sessions", (json_int_t)k->sessions, "g_used_seconds", (json_int_t)k->seconds,
                                      "g_slot_seconds", usage_amount_to_json(&k->amount), "g_days", "c_infos");
                measured_fields(g, "g_", &k->measured);
                json_object_set_new(g, "g_mem_used", json_integer(0)); /* the sum of its sessions' peaks */
                strmap_put(&group_of, k->scope, i);
                json_array_append_new(groups, g);
        }
        pdorder = bucket_order(&a->projects, false, cmp_bucket_scope_day, &sc, &npd);
        for (int i = 0; i < npd; i++) {
                const struct bucket *k = &a->projects.v[pdorder[i]];
                json_t *g = json_array_get(groups, (size_t)strmap_get(&group_of, k->scope));
                json_array_append_new(json_object_get(g, "g_days"), day_entry(k, true));
        }

        /* sessions in order of creation into their groups, then their days */
        sc.b = &a->sessions;
        sorder = bucket_order(&a->sessions, true, cmp_session_created, &sc, &ns);
        cinfos = xcalloc((size_t)ns + 1, sizeof(json_t *));
        for (int i = 0; i < ns; i++) {
                const struct bucket *k = &a->sessions.v[sorder[i]];
                json_t *g = json_array_get(groups, (size_t)strmap_get(&group_of, k->project_id));
                cinfos[i] = c_info_json(k, meta, strmap_get(meta_index, k->scope));
                strmap_put(&cinfo_of, k->scope, i);
                json_array_append_new(json_object_get(g, "c_infos"), cinfos[i]);
                add_real(g, "g_cpu_allocated", json_real_value(json_object_get(cinfos[i], "cpu_allocated")));
                add_real(g, "g_gpu_allocated", json_real_value(json_object_get(cinfos[i], "gpu_allocated")));
                json_object_set_new(g, "g_mem_allocated",
                                    json_integer(json_integer_value(json_object_get(g, "g_mem_allocated")) +
                                                 json_integer_value(json_object_get(cinfos[i], "mem_allocated"))));
                json_object_set_new(g, "g_mem_used",
                                    json_integer(json_integer_value(json_object_get(g, "g_mem_used")) +
                                                 json_integer_value(json_object_get(cinfos[i], "mem_used"))));
        }
        dorder = bucket_order(&a->sessions, false, cmp_bucket_scope_day, &sc, &nd);
        for (int i = 0; i < nd; i++) {
                const struct bucket *k = &a->sessions.v[dorder[i]];
                json_t *ci = cinfos[strmap_get(&cinfo_of, k->scope)];
                json_t *days = json_object_get(ci, "days");
                json_array_append_new(days, day_entry(k, false));
                json_object_set_new(ci, "used_days", json_integer((json_int_t)json_array_size(days)));
        }
        strmap_free(&group_of);
        strmap_free(&cinfo_of);
        return groups;
}

/* project_id (Backend.AI: group_id): it must exist and be the caller's to see. */
static int period_project(struct api_ctx *c, const char **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        const char *pid = api_param(c, "project_id");
        int r;

        if (!pid)
                pid = api_param(c, "group_id");
        if (!pid || !*pid)
                return 0;
        r = DBQ(c->m->db, "SELECT domain_name FROM projects WHERE id = ?", &rows, err, DB_TEXT(pid));
        if (r < 0)
                return r;
        if (rows->nrows == 0 || !(api_sees_domain(c, db_get(rows, 0, 0)) || streq(db_get(rows, 0, 0), c->who.domain)))
                return tess_err(err, ENOENT, "project '%.64s' not found", pid);
        *ret = pid;
        return 0;
}

/* The report of usage/period for f (its days and project set), in the
 * caller's scope. */
static int period_report(struct api_ctx *c, struct usage_filter *f, json_t **ret, struct tess_error **err)
{
        struct period_acc a;
        struct strmap meta_index;
        _cleanup_rows_ struct db_rows *meta = NULL, *names = NULL;
        int64_t now = now_usec();
        json_t *answer = NULL;
        int r;

        caller_scope(c, f);
        buckets_init(&a.sessions);
        buckets_init(&a.projects);
        strmap_init(&meta_index);
        r = usage_foreach(c->m, f, now, period_piece, &a, err);
        if (r >= 0)
                r = session_meta(c, f, now, &meta, err);
        if (r >= 0) {
                for (int i = 0; i < meta->nrows; i++)
                        if (strmap_get(&meta_index, db_get(meta, i, 0)) < 0)
                                strmap_put(&meta_index, db_get(meta, i, 0), i);
                r = name_projects(c, &a, meta, &meta_index, &names, err);
        }
        if (r >= 0)
                answer = build_period(&a, meta, &meta_index);
        buckets_release(&a.sessions);
        buckets_release(&a.projects);
        strmap_free(&meta_index);
        *ret = answer;
        return r < 0 ? r : 0;
}

void api_usage_period(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct usage_filter f = { 0 };
        json_t *answer;

        if (parse_period(c, true, &f.first_day, &f.last_day, &err) < 0 || period_project(c, &f.project_id, &err) < 0 ||
            period_report(c, &f, &answer, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, answer);
}

/* ---- GET /resource/usage/month ---- */

/* Backend.AI's month report: month=YYYYMM (query or JSON body), optional
 * group_ids (a list, or a comma-separated string, of project ids); the
 * sessions that occupied resources that month, as usage/period's c_infos,
 * in one list. */
void api_usage_month(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct usage_filter f = { 0 };
        const char *month = api_param(c, "month");
        json_t *groups = json_object_get(c->body, "group_ids"), *report, *p, *ci, *out;
        char first[16];
        size_t i, j;

        if (!month || strlen(month) != 6 || strspn(month, "0123456789") != 6)
                return api_problem(c, 400, "invalid-api-params", "month: YYYYMM is required");
        snprintf(first, sizeof(first), "%s01", month);
        if (usage_day_parse("month", first, &f.first_day, &err) < 0)
                return api_fail(c, err);
        long ym = strtol(month, NULL, 10); /* six digits, checked above */
        int year = (int)(ym / 100), mon = (int)(ym % 100);
        char next[16];
        snprintf(next, sizeof(next), "%04d%02d01", mon == 12 ? year + 1 : year, mon == 12 ? 1 : mon + 1);
        if (usage_day_parse("month", next, &f.last_day, &err) < 0)
                return api_fail(c, err);
        f.last_day--;
        const char *gq = http_query(c->req, "group_ids");
        if (groups && !json_is_array(groups) && !json_is_null(groups))
                return api_problem(c, 400, "invalid-api-params", "group_ids: a list of project ids");
        if (period_report(c, &f, &report, &err) < 0)
                return api_fail(c, err);
        out = json_array();
        json_array_foreach(report, i, p) {
                const char *gid = json_string_value(json_object_get(p, "g_id"));
                bool wanted = !json_array_size(groups) && !gq;
                json_array_foreach(groups, j, ci)
                        wanted = wanted || (gid && json_is_string(ci) && streq(json_string_value(ci), gid));
                if (gq && gid) {
                        size_t n = strlen(gid);
                        for (const char *q = strstr(gq, gid); q && !wanted; q = strstr(q + 1, gid))
                                wanted = (q == gq || q[-1] == ',') && (q[n] == '\0' || q[n] == ',');
                }
                if (wanted)
                        json_array_extend(out, json_object_get(p, "c_infos"));
        }
        json_decref(report);
        api_json(c, 200, out);
}

/* ---- GET /resource/stats/user/month ---- */

static int stats_piece(const struct usage_piece *p, void *data, struct tess_error **err)
{
        return bucket_add(data, "", p->day, p, p->counted, err);
}

static json_t *hinted(json_t *value, const char *unit)
{
        return json_pack("{s:o, s:s}", "value", value, "unit_hint", unit);
}

void api_usage_user_month(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        int64_t now = now_usec();
        struct usage_filter f = { .last_day = usage_day_of(now), .user_id = c->who.user_id };
        struct buckets days;
        json_t *answer;
        int r;

        f.first_day = f.last_day - (STATS_DAYS - 1);
        buckets_init(&days);
        r = usage_foreach(c->m, &f, now, stats_piece, &days, &err);
        if (r < 0) {
                buckets_release(&days);
                return api_fail(c, err);
        }
        answer = json_array();
        for (int32_t d = f.first_day; d <= f.last_day; d++) {
                int i = bucket_find(&days, "", d);
                struct bucket none = { .day = d };
                const struct bucket *k = i >= 0 ? &days.v[i] : &none;
                double per_day = (double)USAGE_SEC_PER_DAY;
                if (i < 0)
                        usage_amount_init(&none.amount);
                json_t *o = json_pack(
                        "{s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:o}", "date",
                        (json_int_t)(usage_day_start(d) / USEC_PER_SEC), "day", day_json(d), "num_sessions",
                        hinted(json_integer(k->sessions), "count"), "cpu_allocated",
                        hinted(json_real(usage_amount_units(&k->amount, "cpu") / per_day), "count"), "mem_allocated",
                        hinted(json_integer((json_int_t)(usage_amount_units(&k->amount, "mem") / per_day)), "bytes"),
                        "gpu_allocated",
                        hinted(json_real((usage_amount_units(&k->amount, "cuda.device") +
                                          usage_amount_units(&k->amount, "cuda.shares")) /
                                         per_day),
                               "count"),
                        "seconds", (json_int_t)k->seconds, "slot_seconds", usage_amount_to_json(&k->amount));
                json_object_set_new(o, "cpu_used",
                                    hinted(json_real((double)k->measured.cpu_used_usec / 1000.0), "msec"));
                json_object_set_new(o, "mem_used", hinted(json_integer(k->measured.mem_peak_bytes), "bytes"));
                json_object_set_new(o, "io_read_bytes", hinted(json_integer(k->measured.io_read_bytes), "bytes"));
                json_object_set_new(o, "io_write_bytes", hinted(json_integer(k->measured.io_write_bytes), "bytes"));
                json_array_append_new(answer, o);
        }
        buckets_release(&days);
        api_json(c, 200, answer);
}

/* ---- GET /admin/usage ---- */

enum group_by {
        BY_USER,
        BY_PROJECT,
        BY_DOMAIN,
        _BY_MAX,
};

static const char *const group_by_names[_BY_MAX] = { "user", "project", "domain" };

struct admin_acc {
        enum group_by by;
        struct buckets b;   /* (scope, day): session-days; (scope, ALL_DAYS): distinct sessions */
        struct strmap seen; /* "scope|session" already counted in the totals */
        struct buf key;
};

static int admin_piece(const struct usage_piece *p, void *data, struct tess_error **err)
{
        struct admin_acc *a = data;
        const char *scope = a->by == BY_USER ? p->user_id : a->by == BY_PROJECT ? p->project_id : p->domain;
        bool first;
        int r;

        buf_reset(&a->key);
        buf_printf(&a->key, "%s|%s", scope, p->session_id);
        first = strmap_get(&a->seen, a->key.data) < 0;
        if (first)
                strmap_put(&a->seen, a->key.data, 1);
        if ((r = bucket_add(&a->b, scope, p->day, p, p->counted, err)) < 0 ||
            (r = bucket_add(&a->b, scope, ALL_DAYS, p, first, err)) < 0)
                return r;
        return 0;
}

static int cmp_day_name(const void *x, const void *y, void *data)
{
        const struct sort_ctx *s = data;
        const struct bucket *a = &s->b->v[*(const int *)x], *b = &s->b->v[*(const int *)y];
        if (a->day != b->day)
                return a->day < b->day ? -1 : 1;
        return cmp_bucket_name(x, y, data);
}

/* Scope names: e-mails of users, names of projects, domains as they are. */
static int name_scopes(struct api_ctx *c, struct admin_acc *a, struct db_rows **names, struct tess_error **err)
{
        int r;

        if (a->by == BY_DOMAIN) {
                for (int i = 0; i < a->b.n; i++)
                        a->b.v[i].name = a->b.v[i].scope;
                return 0;
        }
        r = DBQ(c->m->db, a->by == BY_USER ? "SELECT id, email FROM users" : "SELECT id, name FROM projects", names,
                err);
        if (r < 0)
                return r;
        struct strmap idx;
        strmap_init(&idx);
        for (int i = 0; i < (*names)->nrows; i++)
                strmap_put(&idx, db_get(*names, i, 0), i);
        for (int i = 0; i < a->b.n; i++) {
                int row = strmap_get(&idx, a->b.v[i].scope);
                a->b.v[i].name = row >= 0 ? db_get(*names, row, 1) : NULL;
        }
        strmap_free(&idx);
        return 0;
}

static json_t *scope_entry(const struct bucket *k, bool with_day)
{
        json_t *o = json_object();
        if (with_day)
                json_object_set_new(o, "day", day_json(k->day));
        json_object_set_new(o, "scope_id", json_string(k->scope));
        json_object_set_new(o, "scope_name", str_or_null(k->name));
        json_object_set_new(o, "domain_name", str_or_null(k->domain));
        json_object_set_new(o, "sessions", json_integer(k->sessions));
        json_object_set_new(o, "seconds", json_integer(k->seconds));
        json_object_set_new(o, "slot_seconds", usage_amount_to_json(&k->amount));
        json_object_set_new(o, "cpu_used_seconds", json_real((double)k->measured.cpu_used_usec / 1e6));
        json_object_set_new(o, "io_read_bytes", json_integer(k->measured.io_read_bytes));
        json_object_set_new(o, "io_write_bytes", json_integer(k->measured.io_write_bytes));
        json_object_set_new(o, "mem_peak_bytes", json_integer(k->measured.mem_peak_bytes));
        return o;
}

void api_usage_admin(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct usage_filter f = { 0 };
        struct admin_acc a = { .by = BY_USER, .key = BUF_INIT };
        struct sort_ctx sc = { .b = &a.b };
        _cleanup_rows_ struct db_rows *names = NULL;
        _cleanup_free_ int *items = NULL, *totals = NULL;
        const char *by = api_param(c, "group_by");
        char first[16], last[16];
        int r, ni, nt;

        if (by) {
                for (a.by = 0; a.by < _BY_MAX && !streq(group_by_names[a.by], by); a.by++)
                        ;
                if (a.by == _BY_MAX)
                        return api_problem(c, 400, "invalid-api-params",
                                           "'group_by' must be user, project or domain, not '%.32s'", by);
        }
        if (parse_period(c, false, &f.first_day, &f.last_day, &err) < 0)
                return api_fail(c, err);
        caller_scope(c, &f);
        buckets_init(&a.b);
        strmap_init(&a.seen);
        r = usage_foreach(c->m, &f, now_usec(), admin_piece, &a, &err);
        if (r >= 0)
                r = name_scopes(c, &a, &names, &err);
        if (r < 0) {
                buckets_release(&a.b);
                strmap_free(&a.seen);
                buf_release(&a.key);
                return api_fail(c, err);
        }
        items = bucket_order(&a.b, false, cmp_day_name, &sc, &ni);
        totals = bucket_order(&a.b, true, cmp_bucket_name, &sc, &nt);
        json_t *answer = json_pack("{s:s, s:s, s:s, s:[], s:[]}", "start_date",
                                   usage_day_format(f.first_day, first, sizeof(first)), "end_date",
                                   usage_day_format(f.last_day, last, sizeof(last)), "group_by", group_by_names[a.by],
                                   "items", "totals");
        for (int i = 0; i < ni; i++)
                json_array_append_new(json_object_get(answer, "items"), scope_entry(&a.b.v[items[i]], true));
        for (int i = 0; i < nt; i++)
                json_array_append_new(json_object_get(answer, "totals"), scope_entry(&a.b.v[totals[i]], false));
        buckets_release(&a.b);
        strmap_free(&a.seen);
        buf_release(&a.key);
        api_json(c, 200, answer);
}
