/*
 * backend.c — the backends' registry: the one table of the runners
 * testyard has, each with its name, what it cannot do and its
 * constructor.
 *
 * Everything that names runners reads this table: the composition loader
 * (through composition_opts.runners, since config/ sits below backend/
 * and knows no backend), the run orchestrator choosing a backend, and the
 * commands' --runner checks and usage texts. A new backend is a new row.
 */
#include "backend/backend.h"

#include "base/util.h"

#include <stdio.h>
#include <string.h>

static const struct backend_kind kinds[] = {
    {
        .runner = {.name = "local:exec",
                   .no_bridge = "instances run as host processes",
                   .no_root = "instances run as the coordinator's own user",
                   .no_image = "instances run as host programs, not in "
                               "containers"},
        .create = backend_exec_new,
    },
    {
        .runner = {.name = "local:docker"},
        .create = backend_docker_new,
    },
};

const struct backend_kind *
backend_find(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(kinds); i++)
        if (name != NULL && strcmp(kinds[i].runner.name, name) == 0)
            return &kinds[i];
    return NULL;
}

const struct composition_runner *const *
backend_runners(void)
{
    static const struct composition_runner *list[ARRAY_LEN(kinds) + 1];

    for (size_t i = 0; i < ARRAY_LEN(kinds); i++)
        list[i] = &kinds[i].runner;
    return list;
}

const char *
backend_names(char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < ARRAY_LEN(kinds) && len < size; i++) {
        const char *sep = i == 0                      ? ""
                          : i + 1 == ARRAY_LEN(kinds) ? " or "
                                                      : ", ";
        int n =
            snprintf(buf + len, size - len, "%s%s", sep, kinds[i].runner.name);

        len += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

void
backend_destroy(struct backend **b)
{
    if (b == NULL || *b == NULL)
        return;
    (*b)->ops->destroy(*b);
    *b = NULL;
}
