/*
 * cmd.h — the subcommands of `testyard`, one file each (runner/cmd_*.c).
 *
 * Each takes the arguments after the command name (argv[0] is the command
 * name), prints its own output and errors, and returns the exit status.
 * What several of them share is in cmd_args.c.
 *
 * The argument convention, the same in every command: a command's
 * parse_args hands cmd_parse() (getopt_long underneath) a struct cmd_spec
 * with its options and a handler for each, and returns 0 to go on, 1
 * after printing its usage on stdout for -h/--help (the command exits 0),
 * or -1 on a usage error with err filled; cmd_args_end() turns what it
 * returned into the exit status (0, or EXIT_USAGE after printing the
 * error). A usage error is one of two kinds:
 *   - the command line's shape (an unknown option, an option without its
 *     argument, too many or too few operands): err->code CMD_ESHAPE,
 *     printed as "testyard CMD: MESSAGE" followed by the usage;
 *   - an option's value ("--run-id: expected a name, got ..."): err->code
 *     CMD_EVALUE, printed as one line "testyard: MESSAGE", as a bad
 *     composition is.
 */
#ifndef TY_CMD_H
#define TY_CMD_H

#include "base/err.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

int cmd_validate(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_dashboard(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
/* `report TASK` (cmd_tasks.c): the report of task id's run, through the
 * daemon of data (--data, or NULL); written when missing; its path
 * printed, or opened with xdg-open. */
int cmd_report_task(const char *data, const char *id, bool open);

#define CMD_ESHAPE EINVAL /* the command line's shape: shown with usage */
#define CMD_EVALUE EDOM   /* an option's value: one line */

/* How a command names itself and its operands in messages, and prints its
 * usage (to stdout for --help, to stderr after a mistake). */
struct cmd_usage {
    const char *cmd;      /* "validate"; NULL for testyard's own options */
    const char *operands; /* "one FILE", for "expected one FILE"; NULL
                           * when the command takes none */
    void (*print)(FILE *out);
};

/* A command's options. */
struct cmd_spec {
    const struct cmd_usage *usage;
    /* getopt_long's, with a leading ':' (after a '+' if any); 'h' is
     * -h/--help, which cmd_parse answers itself */
    const char *shortopts;
    const struct option *longopts;
    /* Each option but 'h', its argument (NULL for none) and the ctx
     * handed to cmd_parse: 0 to go on, 1 to stop and exit 0 (--version),
     * -1 with err filled. NULL when the command has no other option. */
    int (*opt)(int c, char *arg, void *ctx, struct err *err);
    int operands; /* how many; -1: one or more */
};

/* Read argv's options with getopt_long and check the operands, which are
 * left at argv[optind]: the contract of parse_args above. The messages:
 * "unknown option '--x'", "missing argument for '--plans'", "expected one
 * FILE", "unexpected argument 'x'" (for a command that takes none). */
int cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx,
              struct err *err);

/* Fill err with a usage error of kind code (CMD_ESHAPE or CMD_EVALUE) and
 * status EXIT_USAGE; returns -1. */
int cmd_usage_err(struct err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The exit status for what parse_args returned (1 or -1): 0 after --help;
 * after a usage error, EXIT_USAGE with the error printed on stderr as the
 * convention above says. */
int cmd_args_end(const struct cmd_usage *u, int rc, const struct err *err);

/* opt's argument as a whole number within int's range into *out, else
 * a CMD_EVALUE usage error "--priority: expected a whole number, got
 * "x"". */
int cmd_int_arg(const char *opt, const char *arg, long *out, struct err *err);

/* [-p|--plans DIR] [--runner NAME] [-h|--help] and exactly one operand,
 * left at argv[optind]; *plans is set to DIR and *runner to NAME (borrowed
 * from argv); runner NULL: no --runner option. The contract of
 * parse_args. */
int cmd_args_plans(int argc, char **argv, const struct cmd_usage *u,
                   const char **plans, const char **runner, struct err *err);
/* 0 when name is NULL or a runner the backends' registry has; otherwise a
 * CMD_EVALUE usage error "--runner: expected local:exec or local:docker,
 * got "NAME"". */
int cmd_check_runner(const char *name, struct err *err);

#endif
