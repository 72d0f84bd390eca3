/* log.c - see log.h. */
#include "common/compat.h"

#include <stdarg.h>
#include <time.h>

#include "common/log.h"

enum log_level log_max_level = LOG_LEVEL_INFO;
static const char *log_prefix = "tessera";

static const char *const level_names[] = {
        [LOG_LEVEL_DEBUG] = "debug", [LOG_LEVEL_INFO] = "info",   [LOG_LEVEL_NOTICE] = "notice",
        [LOG_LEVEL_WARN] = "warn",   [LOG_LEVEL_ERROR] = "error", [LOG_LEVEL_QUIET] = "quiet",
};

void log_set_prefix(const char *prefix)
{
        log_prefix = prefix;
}

int log_level_from_string(const char *s)
{
        for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
                if (streq(s, level_names[i]))
                        return (int)i;
        return -EINVAL;
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap, const char *suffix)
        __attribute__((format(printf, 2, 0)));

static void log_vmsg(enum log_level level, const char *fmt, va_list ap, const char *suffix)
{
        char line[4096];
        struct timespec ts;
        struct tm tm;
        int n;

        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_prefix,
                     level_names[level]);
        if (n < 0 || (size_t)n >= sizeof(line))
                n = 0;
        int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        if (m > 0)
                n = (size_t)(n + m) >= sizeof(line) ? (int)sizeof(line) - 1 : n + m;
        if (suffix)
                n += snprintf(line + n, sizeof(line) - (size_t)n, ": %s", suffix);
        if ((size_t)n >= sizeof(line) - 1)
                n = (int)sizeof(line) - 2;
        line[n++] = '\n';
        fwrite(line, 1, (size_t)n, stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        log_vmsg(level, fmt, ap, NULL);
        va_end(ap);
}

int log_errno(enum log_level level, int r, const char *fmt, ...)
{
        va_list ap;

        if (level < log_max_level)
                return r;
        va_start(ap, fmt);
        log_vmsg(level, fmt, ap, strerror(r < 0 ? -r : r));
        va_end(ap);
        return r;
}
