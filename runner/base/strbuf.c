/*
 * strbuf.c — the shared byte buffer (ty_buf.c) for the runner, where an
 * allocation that fails ends the process (see base/strbuf.h).
 */
#include "base/strbuf.h"

#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A buffer that could not grow: out of memory, or a size past size_t. */
static void
check(const struct strbuf *sb, int rc, size_t more)
{
    if (rc == -ENOMEM)
        fatalx("out of memory growing a buffer of %zu bytes by %zu", sb->len,
               more);
}

void
strbuf_init(struct strbuf *sb)
{
    *sb = (struct strbuf){0};
}

void
strbuf_release(struct strbuf *sb)
{
    ty__buf_release(sb);
}

void
strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
    check(sb, ty__buf_add(sb, data, len), len);
}

void
strbuf_adds(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void
strbuf_addc(struct strbuf *sb, char c)
{
    strbuf_add(sb, &c, 1);
}

void
strbuf_add_html(struct strbuf *sb, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '&':
            strbuf_adds(sb, "&amp;");
            break;
        case '<':
            strbuf_adds(sb, "&lt;");
            break;
        case '>':
            strbuf_adds(sb, "&gt;");
            break;
        case '"':
            strbuf_adds(sb, "&quot;");
            break;
        case '\'':
            strbuf_adds(sb, "&#39;");
            break;
        default:
            strbuf_addc(sb, *s);
        }
    }
}

void
strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    check(sb, ty__buf_vaddf(sb, fmt, ap), 0);
}

void
strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

char *
strbuf_detach(struct strbuf *sb)
{
    char *p = sb->buf;

    if (p == NULL)
        p = xstrdup("");
    strbuf_init(sb);
    return p;
}
