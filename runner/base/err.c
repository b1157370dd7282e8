/*
 * err.c — filling and decorating struct err (see base/err.h for the contract).
 */
#include "base/err.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void
err_vset(struct err *err, int code, const char *fmt, va_list ap)
{
    int saved = errno;

    err->code = code;
    err->status = 0;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    errno = saved;
}

int
err_set(struct err *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return -1;
    va_start(ap, fmt);
    err_vset(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

int
err_sys(struct err *err, int code, const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    size_t len;

    if (err == NULL)
        return -1;
    va_start(ap, fmt);
    err_vset(err, code, fmt, ap);
    va_end(ap);
    len = strlen(err->msg);
    if (len < sizeof(err->msg))
        snprintf(err->msg + len, sizeof(err->msg) - len, ": %s",
                 strerror(code));
    errno = saved;
    return -1;
}

int
err_status(struct err *err, int status)
{
    if (err != NULL)
        err->status = status;
    return -1;
}

int
err_prefix(struct err *err, const char *fmt, ...)
{
    char buf[2 * ERR_MSG_MAX + 2];
    int saved = errno;
    va_list ap;
    int n;

    if (err == NULL)
        return -1;
    va_start(ap, fmt);
    n = vsnprintf(buf, ERR_MSG_MAX, fmt, ap);
    va_end(ap);
    errno = saved;
    if (n < 0)
        return -1;
    if (n >= ERR_MSG_MAX)
        n = ERR_MSG_MAX - 1;
    memcpy(buf + n, ": ", 2);
    memcpy(buf + n + 2, err->msg, strlen(err->msg) + 1);
    memcpy(err->msg, buf, sizeof(err->msg) - 1);
    err->msg[sizeof(err->msg) - 1] = '\0';
    return -1;
}

void
err_clear(struct err *err)
{
    if (err == NULL)
        return;
    err->code = 0;
    err->status = 0;
    err->msg[0] = '\0';
}

int
err_io_status(int code)
{
    switch (code) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EFBIG:
        return EXIT_IOERR;
    default:
        return EXIT_CANTCREAT;
    }
}

static pthread_mutex_t output_mu = PTHREAD_MUTEX_INITIALIZER;
static struct err output_err;

void
err_output_note(const struct err *e)
{
    pthread_mutex_lock(&output_mu);
    if (output_err.code == 0) {
        output_err = *e;
        if (output_err.code == 0)
            output_err.code = EIO;
        if (output_err.status == 0)
            output_err.status = err_io_status(output_err.code);
    }
    pthread_mutex_unlock(&output_mu);
}

int
err_output_take(struct err *out)
{
    int got;

    pthread_mutex_lock(&output_mu);
    got = output_err.code != 0;
    if (got) {
        *out = output_err;
        output_err = (struct err){0};
    }
    pthread_mutex_unlock(&output_mu);
    return got;
}
