/*
 * sdk_fixture.h — a real sync service on a thread of the test process,
 * and SDK handles connected to it, for tests/unit/test_sdk_*.c (linked
 * into every unit test).
 *
 * svc_start makes a service for n instances of run RUN, all in group "g",
 * with a release board, in a fresh temporary folder (S.dir); handle(i, n)
 * sets the environment an instance gets and connects a handle, as
 * ty_main does. Events and hellos are recorded in S.
 */
#ifndef TY_SDK_FIXTURE_H
#define TY_SDK_FIXTURE_H

#include "sync/sync.h"
#include "ty_int.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define RUN "run-sdk"
/* The run's secret every fixture service uses, so that an environment set
 * before the service starts still works. */
#define SDK_SECRET                                                             \
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

struct sdk_fixture {
    struct syncsvc *svc;
    pthread_t th;
    pthread_mutex_t mu;
    bool stop;
    int exit_inst;
    char *exit_how;
    char dir[512];
    char board[600];  /* the release board's folder; "" = not told */
    char types[1024]; /* event types seen, comma-separated */
    char error[1024]; /* the last failure event's error */
    int hellos;
};

extern struct sdk_fixture S;
/* Set before svc_start: the service's run-wide bounds (zero: defaults). */
extern struct syncsvc_bounds svc_bounds;

void svc_start(int n);
/* The same, listening on bind (e.g. "tcp://127.0.0.1:<port>"). */
void svc_start_at(int n, const char *bind);
void svc_stop(void);
/* Tell the service (from its own thread) that instance i ended. */
void svc_exit_instance(int i, const char *how);
/* The waiters answered on the release board, summed over barriers.jsonl. */
int64_t on_board(void);
/* The environment of instance i of n. */
void set_env(int i, int n);
/* A connected handle for instance i of n. */
struct ty *handle(int i, int n);

/* ty_signal_and_wait on a thread: fill in the first four, start
 * wait_thread, join, read the rest. */
struct wait_arg {
    struct ty *ty;
    const char *state;
    int64_t target;
    int64_t timeout_ms;
    int64_t rc;
    int64_t elapsed_ms;
    char msg[512];
    const char *group; /* ty_signal_and_wait_in when set */
};

void *wait_thread(void *p);

#endif
