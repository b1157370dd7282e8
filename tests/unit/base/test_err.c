/*
 * test_err.c — struct err (base/err.h): what each function fills, that
 * long messages are cut at ERR_MSG_MAX and stay terminated, that errno is
 * left as it was, the exit statuses for output errors, and the one
 * output error noted across threads.
 */
#include "base/err.h"
#include "th.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A message of n 'x's (n < ERR_MSG_MAX * 2). */
static const char *
xs(size_t n)
{
    static char buf[ERR_MSG_MAX * 2];

    memset(buf, 'x', n);
    buf[n] = '\0';
    return buf;
}

/* The output note is process-wide: every case starts without one. */
static void
reset_output_note(void)
{
    struct err e;

    while (err_output_take(&e))
        ;
}

static void
t_set(void)
{
    struct err e = {0};

    CHECK_EQ_INT(err_set(&e, EINVAL, "%s:%d: expected %s", "f.yaml", 3, "x"),
                 -1);
    CHECK_EQ_INT(e.code, EINVAL);
    CHECK_EQ_INT(e.status, 0);
    CHECK_EQ_STR(e.msg, "f.yaml:3: expected x");
    /* a second one replaces the first, whole: its status too */
    err_status(&e, EXIT_DATAERR);
    err_set(&e, ENOENT, "short");
    CHECK_EQ_INT(e.code, ENOENT);
    CHECK_EQ_INT(e.status, 0);
    CHECK_EQ_STR(e.msg, "short");
    err_status(&e, EXIT_NOINPUT);
    err_sys(&e, EIO, "read");
    CHECK_EQ_INT(e.status, 0);
    CHECK_EQ_INT(err_set(NULL, EINVAL, "nobody listens"), -1);
}

static void
t_set_truncates(void)
{
    struct err e = {0};

    err_set(&e, E2BIG, "%s", xs(ERR_MSG_MAX + 100));
    CHECK_EQ_INT(strlen(e.msg), ERR_MSG_MAX - 1);
    CHECK_EQ_INT(e.msg[ERR_MSG_MAX - 2], 'x');
    CHECK_EQ_INT(e.code, E2BIG);
}

static void
t_sys(void)
{
    struct err e = {0};
    char want[ERR_MSG_MAX];

    CHECK_EQ_INT(err_sys(&e, EACCES, "open %s", "/etc/x"), -1);
    CHECK_EQ_INT(e.code, EACCES);
    snprintf(want, sizeof(want), "open /etc/x: %s", strerror(EACCES));
    CHECK_EQ_STR(e.msg, want);
    CHECK_CONTAINS(e.msg, "Permission denied");
    CHECK_EQ_INT(err_sys(NULL, EACCES, "x"), -1);
}

static void
t_sys_truncates(void)
{
    struct err e = {0};

    /* the strerror part is cut, not the start of the message */
    err_sys(&e, ENOSPC, "%s", xs(ERR_MSG_MAX - 5));
    CHECK_EQ_INT(strlen(e.msg), ERR_MSG_MAX - 1);
    CHECK(strncmp(e.msg, xs(ERR_MSG_MAX - 5), ERR_MSG_MAX - 5) == 0);
    CHECK_EQ_STR(e.msg + ERR_MSG_MAX - 5, ": No");
    /* a message that fills the buffer leaves no room for strerror */
    err_sys(&e, ENOSPC, "%s", xs(ERR_MSG_MAX + 10));
    CHECK_EQ_INT(strlen(e.msg), ERR_MSG_MAX - 1);
    CHECK(strchr(e.msg, ':') == NULL);
    CHECK_EQ_INT(e.code, ENOSPC);
}

static void
t_errno_kept(void)
{
    struct err e = {0};

    errno = EAGAIN;
    err_set(&e, EINVAL, "a");
    CHECK_EQ_INT(errno, EAGAIN);
    /* strerror of a code it does not know may set errno: not here */
    err_sys(&e, 99999, "b");
    CHECK_EQ_INT(errno, EAGAIN);
    CHECK_EQ_INT(e.code, 99999);
    err_prefix(&e, "c");
    CHECK_EQ_INT(errno, EAGAIN);
    err_status(&e, EXIT_DATAERR);
    err_clear(&e);
    CHECK_EQ_INT(errno, EAGAIN);
}

static void
t_status(void)
{
    struct err e = {0};

    err_set(&e, EINVAL, "bad");
    CHECK_EQ_INT(err_status(&e, EXIT_DATAERR), -1);
    CHECK_EQ_INT(e.status, EXIT_DATAERR);
    CHECK_EQ_INT(e.code, EINVAL);
    CHECK_EQ_STR(e.msg, "bad");
    CHECK_EQ_INT(err_status(NULL, EXIT_DATAERR), -1);
    /* the codes the README lists */
    CHECK_EQ_INT(EXIT_PLAN_FAILED, 1);
    CHECK_EQ_INT(EXIT_USAGE, 64);
    CHECK_EQ_INT(EXIT_DATAERR, 65);
    CHECK_EQ_INT(EXIT_NOINPUT, 66);
    CHECK_EQ_INT(EXIT_UNAVAILABLE, 69);
    CHECK_EQ_INT(EXIT_SOFTWARE, 70);
    CHECK_EQ_INT(EXIT_CANTCREAT, 73);
    CHECK_EQ_INT(EXIT_IOERR, 74);
    CHECK_EQ_INT(EXIT_CANCELED, 130);
}

static void
t_prefix(void)
{
    struct err e = {0};

    err_set(&e, ENOENT, "no such plan");
    err_status(&e, EXIT_NOINPUT);
    CHECK_EQ_INT(err_prefix(&e, "%s:%d", "c.yaml", 4), -1);
    CHECK_EQ_STR(e.msg, "c.yaml:4: no such plan");
    err_prefix(&e, "run %s", "r1");
    CHECK_EQ_STR(e.msg, "run r1: c.yaml:4: no such plan");
    CHECK_EQ_INT(e.code, ENOENT);
    CHECK_EQ_INT(e.status, EXIT_NOINPUT);
    CHECK_EQ_INT(err_prefix(NULL, "x"), -1);
}

static void
t_prefix_truncates(void)
{
    struct err e = {0};

    /* a long message keeps its start after the prefix */
    err_set(&e, EIO, "%s", xs(ERR_MSG_MAX - 1));
    err_prefix(&e, "ctx");
    CHECK_EQ_INT(strlen(e.msg), ERR_MSG_MAX - 1);
    CHECK(strncmp(e.msg, "ctx: xxx", 8) == 0);
    /* a prefix longer than the buffer is cut; the message is gone */
    err_set(&e, EIO, "tail");
    err_prefix(&e, "%s", xs(ERR_MSG_MAX + 50));
    CHECK_EQ_INT(strlen(e.msg), ERR_MSG_MAX - 1);
    CHECK(strstr(e.msg, "tail") == NULL);
    CHECK_EQ_INT(e.code, EIO);
}

static void
t_clear(void)
{
    struct err e = {0};

    err_sys(&e, EACCES, "open x");
    err_status(&e, EXIT_CANTCREAT);
    err_clear(&e);
    CHECK_EQ_INT(e.code, 0);
    CHECK_EQ_INT(e.status, 0);
    CHECK_EQ_STR(e.msg, "");
    /* a context added after a clear has nothing old behind it */
    err_prefix(&e, "later");
    CHECK_EQ_STR(e.msg, "later: ");
    err_clear(NULL);
}

static void
t_io_status(void)
{
    static const int full[] = {ENOSPC, EDQUOT, EIO, EFBIG};
    static const int cant[] = {EACCES, EEXIST, ENOENT, EROFS, 0};

    for (size_t i = 0; i < sizeof(full) / sizeof(full[0]); i++)
        CHECK_EQ_INT(err_io_status(full[i]), EXIT_IOERR);
    for (size_t i = 0; i < sizeof(cant) / sizeof(cant[0]); i++)
        CHECK_EQ_INT(err_io_status(cant[i]), EXIT_CANTCREAT);
}

static void
t_output_note(void)
{
    struct err e = {0}, got = {0};

    reset_output_note();
    CHECK_EQ_INT(err_output_take(&got), 0);
    err_sys(&e, ENOSPC, "cannot write g/0/run.out");
    err_output_note(&e);
    err_set(&e, EACCES, "a later one");
    err_output_note(&e);
    CHECK_EQ_INT(err_output_take(&got), 1);
    CHECK_EQ_INT(got.code, ENOSPC);
    CHECK_EQ_INT(got.status, EXIT_IOERR);
    CHECK_CONTAINS(got.msg, "cannot write g/0/run.out: ");
    /* taken: the next take finds none, the next note is kept */
    CHECK_EQ_INT(err_output_take(&got), 0);
    err_clear(&e);
    snprintf(e.msg, sizeof(e.msg), "no code");
    err_output_note(&e);
    CHECK_EQ_INT(err_output_take(&got), 1);
    CHECK_EQ_INT(got.code, EIO);
    CHECK_EQ_INT(got.status, EXIT_IOERR);
    CHECK_EQ_STR(got.msg, "no code");
    /* a status given is kept */
    err_set(&e, EACCES, "x");
    err_status(&e, EXIT_SOFTWARE);
    err_output_note(&e);
    CHECK_EQ_INT(err_output_take(&got), 1);
    CHECK_EQ_INT(got.status, EXIT_SOFTWARE);
}

#define NOTERS 8

static void *
noter(void *arg)
{
    struct err e = {0};

    err_set(&e, EIO, "thread %d", (int)(intptr_t)arg);
    for (int i = 0; i < 1000; i++)
        err_output_note(&e);
    return NULL;
}

static void
t_output_note_threads(void)
{
    pthread_t th[NOTERS];
    struct err got = {0};
    int id = -1;

    reset_output_note();
    for (int i = 0; i < NOTERS; i++)
        CHECK(pthread_create(&th[i], NULL, noter, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < NOTERS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(err_output_take(&got), 1);
    CHECK_EQ_INT(sscanf(got.msg, "thread %d", &id), 1);
    CHECK(id >= 0 && id < NOTERS);
    CHECK_EQ_INT(err_output_take(&got), 0);
}

static const struct th_case cases[] = {
    {"set", t_set},
    {"set_truncates", t_set_truncates},
    {"sys", t_sys},
    {"sys_truncates", t_sys_truncates},
    {"errno_kept", t_errno_kept},
    {"status", t_status},
    {"prefix", t_prefix},
    {"prefix_truncates", t_prefix_truncates},
    {"clear", t_clear},
    {"io_status", t_io_status},
    {"output_note", t_output_note},
    {"output_note_threads", t_output_note_threads},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
