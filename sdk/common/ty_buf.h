/*
 * ty_buf.h — the one growable byte buffer of testyard, shared by the SDK
 * (metrics records, profile.proto, ZMTP frames) and the runner (whose
 * struct strbuf, runner/base/strbuf.h, is this buffer with allocation
 * failure made fatal).
 *
 * A buffer is held by value and starts zeroed ({0}). Its capacity starts
 * at TY__BUF_MIN bytes and doubles; a size that would not fit in size_t
 * is refused like a failed allocation. After any failure `oom` stays set,
 * later additions do nothing, and the contents are what was added before:
 * callers check once, at the end. Internal to testyard.
 *
 * Ownership: buf is the buffer's own; ty__buf_release frees it.
 */
#ifndef TY_BUF_H
#define TY_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define TY__BUF_MIN 256

struct ty__buf {
    char *buf;  /* NUL-terminated once anything was added; NULL before */
    size_t len; /* bytes held, not counting the NUL */
    size_t cap;
    bool oom; /* growing failed: the contents are incomplete */
};

/* Room for more bytes after len and a NUL after them: 0, or -ENOMEM (and
 * oom set) when it cannot be had. */
int ty__buf_reserve(struct ty__buf *b, size_t more);
/* Each adds and keeps buf NUL-terminated: 0, or -ENOMEM. */
int ty__buf_add(struct ty__buf *b, const void *data, size_t len);
int ty__buf_adds(struct ty__buf *b, const char *s);
int ty__buf_addc(struct ty__buf *b, char c);
int ty__buf_addf(struct ty__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int ty__buf_vaddf(struct ty__buf *b, const char *fmt, va_list ap);
/* s as one CSV field (RFC 4180), for the CSV files an instance's data
 * reaches (work.csv's counter names): control characters (below 0x20, and
 * 0x7f) dropped, and the rest in double quotes, each quote doubled, when
 * it holds a comma or a double quote. 0, or -ENOMEM. */
int ty__buf_add_csv(struct ty__buf *b, const char *s);
/* Free the bytes; b is empty (and usable) again. */
void ty__buf_release(struct ty__buf *b);

#endif
