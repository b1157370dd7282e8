/*
 * base/run_lock.h — who coordinates a run, written where `testyard clean` and
 * `testyard report` can find it: a coordinator.json in the run folder and
 * the same identity as labels on every container and network.
 *
 * An identity is the coordinator's pid, its start time (clock ticks after
 * boot, field 22 of /proc/<pid>/stat), the boot id and the host name: a pid
 * alone is reused, a start time tells a reused pid from the original, the
 * boot id tells a restarted host from the same one. Another host's
 * coordinator cannot be checked from here.
 *
 * Ownership: nothing returned here is allocated unless said; strings in
 * the structs are held by value.
 */
#ifndef TY_RUNNER_RUN_LOCK_H
#define TY_RUNNER_RUN_LOCK_H

#include "base/err.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The file in the run folder. */
#define RUN_LOCK_FILE "coordinator.json"

struct run_identity {
    long pid;
    unsigned long long start; /* clock ticks after boot */
    char boot_id[40];
    char host[256];
};

enum run_liveness {
    RUN_ALIVE,     /* the coordinator still runs on this host */
    RUN_DEAD,      /* it is gone: no such process, reused pid, rebooted */
    RUN_ELSEWHERE, /* another host's: cannot tell */
};

/* The identity of process pid on this host (pid 0: this process). */
int run_identity_of(pid_t pid, struct run_identity *id, struct err *err);
/* Whether id's coordinator is alive; why gets one short phrase ("pid 12 on
 * this host", "no process 12 on this host", ...). */
enum run_liveness run_identity_check(const struct run_identity *id, char *why,
                                     size_t size);

/* Labels "testyard.coordinator.<key>=<value>" for this process, into out
 * (RUN_LABELS_N of them, the caller's to free). */
#define RUN_LABELS_N 4
int run_identity_labels(char *out[RUN_LABELS_N], struct err *err);
/* The identity from a container's or network's Labels object; -1 when
 * the labels do not carry one (made by an older testyard). */
int run_identity_from_labels(const cJSON *labels, struct run_identity *id);

/* What coordinator.json says. */
struct run_lock {
    struct run_identity id;
    char state[16]; /* "running", "finished", "interrupted" */
};

/* Write coordinator.json with this process's identity, state running. */
int run_lock_create(const char *run_dir, struct err *err);
/* Rewrite it with state ("finished", "interrupted"), keeping the
 * identity. */
int run_lock_mark(const char *run_dir, const char *state, struct err *err);
/* Read it (no link followed); ENOENT when the folder has none. */
int run_lock_read(const char *run_dir, struct run_lock *lk, struct err *err);
/* True when coordinator.json says running and its coordinator is gone,
 * or when it says interrupted: the run will never finish. why as for
 * run_identity_check. */
bool run_lock_interrupted(const struct run_lock *lk, char *why, size_t size);

#endif
