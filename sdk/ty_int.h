/*
 * ty_int.h — what the SDK's modules share and plans never see.
 *
 * struct ty is the handle ty_main() builds from the environment. Each SDK
 * module keeps its own state behind one pointer here and exposes init/fini
 * hooks that ty_main calls in order:
 *
 *   ty_env.c      environment and parameters (always)
 *   ty_sync.c     connection to the coordinator (when SYNC_SERVICE_* set)
 *   ty_metrics.c  metrics and the diagnostics sampler
 *   ty_heapctl.c  snapshots, trims, periodic profiles
 *
 * Internal functions are prefixed ty__ and are hidden from the shared
 * library's exports (built with -fvisibility=hidden; public ones are
 * TY_EXPORT).
 *
 * Errors inside the SDK. The runner's struct err is not used here: the
 * SDK must not depend on the runner, and a plain int is what the
 * interposer and the signal paths can afford. Every internal function has
 * one of these shapes, and its comment says which:
 *
 *   0 or -errno        the common one, for code that does not know the
 *                      handle: ty_io (the write loop), the ty_cgroup
 *                      readers, pprof encoding and gzip, heap collection
 *                      and profiles, symbol tables, ty__conn_wait and
 *                      ty__conn_flush (-ETIMEDOUT, -ENOTCONN). A count or a
 *                      length comes the same way: >= 0, or -errno.
 *   0 or -errno, with  code that takes the handle records the message
 *   the message on     itself with ty__seterr before it returns the code:
 *   the handle         ty__output_file / ty__output_append, the sync calls
 *                      in ty_sync.c, ty__metrics_emit, heap snapshots. The
 *                      public call returns that code as it is.
 *   NULL + why         constructors that can fail for a reason the user
 *                      should read take the caller's buffer (char *why,
 *                      size_t whylen) and return NULL with a phrase in it:
 *                      ty__new_from_env, ty__conn_open, ty__zmtp_new.
 *   0 or -1 + why      parsers of what a user wrote (ty_units: sizes,
 *                      durations, CPUs; ty_wire decoding; the environment
 *                      in ty_env.c): -1 with the phrase in why, no errno.
 *   -1, the reason on  an object that breaks once and stays broken keeps
 *   the object         why: ty__zmtp (ty__zmtp_error), ty__conn
 *                      (ty__conn_error).
 *   NULL or -1 as      lookups and readings where absence is an answer,
 *   "none"             not a failure: ty__board_open (no board: releases
 *                      come as messages), cgroup figures and /proc fields
 *                      the kernel does not give, symbol lookups.
 *
 * Only the public layer (ty_*, sdk/include/testyard.h) answers the plan:
 * 0 or a negative errno, and the message in ty_errmsg() (kept on the
 * handle and for the calling thread). A public call that gets a bare
 * -errno from below adds what it was doing ("heap snapshot x: ...").
 * Two public calls differ on purpose: ty_fail returns -1 (a test case's
 * return value, not an errno) and ty_main an exit status; the
 * interposer's posix_memalign returns a positive errno, as POSIX says.
 */
#ifndef TY_INTERNAL_H
#define TY_INTERNAL_H

#include "testyard.h"
#include "ty_time.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdarg.h>

struct ty__conn;
struct ty__metrics;
struct ty__heapctl;

struct ty {
    /* run environment (ty_env.c); strings owned by the handle */
    char *plan;
    char *case_name;
    char *run_id;
    char *group_id;
    char *outputs_path;
    char *temp_path;
    int instance_count;
    int plan_instance_count; /* of them, those that run the plan */
    int group_instance_count;
    int group_index;
    int global_index;
    int64_t deadline_ms; /* run deadline as a CLOCK_MONOTONIC ms, 0 = none */
    cJSON *params;       /* name -> typed JSON value */

    uint64_t serial;      /* unique per handle in this process */
    char errmsg[512];     /* last failure, see ty_errmsg() */
    char *fail_reason;    /* set by ty_fail() */
    pthread_mutex_t lock; /* guards errmsg and the sync connection */

    int ready; /* ty_ready sent its event (read with __atomic builtins) */

    struct ty__conn *conn;       /* NULL when no coordinator */
    struct ty__metrics *metrics; /* ty_metrics.c */
    struct ty__heapctl *heapctl; /* ty_heapctl.c */
};

/* Build a handle from the environment (for ty_main and for tests).
 * Returns NULL with a message in why on a malformed environment. */
struct ty *ty__new_from_env(char *why, size_t whylen);
void ty__destroy(struct ty **ty);

/* Record a failure message on the handle and for this thread; returns
 * code, which must be a negative errno (a positive one is made negative,
 * so the public call still returns a negative errno). */
int ty__seterr(struct ty *ty, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Outputs. When connected, the coordinator receives the data (with flow
 * control) and writes <instance folder>/<name> whole or not at all; with no
 * coordinator the file is written under TEST_OUTPUTS_PATH the same way. */
int ty__output_file(struct ty *ty, const char *name, const void *data,
                    size_t len);
/* Append data (whole lines) to <instance folder>/<name>. */
int ty__output_append(struct ty *ty, const char *name, const char *data,
                      size_t len);

/* Emit an event: one JSON line on stdout and, when connected, to the sync
 * service. Takes ownership of ev. */
void ty__event(struct ty *ty, cJSON *ev);

/* SIGTERM (ty_stop.c): ty_main installs the handler; ty_load_run counts
 * itself in and out (+1, -1) and ends its load once a stop was asked. */
void ty__stop_install(void);
void ty__stop_load(int delta);
bool ty__stop_asked(void);

/* Module hooks called by ty_main. */
int ty__sync_connect(struct ty *ty);
void ty__sync_close(struct ty *ty);
void ty__metrics_init(struct ty *ty);
void ty__metrics_fini(struct ty *ty);
void ty__heapctl_init(struct ty *ty);
void ty__heapctl_fini(struct ty *ty);

#endif
