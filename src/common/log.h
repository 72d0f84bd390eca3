/* log.h - leveled logging to stderr for the daemons and the CLI.
 *
 * The level is checked before formatting.  src/common itself only uses
 * log_debug; errors travel up as struct tess_error.  Messages: lowercase,
 * failed operation first, user values in single quotes, key=value ids. */
#ifndef TESS_LOG_H
#define TESS_LOG_H

enum log_level {
        LOG_LEVEL_DEBUG,
        LOG_LEVEL_INFO,
        LOG_LEVEL_NOTICE,
        LOG_LEVEL_WARN,
        LOG_LEVEL_ERROR,
        LOG_LEVEL_QUIET,
};

extern enum log_level log_max_level;

void log_set_prefix(const char *prefix);
int log_level_from_string(const char *s); /* -EINVAL if unknown */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log with ": strerror(-r)" appended; returns r. */
int log_errno(enum log_level level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_at(lvl, ...)                               \
        do {                                           \
                if ((lvl) >= log_max_level)            \
                        log_msg((lvl), __VA_ARGS__);   \
        } while (0)
#define log_debug(...) log_at(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...) log_at(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_notice(...) log_at(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_warn(...) log_at(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_error(...) log_at(LOG_LEVEL_ERROR, __VA_ARGS__)

#endif
