/*
 * cmd.h — the subcommands of `testyard`, one file each (runner/cmd_*.c).
 *
 * Each takes the arguments after the command name (argv[0] is the command
 * name), prints its own output and errors, and returns the exit status.
 */
#ifndef TY_CMD_H
#define TY_CMD_H

int cmd_validate(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

#endif
