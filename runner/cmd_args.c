/*
 * cmd_args.c — argument parsing that several subcommands share (see
 * cmd.h): `validate` and `describe` both take [--plans DIR] and one
 * operand, and say the same things when the arguments are wrong; `run`
 * and `validate` check --runner against the backends' registry alike.
 */
#include "cmd.h"

#include "backend/backend.h"
#include "base/err.h"

#include <getopt.h>
#include <stdlib.h>

int
cmd_args_runner(const char *name)
{
    char names[256];

    if (name == NULL || backend_find(name) != NULL)
        return 0;
    fprintf(stderr, "testyard: --runner: expected %s, got \"%s\"\n",
            backend_names(names, sizeof(names)), name);
    return EXIT_USAGE;
}

int
cmd_args_plans(int argc, char **argv, const struct cmd_usage *u,
               const char **plans, const char **runner)
{
    /* Without runner, --runner is as unknown as any other option. */
    static const struct option with_runner[] = {
        {"plans", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {"runner", required_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    static const struct option without_runner[] = {
        {"plans", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const struct option *longopts = runner ? with_runner : without_runner;
    int ch;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
        if (ch == 'p') {
            *plans = optarg;
        } else if (ch == 'R') {
            *runner = optarg;
            if (cmd_args_runner(optarg) != 0)
                return EXIT_USAGE;
        } else if (ch == 'h') {
            u->print(stdout);
            return -1;
        } else {
            fprintf(stderr, "testyard %s: %s %s\n", u->cmd,
                    ch == ':' ? "missing argument for" : "unknown option",
                    argv[optind - 1]);
            u->print(stderr);
            return EXIT_USAGE;
        }
    }
    if (argc - optind == 1)
        return 0;
    fprintf(stderr, "testyard %s: expected one %s\n", u->cmd, u->operand);
    u->print(stderr);
    return EXIT_USAGE;
}
