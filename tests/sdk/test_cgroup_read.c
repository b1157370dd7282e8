/*
 * test_cgroup_read.c — finding this process's memory cgroup and reading it.
 */
#include "th.h"
#include "ty_cgroup.h"

#include <stdlib.h>
#include <string.h>

static void
t_self(void)
{
    enum ty__cgver ver;
    struct ty__cgmem m;
    char *dir;

    if (ty__cgroup_memory_mount(&ver) == NULL)
        th_skip("no memory cgroup controller on this machine");
    dir = ty__cgroup_memory_dir(0, &ver);
    CHECK(dir != NULL);
    if (dir == NULL)
        return;
    CHECK_EQ_INT(ty__cgroup_read_memory(dir, ver, &m), 0);
    CHECK(m.usage > 0);
    CHECK(m.anon >= 0);
    CHECK(m.file >= 0);
    free(dir);
}

static void
t_missing(void)
{
    struct ty__cgmem m;

    CHECK(ty__cgroup_read_memory("/nonexistent/cg", TY_CG_V1, &m) < 0);
    CHECK(ty__cgroup_read_memory("/nonexistent/cg", TY_CG_V2, &m) < 0);
    CHECK_EQ_INT(m.usage, -1);
}

static const struct th_case cases[] = {
    {"self", t_self},
    {"missing", t_missing},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
