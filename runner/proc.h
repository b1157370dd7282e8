/*
 * proc.h — running a helper program (the compiler, pkg-config, the dynamic
 * loader in list mode) without a shell, and collecting what it printed.
 */
#ifndef TY_PROC_H
#define TY_PROC_H

#include "err.h"
#include "util.h"

/* Run argv[0] (searched in PATH) with argv. Its stdout and stderr are
 * appended to `out` when not NULL (both into the same buffer) and otherwise
 * discarded. Returns the exit status (0..255, or 128+signal), or -1 when it
 * could not be started. */
int proc_run(char *const argv[], struct strbuf *out, struct err *err);

#endif
