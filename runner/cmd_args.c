/*
 * cmd_args.c — argument parsing that several subcommands share (see
 * cmd.h): `validate` and `describe` both take [--plans DIR] and one
 * operand, and say the same things when the arguments are wrong.
 */
#include "cmd.h"

#include "base/err.h"

#include <getopt.h>
#include <stdlib.h>

int
cmd_args_plans(int argc, char **argv, const struct cmd_usage *u,
               const char **plans)
{
    static const struct option longopts[] = {
        {"plans", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
        if (ch == 'p') {
            *plans = optarg;
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
