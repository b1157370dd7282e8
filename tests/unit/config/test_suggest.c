/*
 * test_suggest.c — edit distances and "did you mean" picks.
 */
#include "config/suggest_int.h"
#include "th.h"

#include <string.h>

static void
t_distance(void)
{
    CHECK_EQ_INT(suggest__distance("memory", "memory"), 0);
    CHECK_EQ_INT(suggest__distance("memroy", "memory"), 1);
    CHECK_EQ_INT(suggest__distance("runer", "runner"), 1);
    CHECK_EQ_INT(suggest__distance("Runner", "runner"), 0);
    CHECK_EQ_INT(suggest__distance("", "abc"), 3);
    CHECK_EQ_INT(suggest__distance("kitten", "sitting"), 3);
    CHECK_EQ_INT(suggest__distance("ca", "abc"), 3);
}

static void
t_closest(void)
{
    static const char *const keys[] = {
        "plan", "case", "runner", "total_instances", "run", "run_config"};
    static const char *const ids[] = {"id", "instances"};
    const size_t n = sizeof(keys) / sizeof(keys[0]);

    CHECK_EQ_STR(suggest__closest("runer", keys, n), "runner");
    CHECK_EQ_STR(suggest__closest("totalinstances", keys, n),
                 "total_instances");
    CHECK_EQ_STR(suggest__closest("run_confg", keys, n), "run_config");
    CHECK_EQ_STR(suggest__closest("cas", keys, n), "case");
    CHECK(suggest__closest("bandwidth", keys, n) == NULL);
    CHECK(suggest__closest("zz", keys, n) == NULL);
    /* An edit count as long as the candidate suggests nothing. */
    CHECK(suggest__closest("a", ids, 2) == NULL);
    CHECK(suggest__closest("x", keys, 0) == NULL);
}

static const struct th_case cases[] = {
    {"distance", t_distance},
    {"closest", t_closest},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
