/*
 * base/proc.h — running a helper program (the compiler, pkg-config, the dynamic
 * loader in list mode) without a shell, and collecting what it printed.
 */
#ifndef TY_PROC_H
#define TY_PROC_H

#include "base/err.h"
#include "base/strbuf.h"
#include "base/util.h"

/* What proc_run_opts changes; all zero is proc_run. Borrowed. */
struct proc_opts {
    char *const *env; /* run argv[0] as a path (no PATH search) with this
                       * NULL-terminated environment; NULL: ours */
    size_t max_out;   /* keep at most this many bytes in out (the rest is
                       * read and dropped); 0: all */
};

/* Run argv[0] (searched in PATH) with argv. Its stdout and stderr are
 * appended to `out` when not NULL (both into the same buffer) and otherwise
 * discarded; stdin is /dev/null. Returns the exit status (0..255, or
 * 128+signal), or -1 when it could not be started ("X: could not be run",
 * ENOENT, when exec fails). */
int proc_run(char *const argv[], struct strbuf *out, struct err *err);
/* proc_run with options (o may be NULL). */
int proc_run_opts(char *const argv[], const struct proc_opts *o,
                  struct strbuf *out, struct err *err);

#endif
