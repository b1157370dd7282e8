/*
 * cmd_validate.c — `testyard validate [--plans DIR] FILE`: load a
 * composition, check it against its plan's manifest and print it fully
 * resolved as JSON; or print the one line that says what is wrong.
 *
 * Exit status: 0 valid, 65 (EX_DATAERR) bad composition or manifest, 66
 * (EX_NOINPUT) FILE cannot be read, 64 (EX_USAGE) bad arguments.
 */
#include "cmd.h"
#include "composition.h"
#include "err.h"
#include "jsonpretty.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void
usage(FILE *out)
{
    fprintf(out, "usage: testyard validate [--plans DIR] FILE\n"
                 "\n"
                 "Check a composition (YAML; JSON when FILE ends in .json) "
                 "against its\n"
                 "plan's manifest and print it fully resolved as JSON: every "
                 "group with\n"
                 "its instance count, resources and parameters.\n"
                 "\n"
                 "options:\n"
                 "  -p, --plans DIR  look for the plan in DIR first (default: "
                 "$TESTYARD_PLANS,\n"
                 "                   then FILE's ../plans, ./plans, the "
                 "installed plans)\n"
                 "  -h, --help       print this help\n"
                 "\n"
                 "exit status: 0 valid, 65 invalid composition or manifest, 66 "
                 "FILE\n"
                 "unreadable, 64 bad arguments\n");
}

/* Shared by validate and describe: getopt_long over a command's
 * arguments. Returns 0 to go on, or an exit status (+1 for --help). */
static int
parse_args(int argc, char **argv, const char **plans)
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
            usage(stdout);
            return -1;
        } else {
            fprintf(stderr, "testyard validate: %s %s\n",
                    ch == ':' ? "missing argument for" : "unknown option",
                    argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    return 0;
}

static int
print_json(const struct composition *c)
{
    cJSON *json = composition_to_json(c);
    char *text = jsonpretty_print(json);
    int rc = 0;

    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
        perror("testyard: validate: stdout");
        rc = EXIT_IOERR;
    }
    free(text);
    cJSON_Delete(json);
    return rc;
}

int
cmd_validate(int argc, char **argv)
{
    struct composition_opts opts = {0};
    struct err err = {0};
    struct composition *c;
    int rc = parse_args(argc, argv, &opts.plans_dir);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (argc - optind != 1) {
        fprintf(stderr, "testyard validate: expected one FILE\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    c = composition_load(argv[optind], &opts, &err);
    if (c == NULL) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        return err.status ? err.status : EXIT_DATAERR;
    }
    rc = print_json(c);
    composition_destroy(&c);
    return rc;
}
