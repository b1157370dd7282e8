/*
 * cmd_validate.c — `testyard validate [--plans DIR] [--runner NAME] FILE`:
 * load a composition, check it against its plan's manifest (and NAME's
 * limits in place of global.runner's) and print it fully resolved as
 * JSON, with each of its notes (what could not be checked, such as the
 * parameters of a composition without a plan) on stderr as "note: ...";
 * or print the one line that says what is wrong.
 *
 * Exit status: 0 valid, 65 (EX_DATAERR) bad composition or manifest, 66
 * (EX_NOINPUT) FILE cannot be read, 64 (EX_USAGE) bad arguments.
 */
#include "cmd.h"
#include "backend/backend.h"
#include "config/config.h"
#include "base/err.h"
#include "base/jsonpretty.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void
usage(FILE *out)
{
    char names[256];

    fprintf(out,
            "usage: testyard validate [--plans DIR] [--runner NAME] FILE\n"
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
            "  --runner NAME    check it as run on NAME (%s)\n"
            "                   instead of the composition's runner\n"
            "  -h, --help       print this help\n"
            "\n"
            "exit status: 0 valid, 65 invalid composition or manifest, 66 "
            "FILE\n"
            "unreadable, 64 bad arguments\n",
            backend_names(names, sizeof(names)));
}

static int
print_json(const struct composition *c)
{
    cJSON *json = composition_to_json(c);
    char *text = jsonpretty_print(json);
    const cJSON *note;
    int rc = 0;

    cJSON_ArrayForEach (note, cJSON_GetObjectItem(json, "notes")) {
        fprintf(stderr, "note: %s\n", cJSON_GetStringValue(note));
    }

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
    static const struct cmd_usage u = {"validate", "one FILE", usage};
    struct composition_opts opts = {0};
    struct err err = {0};
    struct composition *c;
    int rc =
        cmd_args_plans(argc, argv, &u, &opts.plans_dir, &opts.runner, &err);

    if (rc != 0)
        return cmd_args_end(&u, rc, &err);
    opts.runners = backend_runners();
    c = composition_load(argv[optind], &opts, &err);
    if (c == NULL) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        return err.status ? err.status : EXIT_DATAERR;
    }
    rc = print_json(c);
    composition_destroy(&c);
    return rc;
}
