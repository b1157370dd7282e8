/*
 * base/strbuf.h — the runner's growable NUL-terminated byte buffer.
 *
 * It is the shared buffer of sdk/common/ty_buf.h (one growth rule, one
 * overflow check for the runner and the SDK alike) under the runner's
 * name, with running out of memory fatal as for xmalloc: a strbuf_ call
 * either adds everything or ends the process, so its callers check
 * nothing. Held by value; strbuf_init or {0} starts one.
 *
 * Ownership: buf is the buffer's own until strbuf_detach hands it over;
 * strbuf_release frees it.
 */
#ifndef TY_STRBUF_H
#define TY_STRBUF_H

#include "ty_buf.h"

#include <stdarg.h>
#include <stddef.h>

/* struct strbuf is struct ty__buf: fields buf, len, cap. */
#define strbuf ty__buf

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addc(struct strbuf *sb, char c);
/* s (NULL: nothing) with & < > " ' as HTML entities: safe in text and in
 * a quoted attribute. */
void strbuf_add_html(struct strbuf *sb, const char *s);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Hand the buffer to the caller (who frees it; "" when nothing was
 * added) and reset sb. */
char *strbuf_detach(struct strbuf *sb);

#endif
