/*
 * test_backend_registry.c — the backends' registry: each runner found by
 * its name with its constructor, the list the composition loader gets, and
 * the names as messages print them.
 */
#include "backend/backend.h"
#include "th.h"

#include <string.h>

static void
t_find(void)
{
    const struct backend_kind *exec = backend_find("local:exec");
    const struct backend_kind *docker = backend_find("local:docker");

    CHECK(exec != NULL && exec->create == backend_exec_new);
    CHECK(docker != NULL && docker->create == backend_docker_new);
    if (exec != NULL) {
        CHECK_EQ_STR(exec->runner.name, "local:exec");
        CHECK(exec->runner.no_bridge != NULL);
        CHECK(exec->runner.no_root != NULL);
    }
    if (docker != NULL)
        CHECK(docker->runner.no_bridge == NULL &&
              docker->runner.no_root == NULL);
    CHECK(backend_find("local:dokcer") == NULL);
    CHECK(backend_find("") == NULL);
    CHECK(backend_find(NULL) == NULL);
}

/* The loader's list is the registry's, in its order. */
static void
t_runners(void)
{
    const struct composition_runner *const *rs = backend_runners();
    size_t n = 0;

    for (; rs[n] != NULL; n++)
        CHECK_MSG(backend_find(rs[n]->name) != NULL &&
                      &backend_find(rs[n]->name)->runner == rs[n],
                  "%s", rs[n]->name);
    CHECK_EQ_INT((int)n, 2);
    CHECK_EQ_STR(rs[0]->name, "local:exec");
    CHECK_EQ_STR(rs[1]->name, "local:docker");
}

static void
t_names(void)
{
    char buf[64], small[8];

    CHECK_EQ_STR(backend_names(buf, sizeof(buf)), "local:exec or local:docker");
    CHECK_EQ_STR(backend_names(small, sizeof(small)), "local:e");
}

static const struct th_case cases[] = {
    {"find", t_find},
    {"runners", t_runners},
    {"names", t_names},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
