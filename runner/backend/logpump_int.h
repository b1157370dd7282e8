/*
 * backend/logpump_int.h — one thread that copies the stdout and stderr pipes of
 * local:exec instances into their capped logs (base/instlog.h).
 *
 * An instance writing its stdout into a file the runner opened could fill
 * the disk; through a pipe, every byte passes the cap. The thread polls
 * every pipe; when both of an instance's pipes reach end of file its logs
 * are finished (moved into its folder) at once.
 *
 * An instance that may be started again (logpump__restart) keeps its
 * instlog between its runs: finished (in place) when its pipes end, and
 * resumed with the new run's pipes.
 *
 * Ownership: logpump__add takes the two descriptors and the instlog; the
 * caller owns the pump (logpump__destroy).
 */
#ifndef TY_LOGPUMP_H
#define TY_LOGPUMP_H

#include "base/err.h"

#include <stdbool.h>

struct instlog;
struct logpump;

struct logpump *logpump__new(struct err *err);
/* Copy out_fd to stream 1 and err_fd to stream 2 of log; label names the
 * instance in warnings; with keep, the log stays for logpump__restart
 * after its pipes ended. Returns the entry's number (>= 0) or -1. */
int logpump__add(struct logpump *p, int out_fd, int err_fd, struct instlog *log,
                 const char *label, bool keep, struct err *err);
/* Entry `slot` (a keep one) gets the pipes of its instance's new run: what
 * the old pipes still hold is read first and they are closed (a process
 * left of the old run may hold them), and its logs go on after what they
 * have (instlog_resume). Takes the descriptors, also on error. */
int logpump__restart(struct logpump *p, int slot, int out_fd, int err_fd,
                     struct err *err);
/* Wait up to drain_ms for every pipe to reach its end (the instances
 * were stopped), finish every log, stop the thread; NULL-safe, sets *p to
 * NULL. */
void logpump__destroy(struct logpump **p, int drain_ms);

#endif
