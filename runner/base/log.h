/*
 * base/log.h — the coordinator's log, in the OpenBSD daemons' shape.
 *
 * log_warn() appends strerror(errno), log_warnx() does not; fatal() and
 * fatalx() log and exit(EXIT_SOFTWARE) — only for states the program cannot
 * continue from (out of memory), never for bad input. Messages go to stderr
 * prefixed with "testyard: "; the level is checked before formatting.
 */
#ifndef TY_LOG_H
#define TY_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#endif
