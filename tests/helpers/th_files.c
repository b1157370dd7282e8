/*
 * th_files.c — fixture files for tests (see th_files.h).
 */
#include "th_files.h"

#include "th.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p of the folder holding path. */
static void
make_parents(const char *path)
{
    char *copy = strdup(path);

    for (char *p = copy ? copy + 1 : NULL; p && *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
            th_fail(__FILE__, __LINE__, "mkdir %s: %s", copy, strerror(errno));
        *p = '/';
    }
    free(copy);
}

static char *
joined(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *path = malloc(n);

    if (path == NULL)
        abort();
    snprintf(path, n, "%s/%s", dir, rel);
    return path;
}

static char *
write_at(const char *dir, const char *rel, const char *text)
{
    char *path = joined(dir, rel);
    FILE *f;
    bool bad;

    make_parents(path);
    f = fopen(path, "w");
    if (f == NULL) {
        th_fail(__FILE__, __LINE__, "create %s: %s", path, strerror(errno));
        return path;
    }
    bad = fputs(text, f) == EOF;
    if (fclose(f) == EOF || bad)
        th_fail(__FILE__, __LINE__, "write %s: %s", path, strerror(errno));
    return path;
}

void
th_write(const char *dir, const char *rel, const char *text)
{
    free(write_at(dir, rel, text));
}

char *
th_write_tmp(const char *rel, const char *text)
{
    return write_at(th_tmpdir(), rel, text);
}

char *
th_read_all(FILE *f, size_t *lenp)
{
    size_t len = 0, cap = 8192, n;
    char *buf = malloc(cap);

    if (buf == NULL)
        abort();
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 4096) {
            char *more = realloc(buf, cap *= 2);

            if (more == NULL)
                abort();
            buf = more;
        }
    }
    buf[len] = '\0';
    if (lenp != NULL)
        *lenp = len;
    return buf;
}

char *
th_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    char *buf;

    if (f == NULL)
        return NULL;
    buf = th_read_all(f, len);
    fclose(f);
    return buf;
}
