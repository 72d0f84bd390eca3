/* timeutil.h - clocks and the date formats on the wire.
 *
 * Timestamps in the database and JSON are microseconds since the epoch
 * (int64) internally and ISO 8601 UTC strings on the wire. */
#ifndef TESS_TIMEUTIL_H
#define TESS_TIMEUTIL_H

#include <stdint.h>

#define USEC_PER_SEC ((int64_t)1000000)
#define USEC_PER_MSEC ((int64_t)1000)

int64_t now_usec(void);       /* CLOCK_REALTIME */
int64_t monotonic_usec(void); /* CLOCK_MONOTONIC */

/* "2026-11-22T03:54:59.271072+00:00" into buf (at least 40 bytes). */
char *time_format_iso(int64_t usec, char *buf, size_t len);

/* Parse an ISO 8601 date-time (fraction and offset optional; no offset =
 * UTC) or an RFC 1123 HTTP date.  ret_usec is UTC; ret_ymd (9 bytes) gets
 * the calendar date as written in the string (its own time zone), which is
 * what Backend.AI's signing key derivation uses.  -EINVAL if malformed. */
int time_parse(const char *s, int64_t *ret_usec, char ret_ymd[9]);

/* Parse a duration: "30s", "5m", "1h", "2d", "1w" or plain seconds. */
int duration_parse(const char *s, int64_t *ret_usec);

#endif
