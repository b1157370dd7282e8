/*
 * main.c — `testyard <command>`: the command table, global options and
 * --help / --version. Everything else lives in runner/cmd_*.c.
 */
#include "cmd.h"
#include "base/err.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"validate", cmd_validate,
     "check a composition and print it fully resolved as JSON"},
    {"describe", cmd_describe, "print a plan's test cases and parameters"},
    {"run", cmd_run, "run a composition"},
    {"report", cmd_report, "write and print the report of a run"},
    {"compare", cmd_compare, "compare the reports of two runs"},
    {"collect", cmd_collect, "pack a run folder into a .tgz"},
    {"clean", cmd_clean, "remove containers and networks testyard left"},
    {"doctor", cmd_doctor, "check the Docker engine and the set-up"},
};

static void
usage(FILE *out)
{
    fprintf(out, "usage: testyard [-v] [--version] <command> [args]\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'testyard <command> --help' for a command's "
                 "options.\n");
}

int
main(int argc, char **argv)
{
    int i = 1;

    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("testyard %s\n", TY_VERSION);
            return 0;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "-v") == 0 ||
                   strcmp(argv[i], "--verbose") == 0) {
            log_set_level(LOG_DEBUG);
        } else {
            fprintf(stderr, "testyard: unknown option %s\n", argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return commands[c].fn(argc - i, argv + i);
    fprintf(stderr, "testyard: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return EXIT_USAGE;
}
