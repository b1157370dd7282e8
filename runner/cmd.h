/*
 * cmd.h — the subcommands of `testyard`, one file each (runner/cmd_*.c).
 *
 * Each takes the arguments after the command name (argv[0] is the command
 * name), prints its own output and errors, and returns the exit status.
 * What several of them share is in cmd_args.c.
 */
#ifndef TY_CMD_H
#define TY_CMD_H

#include <stdio.h>

int cmd_validate(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* How a command names itself and its operand in messages, and prints its
 * usage (to stdout for --help, to stderr after a mistake). */
struct cmd_usage {
    const char *cmd;     /* "validate" */
    const char *operand; /* "FILE" */
    void (*print)(FILE *out);
};

/* cmd_args.c: [-p|--plans DIR] [--runner NAME] [-h|--help] and exactly
 * one operand, left at argv[optind]; *plans is set to DIR and *runner to
 * NAME (borrowed from argv); runner NULL: no --runner option. Returns 0
 * to go on, -1 after printing the usage for --help (exit 0), or
 * EXIT_USAGE after saying what is wrong. */
int cmd_args_plans(int argc, char **argv, const struct cmd_usage *u,
                   const char **plans, const char **runner);
/* 0 when name is NULL or a runner the backends' registry has; otherwise
 * says "testyard: --runner: expected local:exec or local:docker, got
 * "NAME"" on stderr and returns EXIT_USAGE. */
int cmd_args_runner(const char *name);

#endif
