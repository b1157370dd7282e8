/*
 * test_strvec.c — the runner's string vector (runner/base/strvec.c): NULL
 * termination at every length, growth past the first capacity, copies
 * versus taken strings, sorting with repeats dropped, and the plain
 * NULL-terminated arrays it hands out, environments set by KEY.
 */
#include "base/strvec.h"
#include "base/util.h"
#include "th.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
t_grows_null_terminated(void)
{
    struct strvec sv = {0};
    char want[16];

    CHECK_EQ_INT(strvec_len(&sv), 0);
    CHECK(sv.v == NULL);
    for (int i = 0; i < 100; i++) {
        strvec_pushf(&sv, "s%d", i);
        CHECK_EQ_INT(strvec_len(&sv), i + 1);
        CHECK(sv.v[i + 1] == NULL);
        CHECK(sv.cap >= sv.n + 1);
    }
    CHECK(sv.cap > 8); /* past xgrow's first capacity */
    for (int i = 0; i < 100; i++) {
        snprintf(want, sizeof(want), "s%d", i);
        CHECK_EQ_STR(sv.v[i], want);
    }
    CHECK_EQ_INT(strv_len(sv.v), 100);
    strvec_release(&sv);
    CHECK(sv.v == NULL && sv.n == 0 && sv.cap == 0);
}

static void
t_copies_and_takes(void)
{
    struct strvec sv;
    char buf[] = "changed later";
    char *owned = xstrdup("owned");

    strvec_init(&sv);
    strvec_push(&sv, buf);
    strvec_push_owned(&sv, owned);
    buf[0] = 'C';
    CHECK_EQ_STR(sv.v[0], "changed later");
    CHECK(sv.v[1] == owned);
    strvec_release(&sv);
}

static void
t_sort_uniq(void)
{
    static const char *const in[] = {"/lib/b", "/lib/a", "/lib/b", "/lib/c",
                                     "/lib/a"};
    struct strvec sv = {0};

    strvec_sort_uniq(&sv); /* empty: nothing to do */
    for (size_t i = 0; i < ARRAY_LEN(in); i++)
        strvec_push(&sv, in[i]);
    strvec_sort_uniq(&sv);
    CHECK_EQ_INT(sv.n, 3);
    CHECK_EQ_STR(sv.v[0], "/lib/a");
    CHECK_EQ_STR(sv.v[1], "/lib/b");
    CHECK_EQ_STR(sv.v[2], "/lib/c");
    CHECK(sv.v[3] == NULL);
    strvec_release(&sv);
}

static void
t_detach(void)
{
    struct strvec sv = {0};
    char **v = strvec_detach(&sv);

    CHECK(v != NULL && v[0] == NULL); /* empty, never NULL */
    strv_free(v);
    strvec_push(&sv, "a");
    strvec_push(&sv, "b");
    v = strvec_detach(&sv);
    CHECK(sv.v == NULL && sv.n == 0);
    CHECK_EQ_INT(strv_len(v), 2);
    CHECK_EQ_STR(v[1], "b");
    strv_free(v);
    strv_free(NULL);
    CHECK_EQ_INT(strv_len(NULL), 0);
}

/* A KEY is replaced where it stands, whole keys only ("A" is not "AB"),
 * and a new one goes last. */
static void
t_env(void)
{
    struct strvec sv = {0};

    strvec_push(&sv, "AB=1");
    strvec_push(&sv, "A=2");
    strvec_push(&sv, "C=3");
    strvec_setenv(&sv, "A=two");
    strvec_setenv(&sv, "D=4");
    strvec_setenv(&sv, "AB=");
    CHECK_EQ_INT(strvec_len(&sv), 4);
    CHECK_EQ_STR(sv.v[0], "AB=");
    CHECK_EQ_STR(sv.v[1], "A=two");
    CHECK_EQ_STR(sv.v[3], "D=4");
    CHECK_EQ_STR(strv_getenv(sv.v, "A"), "two");
    CHECK_EQ_STR(strv_getenv(sv.v, "AB"), "");
    CHECK(strv_getenv(sv.v, "B") == NULL);
    CHECK(strv_getenv(NULL, "A") == NULL);
    strvec_release(&sv);
}

static const struct th_case cases[] = {
    {"env", t_env},
    {"grows_null_terminated", t_grows_null_terminated},
    {"copies_and_takes", t_copies_and_takes},
    {"sort_uniq", t_sort_uniq},
    {"detach", t_detach},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
