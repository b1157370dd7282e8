/*
 * base/strvec.h — a growable, NULL-terminated vector of strings: argv and
 * environments under construction, lists of names read from folders.
 *
 * A struct strvec is held by value and starts zeroed ({0}) or through
 * strvec_init. Once anything is pushed, v[n] is NULL, so v can be handed
 * to execve(2) or kept as a plain NULL-terminated array (strvec_detach).
 *
 * Ownership: the vector owns its strings. strvec_push copies its argument;
 * strvec_push_owned takes the caller's. A detached array and every string
 * in it are the caller's, freed with strv_free.
 */
#ifndef TY_STRVEC_H
#define TY_STRVEC_H

#include <stdarg.h>
#include <stddef.h>

struct strvec {
    char **v; /* NULL until the first push, then NULL-terminated */
    size_t n; /* strings held, not counting the NULL */
    size_t cap;
};

void strvec_init(struct strvec *sv);
/* Free every string and the array; sv is empty again. */
void strvec_release(struct strvec *sv);
/* Add a copy of s. */
void strvec_push(struct strvec *sv, const char *s);
/* Add s itself: sv owns it from now on. */
void strvec_push_owned(struct strvec *sv, char *s);
/* Add a formatted string. */
void strvec_pushf(struct strvec *sv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strvec_vpushf(struct strvec *sv, const char *fmt, va_list ap);
size_t strvec_len(const struct strvec *sv);
/* Sort by strcmp and free repeats, so each string appears once. */
void strvec_sort_uniq(struct strvec *sv);
/* The NULL-terminated array (never NULL: an empty vector gives {NULL}),
 * now the caller's; sv is empty again. */
char **strvec_detach(struct strvec *sv);

/* Environments ("KEY=value" strings). Set kv (a copy) in place of the
 * string with the same KEY, or add it at the end. */
void strvec_setenv(struct strvec *sv, const char *kv);
/* The value of key in the NULL-terminated environment v, or NULL.
 * Borrowed from v. */
const char *strv_getenv(char *const *v, const char *key);

/* Strings in a NULL-terminated array; 0 for NULL. */
size_t strv_len(char *const *v);
/* Free a NULL-terminated array and every string in it; NULL is fine. */
void strv_free(char **v);

#endif
