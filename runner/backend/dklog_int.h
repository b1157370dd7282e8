/*
 * backend/dklog_int.h — the output of one local:docker container into its
 * capped run.out and run.err (base/instlog.h).
 *
 * A follower thread attaches to the container's output before it starts
 * (docker_container_attach), so nothing it writes is missed and nothing
 * waits on the engine's own log. When no follower could attach, what the
 * engine kept of the logs is copied once the container ended. Either way
 * the files are moved into the instance's folder when the output ends.
 *
 * Calls may come from different threads (a start worker attaches, the
 * events thread hears of the end, a remover finishes); the first that
 * needs the copy makes it. Every call is NULL-safe. Ownership: the caller
 * owns the dklog (dklog__destroy); d and run_fd are borrowed and must
 * outlive it.
 */
#ifndef TY_DKLOG_H
#define TY_DKLOG_H

#include "base/err.h"

#include <stdbool.h>
#include <stdint.h>

struct docker;
struct dklog;

/* The capped logs of <group>/<index> (instlog_open), nothing attached
 * yet; label names the container in warnings. */
struct dklog *dklog__new(struct docker *d, int run_fd, const char *group,
                         int index, uint64_t limit, const char *label,
                         struct err *err);
/* Attach a follower to the created container id; true once it is
 * attached (start the container then), false when it could not be (the
 * logs are copied once it ended). */
bool dklog__attach(struct dklog *l, const char *id);
/* The container did not start after all: end the follower. */
void dklog__cut(struct dklog *l);
/* The container id ended: without a follower, copy what the engine kept
 * and put the files in place. */
void dklog__exited(struct dklog *l, const char *id);
/* The container id is dead or was killed (id NULL: it was never created):
 * wait for the follower until deadline_ns (monotonic) and then cut it, or
 * copy; the files are in place afterwards. */
void dklog__finish(struct dklog *l, const char *id, int64_t deadline_ns);
/* The container id was started again (its last run's end was heard):
 * once what that run wrote is in place (waited for, bounded), take what
 * the new run writes after it (instlog_resume) through a new follower;
 * call before the start, as dklog__attach. */
int dklog__restart(struct dklog *l, const char *id, struct err *err);
void dklog__destroy(struct dklog **l);

#endif
