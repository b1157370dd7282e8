/*
 * cmd_clean_int.h — what cmd_clean.c (containers and networks) and
 * cmd_clean_runs.c (run folders and cgroups on this host) share.
 */
#ifndef TY_CMD_CLEAN_H
#define TY_CMD_CLEAN_H

#include <stdbool.h>
#include <stddef.h>

struct clean_opts {
    const char *run;  /* NULL: every run */
    const char *runs; /* the runs folder */
    bool dry, force;
};

/* What was done, for the last line and the exit status. */
struct clean_tally {
    size_t removed; /* containers, networks, runs' leftovers */
    size_t skipped; /* runs left alone: their coordinator may live */
    size_t refused; /* the run named by --run, left alone without --force */
    size_t failed;
    char **seen; /* runs already said skipped */
    size_t nseen, capseen;
};

/* Remove the leftovers of dead runs found in o->runs and under the
 * cgroup base, printing a line for each run removed or skipped. */
void clean__runs(const struct clean_opts *o, struct clean_tally *t);

/* One line "skipped run ID: <why>" (or the refusal, for --run ID). */
void clean__skip(const struct clean_opts *o, const char *id, const char *why,
                 struct clean_tally *t);

#endif
