/*
 * ty_internal.h — what the SDK's modules share and plans never see.
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
    int group_instance_count;
    int group_index;
    int global_index;
    int64_t deadline_ms; /* run deadline as a CLOCK_MONOTONIC ms, 0 = none */
    cJSON *params;       /* name -> typed JSON value */

    uint64_t serial;      /* unique per handle in this process */
    char errmsg[512];     /* last failure, see ty_errmsg() */
    char *fail_reason;    /* set by ty_fail() */
    pthread_mutex_t lock; /* guards errmsg and the sync connection */

    struct ty__conn *conn;       /* NULL when no coordinator */
    struct ty__metrics *metrics; /* ty_metrics.c */
    struct ty__heapctl *heapctl; /* ty_heapctl.c */
};

/* Build a handle from the environment (for ty_main and for tests).
 * Returns NULL with a message in why on a malformed environment. */
struct ty *ty__new_from_env(char *why, size_t whylen);
void ty__destroy(struct ty **ty);

/* Record a failure message on the handle; returns code (a negative errno). */
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

/* Module hooks called by ty_main. */
int ty__sync_connect(struct ty *ty);
void ty__sync_close(struct ty *ty);
void ty__metrics_init(struct ty *ty);
void ty__metrics_fini(struct ty *ty);
void ty__heapctl_init(struct ty *ty);
void ty__heapctl_fini(struct ty *ty);

#endif
