/* usage.h - resource usage accounting: slot-seconds per session per day.
 *
 * A session occupies resources from the moment it is scheduled
 * (sessions.occupied_at) until it ends or goes back to PENDING.  When an
 * occupancy interval closes, its slot-seconds are split at UTC midnights
 * and added to usage_daily (one row per day and session), in the caller's
 * transaction.  Reports (the /resource/usage/period and
 * /resource/stats/user/month routes, /admin/usage and `tessera admin
 * usage`) roll the rows up per session, user, project and domain, adding
 * the still-open intervals of live sessions up to now; fair-share ordering
 * reads the same records.
 *
 * Units.  Interval ends are cut to whole seconds (floor) before splitting,
 * so a day's `seconds` is exact and a slot's slot-seconds are exactly its
 * quanta (src/common/slots.h) times those seconds.  They are kept as
 * 128-bit integers in memory (a day of a large cluster's memory in
 * byte-seconds does not fit 64 bits) and stored, like every slot column,
 * as JSON objects of decimal strings in the slot's unit: 2 cores for an
 * hour are {"cpu": "7200"} core-seconds, 4 GiB for an hour are
 * {"mem": "15461882265600"} byte-seconds, 0.5 fGPU for an hour are
 * {"cuda.shares": "1800"}.
 *
 * Measured use (what the containers used, usage_measure.h) is kept in the
 * same rows: CPU time, bytes read and written, peak memory.
 *
 * Days are counted from 1970-01-01 (day 0), UTC, and written "YYYY-MM-DD". */
#ifndef TESS_USAGE_H
#define TESS_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/slots.h"

struct buf;
struct db_arg;
struct manager;
struct api_ctx;

#define USAGE_SEC_PER_DAY ((int64_t)86400)
/* The longest period one report may ask for (as Backend.AI's usage/period). */
#define USAGE_MAX_PERIOD_DAYS 100
/* Statuses in which a session holds its slots (its interval is open). */
#define USAGE_OCCUPYING_STATUSES "('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING', 'TERMINATING')"

/* ---- days (pure) ---- */

/* The day of a time (usec since the epoch), flooring. */
int32_t usage_day_of(int64_t usec);
/* Midnight (usec) that starts `day`. */
int64_t usage_day_start(int32_t day);
/* "YYYY-MM-DD" into buf (at least 11 bytes); returns buf. */
char *usage_day_format(int32_t day, char *buf, size_t len);
/* "YYYYMMDD" (Backend.AI's form) or "YYYY-MM-DD", a real calendar date of
 * years 1970-9999.  -EINVAL with a message naming `param` otherwise. */
int usage_day_parse(const char *param, const char *s, int32_t *ret, struct tess_error **err);

/* One day's part of an interval. */
struct usage_span {
        int32_t day;
        int64_t seconds; /* 1..86400 */
};

/* Split the interval [from, to) (usec; both cut to whole seconds first)
 * at UTC midnights.  Writes at most `max` spans into ret (NULL with max 0
 * to count) and returns how many there are in all, like snprintf; 0 when
 * the interval is shorter than a second or reversed. */
size_t usage_split_days(int64_t from, int64_t to, struct usage_span *ret, size_t max);

/* ---- slot-seconds ---- */

__extension__ typedef __int128 usage_int;

struct usage_amount {
        int n;
        struct {
                char name[SLOT_NAME_MAX];
                usage_int value; /* quanta x seconds */
        } s[SLOTS_MAX];
};

void usage_amount_init(struct usage_amount *a);
usage_int usage_amount_get(const struct usage_amount *a, const char *name); /* 0 if absent */
/* a += slots x seconds (unlimited values are skipped). */
int usage_amount_add_slots(struct usage_amount *a, const struct slots *s, int64_t seconds, struct tess_error **err);
/* a += b */
int usage_amount_add(struct usage_amount *a, const struct usage_amount *b, struct tess_error **err);
/* Parse a stored JSON object of decimal strings ("{}" or NULL: empty). */
int usage_amount_from_json(struct usage_amount *a, const json_t *obj, struct tess_error **err);
int usage_amount_from_text(struct usage_amount *a, const char *text, struct tess_error **err);
/* New JSON object of decimal strings, keys sorted. */
json_t *usage_amount_to_json(const struct usage_amount *a);
/* Stored text form (caller frees). */
char *usage_amount_to_text(const struct usage_amount *a);
/* One value in the slot's unit as a decimal string ("7200", "0.5"). */
char *usage_value_format(const char *slot, usage_int v, char *buf, size_t len);
/* The slot-seconds of one slot in its unit (core-seconds, byte-seconds,
 * GPU-seconds, fGPU-seconds), as a double for display and weighting. */
double usage_amount_units(const struct usage_amount *a, const char *slot);

/* Fair-share weight of an amount: the sum over its slots of
 * weight x slot-seconds in the slot's unit.  Weights (per second):
 *   cpu          1      per core
 *   mem          0.125  per GiB (cloud prices put a GiB at about an eighth
 *                       of a vCPU; Slurm's example TRESBillingWeights give
 *                       memory a quarter)
 *   cuda.device  10     per GPU
 *   cuda.shares  10     per fGPU
 *   others       1      per unit (slots agents advertise)
 * so an hour of 4 cores, 16 GiB and one GPU weighs
 * 3600 x (4 + 2 + 10) = 57600. */
double usage_weight(const struct usage_amount *a);

/* ---- records ---- */

/* Add the interval [from, to) (usec) of a session that occupied
 * `occupying_slots` (stored JSON text of the whole session's slots) to
 * usage_daily: one row per UTC day, seconds and slot-seconds added to what
 * the row already has.  Call inside an open transaction (the one that
 * changes the session's status).  resource_group may be NULL. */
int usage_record(struct manager *m, const char *session_id, const char *user_id, const char *project_id,
                 const char *domain, const char *resource_group, const char *occupying_slots, int64_t from,
                 int64_t to, struct tess_error **err);

/* What a report covers: days first_day..last_day (inclusive) and, when
 * set, only one domain, user or project. */
struct usage_filter {
        int32_t first_day, last_day;
        const char *domain;
        const char *user_id;
        const char *project_id;
};

/* Append " AND <alias>.domain_name = ?" (and user_id, project_id) for the
 * filter's set fields to sql, their arguments to args[*nargs...] (room for
 * three more). */
void usage_filter_sql(const struct usage_filter *f, const char *alias, struct buf *sql, struct db_arg *args,
                      int *nargs);

/* Measured use (usage_measure.h): sums, except the peak. */
struct usage_measured {
        int64_t cpu_used_usec;  /* CPU time */
        int64_t io_read_bytes;  /* read from block devices */
        int64_t io_write_bytes; /* written to block devices */
        int64_t mem_peak_bytes; /* the largest memory one kernel reported */
};

/* a += b: the sums added, the larger peak kept. */
void usage_measured_add(struct usage_measured *a, const struct usage_measured *b);

/* One day of one session's usage.  Strings live for the callback only. */
struct usage_piece {
        int32_t day;
        const char *session_id, *user_id, *project_id, *domain, *resource_group;
        int64_t seconds;
        struct usage_amount amount;
        struct usage_measured measured; /* zero in open pieces */
        bool open; /* from a live session's still-open interval, up to now */
        /* count this piece as a session-day: false only for an open piece
         * on a day the session also has a recorded row (it was scheduled
         * twice that day), so that counting sessions per day stays right */
        bool counted;
};

typedef int (*usage_piece_fn)(const struct usage_piece *p, void *data, struct tess_error **err);

/* Call fn for every recorded row of usage_daily within the filter, then
 * for each day of the open intervals of live sessions (occupied_at set,
 * status occupying) clipped to the filter's days and to `now`.  Stops at
 * the first negative return of fn and returns it. */
int usage_foreach(struct manager *m, const struct usage_filter *f, int64_t now, usage_piece_fn fn, void *data,
                  struct tess_error **err);

/* Decayed, weighted usage of each user for fair-share: every day's
 * usage_weight() multiplied by 2^(-age / half_life), where age is whole
 * days before the day of `now` (today's usage counts fully), over the
 * days from `now - lookback` to now, open intervals included up to `now`.
 * half_life <= 0 means no decay.  Calls fn once per user with usage,
 * users in id order. */
typedef void (*usage_user_fn)(const char *user_id, double usage, void *data);
int usage_fair_share(struct manager *m, int64_t now, int64_t half_life, int64_t lookback, usage_user_fn fn,
                     void *data, struct tess_error **err);

/* The usage routes (api_usage.c). */
void api_usage_period(struct api_ctx *c);
void api_usage_month(struct api_ctx *c);
void api_usage_user_month(struct api_ctx *c);
void api_usage_admin(struct api_ctx *c);

#endif
