/*
 * ty_buf.c — the growable byte buffer (see ty_buf.h). It never exits and
 * never asserts: the SDK runs inside plans (and inside programs the heap
 * profiler is preloaded into), so running out of memory is data here; the
 * runner's strbuf turns it into a fatal error.
 */
#include "ty_buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
ty__buf_reserve(struct ty__buf *b, size_t more)
{
    size_t need, cap;
    char *p;

    if (b->oom)
        return -ENOMEM;
    if (more > SIZE_MAX - 1 - b->len)
        goto fail;
    need = b->len + more + 1;
    if (need <= b->cap)
        return 0;
    for (cap = b->cap ? b->cap : TY__BUF_MIN; cap < need;)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    p = realloc(b->buf, cap);
    if (p == NULL)
        goto fail;
    b->buf = p;
    b->cap = cap;
    return 0;
fail:
    b->oom = true;
    return -ENOMEM;
}

int
ty__buf_add(struct ty__buf *b, const void *data, size_t len)
{
    if (ty__buf_reserve(b, len) < 0)
        return -ENOMEM;
    if (len > 0)
        memcpy(b->buf + b->len, data, len);
    b->len += len;
    b->buf[b->len] = '\0';
    return 0;
}

int
ty__buf_adds(struct ty__buf *b, const char *s)
{
    return ty__buf_add(b, s, strlen(s));
}

int
ty__buf_addc(struct ty__buf *b, char c)
{
    return ty__buf_add(b, &c, 1);
}

int
ty__buf_vaddf(struct ty__buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return -EINVAL;
    if (ty__buf_reserve(b, (size_t)n) < 0)
        return -ENOMEM;
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int
ty__buf_addf(struct ty__buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = ty__buf_vaddf(b, fmt, ap);
    va_end(ap);
    return rc;
}

int
ty__buf_add_csv(struct ty__buf *b, const char *s)
{
    bool quote = strpbrk(s, ",\"") != NULL;

    if (quote)
        ty__buf_addc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p < 0x20 || *p == 0x7f)
            continue;
        if (*p == '"')
            ty__buf_addc(b, '"');
        ty__buf_addc(b, (char)*p);
    }
    if (quote)
        ty__buf_addc(b, '"');
    return b->oom ? -ENOMEM : 0;
}

void
ty__buf_release(struct ty__buf *b)
{
    free(b->buf);
    *b = (struct ty__buf){0};
}
