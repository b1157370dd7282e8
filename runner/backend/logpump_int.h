/*
 * backend/logpump_int.h — one thread that copies the stdout and stderr pipes of
 * local:exec instances into their capped logs (base/instlog.h).
 *
 * An instance writing its stdout into a file the runner opened could fill
 * the disk; through a pipe, every byte passes the cap. The thread polls
 * every pipe; when both of an instance's pipes reach end of file its logs
 * are finished (moved into its folder) at once.
 *
 * Ownership: logpump__add takes the two descriptors and the instlog; the
 * caller owns the pump (logpump__destroy).
 */
#ifndef TY_LOGPUMP_H
#define TY_LOGPUMP_H

#include "base/err.h"

struct instlog;
struct logpump;

struct logpump *logpump__new(struct err *err);
/* Copy out_fd to stream 1 and err_fd to stream 2 of log; label names the
 * instance in warnings. */
int logpump__add(struct logpump *p, int out_fd, int err_fd, struct instlog *log,
                 const char *label, struct err *err);
/* Wait up to drain_ms for every pipe to reach its end (the instances
 * were stopped), finish every log, stop the thread; NULL-safe, sets *p to
 * NULL. */
void logpump__destroy(struct logpump **p, int drain_ms);

#endif
