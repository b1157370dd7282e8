/*
 * cmd_reserved.c — commands whose names are reserved but which this build
 * does not have yet. Each says so and exits with EX_USAGE. A command moves
 * out of this file into its own runner/cmd_<name>.c when it is built.
 */
#include "cmd.h"
#include "err.h"

#include <stdio.h>

static int
reserved(const char *name)
{
    fprintf(stderr, "testyard: '%s' is not available in this version\n",
            name);
    return EXIT_USAGE;
}

int
cmd_report(int argc, char **argv)
{
    (void)argc;
    return reserved(argv[0]);
}

int
cmd_compare(int argc, char **argv)
{
    (void)argc;
    return reserved(argv[0]);
}
