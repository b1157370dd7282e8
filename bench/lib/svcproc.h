/*
 * svcproc.h — a server in a child process, for the client-side
 * benchmarks: testyard's own sync service (runner/sync/syncsvc.c, driven by the
 * same poll loop shape as the coordinator's), a trivial ROUTER that echoes
 * every message back (the ZeroMQ floor: one ZeroMQ round trip, no logic),
 * or the least a barrier over one TCP connection per instance can be: a
 * plain epoll loop that reads newline-terminated signals and, once every
 * instance has sent one, writes one line back to each (the kernel floor).
 *
 * A separate process keeps the server's memory and CPU time apart from the
 * thousands of client sockets, so both can be read from /proc. Call
 * svcproc_start before creating any ZeroMQ context in the parent.
 *
 * Ownership: the struct is held by value by the caller; svcproc_stop ends
 * the child and frees what svcproc_start made.
 */
#ifndef TY_BENCH_SVCPROC_H
#define TY_BENCH_SVCPROC_H

#include <stddef.h>
#include <sys/types.h>

/* The secret every benchmark's sync service takes, and its clients say
 * hello with (a benchmark has nothing to protect). */
#define SVCPROC_SECRET                                                         \
    "62656e63682d62656e63682d62656e63682d62656e63682d62656e63682d6265"

enum svcproc_kind { SVCPROC_SYNC, SVCPROC_ECHO, SVCPROC_TCP };

struct svcproc {
    pid_t pid;
    int ctl; /* write end of the control pipe; closing it stops */
    char endpoint[256];
    char run_dir[64]; /* the sync service's run folder, removed at stop */
};

/* Start a server for ninstances instances of run `run_id`, all in group
 * "g" (group_index = global index). The endpoint is tcp://127.0.0.1:<port>
 * for every kind. */
void svcproc_start(struct svcproc *sp, enum svcproc_kind kind,
                   const char *run_id, size_t ninstances);
void svcproc_stop(struct svcproc *sp);

#endif
