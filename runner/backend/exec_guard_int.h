/*
 * backend/exec_guard_int.h — for local:exec, a small process that outlives a
 * killed coordinator just long enough to kill the process group of every
 * instance still running.
 *
 * Each instance already gets SIGKILL as its parent-death signal, but that
 * reaches the instance only, not what it forked. The guard is forked
 * before the first instance, in its own process group; the coordinator
 * tells it each instance's process group as it starts and when it is
 * reaped. When the socket between them reads end-of-file without a "done"
 * first — the coordinator died — the guard SIGKILLs every group still
 * listed and exits.
 *
 * Ownership: exec_guard__new returns the caller's; exec_guard__destroy
 * frees it and sets the pointer to NULL (NULL-safe).
 */
#ifndef TY_RUNNER_EXEC_GUARD_H
#define TY_RUNNER_EXEC_GUARD_H

#include "base/err.h"

#include <stddef.h>
#include <sys/types.h>

struct exec_guard;

/* Fork the guard for up to n instances. */
struct exec_guard *exec_guard__new(size_t n, struct err *err);
/* Instance index now runs as process group pgid (0: it was reaped). */
void exec_guard__set(struct exec_guard *g, size_t index, pid_t pgid);
/* The guard's pid, for the parent's reaper to recognise. */
pid_t exec_guard__pid(const struct exec_guard *g);
/* Tell the guard all is done, wait for it and free (NULL-safe). */
void exec_guard__destroy(struct exec_guard **g);

#endif
