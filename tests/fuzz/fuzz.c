/*
 * fuzz.c — the harnesses' scratch folder and small helpers (see fuzz.h).
 *
 * Each fuzzing process has its own folder under TMPDIR, so jobs run side
 * by side do not share files; it is removed at exit (a crash leaves it,
 * with the input that caused it in its last file).
 */
#include "fuzz.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *scratch;

static void
remove_scratch(void)
{
    struct err err = {0};

    if (scratch != NULL)
        rm_rf(scratch, &err);
}

const char *
fuzz_dir(void)
{
    const char *tmp = getenv("TMPDIR");

    if (scratch != NULL)
        return scratch;
    scratch = xasprintf("%s/ty-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(scratch) == NULL)
        fuzz_fail("mkdtemp %s: %s", scratch, strerror(errno));
    atexit(remove_scratch);
    return scratch;
}

char *
fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    char *path = path_join(fuzz_dir(), name);
    char *dir = path_dirname(path);
    struct err err = {0};
    int fd;

    if (mkdir_p(dir, &err) < 0)
        fuzz_fail("%s", err.msg);
    free(dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fd_write_all(fd, data, size) < 0)
        fuzz_fail("%s: %s", path, strerror(errno));
    close(fd);
    return path;
}

char *
fuzz_root(void)
{
    const char *env = getenv("TY_FUZZ_ROOT");
    char *exe, *root;

    if (env != NULL && *env != '\0')
        return xstrdup(env);
    exe = exe_dir();
    if (exe == NULL)
        return xstrdup(".");
    root = xasprintf("%s/../..", exe);
    free(exe);
    return root;
}

char *
fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = xmalloc(size + 1);

    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

bool
fuzz_json_same(const cJSON *a, const cJSON *b)
{
    char *pa, *pb;
    bool same;

    if (a == NULL || b == NULL)
        return a == b;
    pa = cJSON_PrintUnformatted(a);
    pb = cJSON_PrintUnformatted(b);
    same = pa != NULL && pb != NULL && strcmp(pa, pb) == 0;
    free(pa);
    free(pb);
    return same;
}

void
fuzz_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
