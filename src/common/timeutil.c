/* timeutil.c - see timeutil.h. */
#include "common/compat.h"

#include <ctype.h>
#include <inttypes.h>
#include <time.h>

#include "common/timeutil.h"

int64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

int64_t monotonic_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

char *time_format_iso(int64_t usec, char *buf, size_t len)
{
        time_t sec = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        gmtime_r(&sec, &tm);
        snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06lld+00:00", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)(usec % USEC_PER_SEC));
        return buf;
}

static int take_digits(const char **p, int n, int *ret)
{
        int v = 0;
        for (int i = 0; i < n; i++) {
                if (!isdigit((unsigned char)(*p)[i]))
                        return -EINVAL;
                v = v * 10 + ((*p)[i] - '0');
        }
        *p += n;
        *ret = v;
        return 0;
}

static int64_t days_from_civil(int y, int m, int d)
{
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static int finish(int y, int mo, int d, int h, int mi, int s, int64_t frac_us, int off_sec, int64_t *ret_usec,
                  char ret_ymd[9])
{
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
                return -EINVAL;
        int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off_sec;
        if (ret_usec)
                *ret_usec = secs * USEC_PER_SEC + frac_us;
        if (ret_ymd) {
                char tmp[32];
                snprintf(tmp, sizeof(tmp), "%04d%02d%02d", y % 10000, mo, d);
                memcpy(ret_ymd, tmp, 8);
                ret_ymd[8] = '\0';
        }
        return 0;
}

static int parse_iso(const char *p, int64_t *ret_usec, char ret_ymd[9])
{
        int y, mo, d, h = 0, mi = 0, s = 0, off = 0;
        int64_t frac = 0;

        if (take_digits(&p, 4, &y) < 0 || *p++ != '-' || take_digits(&p, 2, &mo) < 0 || *p++ != '-' ||
            take_digits(&p, 2, &d) < 0)
                return -EINVAL;
        if (*p == 'T' || *p == 't' || *p == ' ') {
                p++;
                if (take_digits(&p, 2, &h) < 0 || *p++ != ':' || take_digits(&p, 2, &mi) < 0)
                        return -EINVAL;
                if (*p == ':') {
                        p++;
                        if (take_digits(&p, 2, &s) < 0)
                                return -EINVAL;
                        if (*p == '.' || *p == ',') {
                                int64_t scale = 100000;
                                p++;
                                if (!isdigit((unsigned char)*p))
                                        return -EINVAL;
                                while (isdigit((unsigned char)*p)) {
                                        frac += (*p - '0') * scale;
                                        scale /= 10;
                                        p++;
                                }
                        }
                }
        }
        if (*p == 'Z' || *p == 'z') {
                p++;
        } else if (*p == '+' || *p == '-') {
                int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
                if (take_digits(&p, 2, &oh) < 0)
                        return -EINVAL;
                if (*p == ':')
                        p++;
                if (*p && take_digits(&p, 2, &om) < 0)
                        return -EINVAL;
                if (oh > 23 || om > 59)
                        return -EINVAL;
                off = sign * (oh * 3600 + om * 60);
        }
        if (*p)
                return -EINVAL;
        return finish(y, mo, d, h, mi, s, frac, off, ret_usec, ret_ymd);
}

/* "Sun, 22 Nov 2026 03:54:59 GMT" */
static int parse_rfc1123(const char *p, int64_t *ret_usec, char ret_ymd[9])
{
        static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
        int d, y, h, mi, s, mo;
        char mon[4] = { 0 };

        const char *comma = strchr(p, ',');
        if (!comma)
                return -EINVAL;
        p = comma + 1;
        while (*p == ' ')
                p++;
        if (take_digits(&p, 2, &d) < 0 || *p++ != ' ')
                return -EINVAL;
        if (strnlen(p, 3) != 3)
                return -EINVAL;
        memcpy(mon, p, 3);
        const char *m = strstr(months, mon);
        if (!m || (m - months) % 3)
                return -EINVAL;
        mo = (int)(m - months) / 3 + 1;
        p += 3;
        if (*p++ != ' ' || take_digits(&p, 4, &y) < 0 || *p++ != ' ' || take_digits(&p, 2, &h) < 0 ||
            *p++ != ':' || take_digits(&p, 2, &mi) < 0 || *p++ != ':' || take_digits(&p, 2, &s) < 0)
                return -EINVAL;
        if (strcmp(p, " GMT") && strcmp(p, " UTC") && strcmp(p, " +0000"))
                return -EINVAL;
        return finish(y, mo, d, h, mi, s, 0, 0, ret_usec, ret_ymd);
}

int time_parse(const char *s, int64_t *ret_usec, char ret_ymd[9])
{
        if (!s || strlen(s) > 64)
                return -EINVAL;
        if (isdigit((unsigned char)s[0]))
                return parse_iso(s, ret_usec, ret_ymd);
        return parse_rfc1123(s, ret_usec, ret_ymd);
}

int duration_parse(const char *s, int64_t *ret_usec)
{
        char *end;
        int64_t mult = USEC_PER_SEC;

        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s)
                return -EINVAL;
        if (*end) {
                switch (*end) {
                case 's': mult = USEC_PER_SEC; break;
                case 'm': mult = 60 * USEC_PER_SEC; break;
                case 'h': mult = 3600 * USEC_PER_SEC; break;
                case 'd': mult = 86400 * USEC_PER_SEC; break;
                case 'w': mult = 7 * 86400 * USEC_PER_SEC; break;
                default: return -EINVAL;
                }
                if (end[1])
                        return -EINVAL;
        }
        if (v * (double)mult > 9.0e18)
                return -EINVAL;
        *ret_usec = (int64_t)(v * (double)mult);
        return 0;
}
