/*
 * bench.h — what the benchmark programs under bench/ share: clocks, the
 * resident memory and CPU time of a process, order statistics, the result
 * lines bench/run reads, and many ZeroMQ sockets waited on with one epoll.
 *
 * Every benchmark program measures one system once and prints its results
 * as lines `result <name> <value>` on stdout (value a plain number, in the
 * unit the name ends with: _ms, _us, _kib, _bytes, _per_s). bench/run runs
 * the programs several times, interleaving testyard with the tool it is
 * compared to, and turns those lines into the table. Diagnostics go to
 * stderr.
 *
 * Ownership: nothing here allocates for the caller except bench_zpoll_new
 * (bench_zpoll_destroy).
 */
#ifndef TY_BENCH_H
#define TY_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Monotonic nanoseconds. */
int64_t bench_now_ns(void);

/* Resident set size of pid in KiB (VmRSS), or -1. */
long bench_rss_kib(pid_t pid);
/* CPU time pid has used (all its threads, from schedstat) in ms, or -1.
 * Threads that already ended are not counted. */
double bench_cpu_ms(pid_t pid);

/* Print `result <name> <value>`. */
void bench_result(const char *name, double value);

/* Sort v (n doubles) and return the p-th percentile (0..100) by nearest
 * rank; 0 when n is 0. */
double bench_percentile(double *v, size_t n, double p);

/* Die with a message (benchmarks have no one to return an error to). */
void bench_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void *bench_xcalloc(size_t n, size_t size);

/* Parse "--name value" style integer options: returns the value of argv[i+1]
 * and advances *i, or dies with a usage line. */
long bench_arg_long(int argc, char **argv, int *i);

/* Connect to endpoint "tcp://127.0.0.1:<port>" (blocking), then make the
 * socket non-blocking with TCP_NODELAY (as libzmq and Redis clients do).
 * Returns the descriptor (the caller closes it) or dies. */
int bench_tcp_connect(const char *endpoint);

/* ---- many ZeroMQ sockets, one epoll ----
 *
 * Each socket's ZMQ_FD goes into one epoll set. The descriptor only says
 * "something may have changed"; bench_zpoll_wait hands back the indexes of
 * sockets to drain, and the caller must receive until EAGAIN on each (and
 * drain a socket after sending on it too, since a send may consume the
 * notification). */
struct bench_zpoll;

struct bench_zpoll *bench_zpoll_new(size_t nsockets);
void bench_zpoll_destroy(struct bench_zpoll **zp);
void bench_zpoll_add(struct bench_zpoll *zp, void *sock, uint32_t index);
/* Wait up to timeout_ms; fills idx with at most max indexes; returns how
 * many (0 on timeout). */
/* The epoll set itself, for adding other descriptors. */
int bench_zpoll_fd(const struct bench_zpoll *zp);
int bench_zpoll_wait(struct bench_zpoll *zp, uint32_t *idx, int max,
                     int timeout_ms);

#endif
