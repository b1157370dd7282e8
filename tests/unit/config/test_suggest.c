/*
 * test_suggest.c — edit distances and "did you mean" picks.
 */
#include "config/suggest_int.h"
#include "th.h"

#include <string.h>

static void
t_distance(void)
{
    CHECK_EQ_INT(suggest_distance("memory", "memory"), 0);
    CHECK_EQ_INT(suggest_distance("memroy", "memory"), 1);
    CHECK_EQ_INT(suggest_distance("runer", "runner"), 1);
    CHECK_EQ_INT(suggest_distance("Runner", "runner"), 0);
    CHECK_EQ_INT(suggest_distance("", "abc"), 3);
    CHECK_EQ_INT(suggest_distance("kitten", "sitting"), 3);
    CHECK_EQ_INT(suggest_distance("ca", "abc"), 3);
}

static void
t_closest(void)
{
    static const char *const keys[] = {
        "plan", "case", "runner", "total_instances", "run", "run_config"};
    static const char *const ids[] = {"id", "instances"};
    const size_t n = sizeof(keys) / sizeof(keys[0]);

    CHECK_EQ_STR(suggest_closest("runer", keys, n), "runner");
    CHECK_EQ_STR(suggest_closest("totalinstances", keys, n), "total_instances");
    CHECK_EQ_STR(suggest_closest("run_confg", keys, n), "run_config");
    CHECK_EQ_STR(suggest_closest("cas", keys, n), "case");
    CHECK(suggest_closest("bandwidth", keys, n) == NULL);
    CHECK(suggest_closest("zz", keys, n) == NULL);
    /* An edit count as long as the candidate suggests nothing. */
    CHECK(suggest_closest("a", ids, 2) == NULL);
    CHECK(suggest_closest("x", keys, 0) == NULL);
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
