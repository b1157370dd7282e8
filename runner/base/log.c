/*
 * log.c — leveled messages on stderr (see base/log.h).
 */
#include "base/log.h"

#include "base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum log_level current_level = LOG_INFO;

void
log_set_level(enum log_level level)
{
    current_level = level;
}

enum log_level
log_get_level(void)
{
    return current_level;
}

static void
vlog(enum log_level level, const char *fmt, va_list ap, int errnum)
{
    char buf[2048];

    if (level > current_level)
        return;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    if (errnum != 0)
        fprintf(stderr, "testyard: %s: %s\n", buf, strerror(errnum));
    else
        fprintf(stderr, "testyard: %s\n", buf);
}

void
log_warn(const char *fmt, ...)
{
    int saved = errno;
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_WARN, fmt, ap, saved);
    va_end(ap);
    errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_WARN, fmt, ap, 0);
    va_end(ap);
}

void
log_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_INFO, fmt, ap, 0);
    va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_DEBUG, fmt, ap, 0);
    va_end(ap);
}

void
fatal(const char *fmt, ...)
{
    int saved = errno;
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_ERROR, fmt, ap, saved);
    va_end(ap);
    exit(EXIT_SOFTWARE);
}

void
fatalx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_ERROR, fmt, ap, 0);
    va_end(ap);
    exit(EXIT_SOFTWARE);
}
