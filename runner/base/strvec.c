/*
 * strvec.c — the one string vector of the runner (see base/strvec.h):
 * argv for the compiler and pkg-config, environments for instances and the
 * dynamic loader, the libraries of an image, cgroup folders.
 */
#include "base/strvec.h"

#include "base/strbuf.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
strvec_init(struct strvec *sv)
{
    *sv = (struct strvec){0};
}

void
strvec_release(struct strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    strvec_init(sv);
}

void
strvec_push_owned(struct strvec *sv, char *s)
{
    xgrow(&sv->v, &sv->cap, sv->n + 2, sizeof(*sv->v));
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

void
strvec_push(struct strvec *sv, const char *s)
{
    strvec_push_owned(sv, xstrdup(s));
}

void
strvec_vpushf(struct strvec *sv, const char *fmt, va_list ap)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_vaddf(&sb, fmt, ap);
    strvec_push_owned(sv, strbuf_detach(&sb));
}

void
strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strvec_vpushf(sv, fmt, ap);
    va_end(ap);
}

size_t
strvec_len(const struct strvec *sv)
{
    return sv->n;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void
strvec_sort_uniq(struct strvec *sv)
{
    size_t out = 0;

    if (sv->n == 0)
        return;
    qsort(sv->v, sv->n, sizeof(*sv->v), cmp_str);
    for (size_t i = 0; i < sv->n; i++) {
        if (out > 0 && strcmp(sv->v[out - 1], sv->v[i]) == 0)
            free(sv->v[i]);
        else
            sv->v[out++] = sv->v[i];
    }
    sv->n = out;
    sv->v[out] = NULL;
}

char **
strvec_detach(struct strvec *sv)
{
    char **v = sv->v ? sv->v : xcalloc(1, sizeof(*v));

    strvec_init(sv);
    return v;
}

/* The length of kv's "KEY=" (or of all of it without '='). */
static size_t
env_key_len(const char *kv)
{
    const char *eq = strchr(kv, '=');

    return eq ? (size_t)(eq - kv) + 1 : strlen(kv);
}

void
strvec_setenv(struct strvec *sv, const char *kv)
{
    size_t k = env_key_len(kv);

    for (size_t i = 0; i < sv->n; i++) {
        if (strncmp(sv->v[i], kv, k) == 0 && env_key_len(sv->v[i]) == k) {
            free(sv->v[i]);
            sv->v[i] = xstrdup(kv);
            return;
        }
    }
    strvec_push(sv, kv);
}

const char *
strv_getenv(char *const *v, const char *key)
{
    size_t k = strlen(key);

    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        if (strncmp(v[i], key, k) == 0 && v[i][k] == '=')
            return v[i] + k + 1;
    return NULL;
}

size_t
strv_len(char *const *v)
{
    size_t n = 0;

    while (v != NULL && v[n] != NULL)
        n++;
    return n;
}

void
strv_free(char **v)
{
    if (v == NULL)
        return;
    for (char **p = v; *p != NULL; p++)
        free(*p);
    free(v);
}
