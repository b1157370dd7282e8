/*
 * testyard.h — the SDK a test plan links against (libtestyard).
 *
 * A plan is a program whose main() hands a table of test cases to ty_main().
 * The SDK reads the run environment the coordinator set (Testground's
 * variables plus testyard's own), connects to the coordinator's sync service,
 * runs the case named by TEST_CASE, and records how it ended:
 *
 *     static int run_ok(struct ty *ty) { return 0; }
 *     static const struct ty_case cases[] = {{"ok", run_ok}, {NULL, NULL}};
 *     int main(int argc, char **argv) { return ty_main(argc, argv, cases); }
 *
 * Conventions:
 *  - Functions that can fail return 0 (or a non-negative value) on success
 *    and a negative errno-style code on failure; the handle keeps a message
 *    describing the last failure (ty_errmsg). A barrier that times out
 *    returns -ETIMEDOUT: that is data for the plan, not a crash.
 *  - `const char *` results are borrowed from the handle and stay valid until
 *    ty_main returns; `char *` results are the caller's to free().
 *  - Every sync call takes a timeout in milliseconds; a negative timeout
 *    means the run's own deadline.
 *  - The handle may be used from several threads; sync calls serialize on it.
 */
#ifndef TESTYARD_H
#define TESTYARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TY_EXPORT __attribute__((visibility("default")))

struct ty;
struct ty_sub;

/* ------------------------------------------------------------------------
 * Entry point
 */

/* A test case: returns 0 on success, anything else is a failure (return
 * ty_fail(...) to say why). */
struct ty_case {
    const char *name;
    int (*run)(struct ty *ty);
};

/* Dispatch on TEST_CASE. Records start, success, failure (a non-zero return)
 * and crash (a fatal signal), flushes metrics and outputs, and returns the
 * process exit status: 0 on success, 1 on failure. An unknown case name is a
 * failure that lists the known ones. */
TY_EXPORT int ty_main(int argc, char **argv, const struct ty_case *cases);

/* Record why the case failed and return -1, for `return ty_fail(...)`. */
TY_EXPORT int ty_fail(struct ty *ty, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message of the last failed call on this handle ("" when none). */
TY_EXPORT const char *ty_errmsg(const struct ty *ty);

/* ------------------------------------------------------------------------
 * Run environment
 */

TY_EXPORT const char *ty_plan(const struct ty *ty);
TY_EXPORT const char *ty_case_name(const struct ty *ty);
TY_EXPORT const char *ty_run_id(const struct ty *ty);
TY_EXPORT const char *ty_group_id(const struct ty *ty);
/* Where files the instance writes are kept (TEST_OUTPUTS_PATH). */
TY_EXPORT const char *ty_outputs_path(const struct ty *ty);
/* Scratch space removed after the run (TEST_TEMP_PATH). */
TY_EXPORT const char *ty_temp_path(const struct ty *ty);
/* Instances in the whole run (TEST_INSTANCE_COUNT). */
TY_EXPORT int ty_instance_count(const struct ty *ty);
/* Of them, those that run the plan (TESTYARD_PLAN_INSTANCES, else
 * TEST_INSTANCE_COUNT): the target of a barrier that every plan instance
 * signals. Groups that run their own program (run.command, run.image)
 * never signal, so in a run that mixes them with the plan a target of
 * ty_instance_count() is never met. */
TY_EXPORT int ty_plan_instance_count(const struct ty *ty);
/* Instances in this instance's group (TEST_GROUP_INSTANCE_COUNT). */
TY_EXPORT int ty_group_instance_count(const struct ty *ty);
/* 0-based index of this instance within its group and within the run. */
TY_EXPORT int ty_group_index(const struct ty *ty);
TY_EXPORT int ty_global_index(const struct ty *ty);

/* ------------------------------------------------------------------------
 * Parameters, typed as the plan's manifest declares them
 *
 * Each returns 0, -ENOENT when the parameter is not set, or -EINVAL when its
 * value does not have the asked type. Sizes are bytes, durations nanoseconds.
 */

TY_EXPORT bool ty_param_has(const struct ty *ty, const char *name);
TY_EXPORT int ty_param_string(struct ty *ty, const char *name,
                              const char **out);
TY_EXPORT int ty_param_int(struct ty *ty, const char *name, int64_t *out);
TY_EXPORT int ty_param_float(struct ty *ty, const char *name, double *out);
TY_EXPORT int ty_param_bool(struct ty *ty, const char *name, bool *out);
TY_EXPORT int ty_param_size(struct ty *ty, const char *name, uint64_t *out);
TY_EXPORT int ty_param_duration(struct ty *ty, const char *name, int64_t *out);
/* An enum parameter's value (one of the manifest's values). */
TY_EXPORT int ty_param_enum(struct ty *ty, const char *name, const char **out);
/* JSON array parameters: their length, then one element at a time. */
TY_EXPORT int ty_param_array_len(struct ty *ty, const char *name, size_t *len);
TY_EXPORT int ty_param_array_string(struct ty *ty, const char *name, size_t i,
                                    const char **out);
TY_EXPORT int ty_param_array_int(struct ty *ty, const char *name, size_t i,
                                 int64_t *out);
TY_EXPORT int ty_param_array_float(struct ty *ty, const char *name, size_t i,
                                   double *out);
TY_EXPORT int ty_param_array_bool(struct ty *ty, const char *name, size_t i,
                                  bool *out);
TY_EXPORT int ty_param_array_size(struct ty *ty, const char *name, size_t i,
                                  uint64_t *out);
TY_EXPORT int ty_param_array_duration(struct ty *ty, const char *name, size_t i,
                                      int64_t *out);

/* ------------------------------------------------------------------------
 * Sync: states, barriers and topics, namespaced to this run
 */

/* Signal entry into a state; returns the 1-based sequence number (how many
 * instances had signalled it, this one included), for role election. */
TY_EXPORT int64_t ty_signal_entry(struct ty *ty, const char *state);
/* Wait until `target` instances have signalled `state`. Returns 0,
 * -ETIMEDOUT, or -EPIPE when the target can no longer be met because an
 * instance ended (ty_errmsg names it: "requestors/0 exited with status 137
 * (oom)"). */
TY_EXPORT int ty_barrier(struct ty *ty, const char *state, int64_t target,
                         int64_t timeout_ms);
/* Signal, then wait for target; returns the sequence number or -errno. */
TY_EXPORT int64_t ty_signal_and_wait(struct ty *ty, const char *state,
                                     int64_t target, int64_t timeout_ms);
/* The same for a barrier that only the instances of `group` signal (say
 * "providers-ready", target = the providers' count): it fails at once when
 * one of them ends before signalling and the rest can no longer reach the
 * target, instead of counting on instances of other groups. */
TY_EXPORT int ty_barrier_in(struct ty *ty, const char *state, const char *group,
                            int64_t target, int64_t timeout_ms);
TY_EXPORT int64_t ty_signal_and_wait_in(struct ty *ty, const char *state,
                                        const char *group, int64_t target,
                                        int64_t timeout_ms);
/* Append a JSON value to a topic; returns its 1-based sequence number. */
TY_EXPORT int64_t ty_publish(struct ty *ty, const char *topic,
                             const char *json);
/* Read a topic from sequence number `from` (1 = from the start). The caller
 * owns the subscription (ty_sub_close). NULL on failure. */
TY_EXPORT struct ty_sub *ty_subscribe(struct ty *ty, const char *topic,
                                      int64_t from);
/* Next entry: 0 with *json (caller frees) and *seq set, or -ETIMEDOUT. */
TY_EXPORT int ty_sub_next(struct ty_sub *sub, char **json, int64_t *seq,
                          int64_t timeout_ms);
TY_EXPORT void ty_sub_close(struct ty_sub **sub);

/* ------------------------------------------------------------------------
 * Events (JSON lines on stdout, which the runner keeps as run.out, and on
 * the sync connection)
 */

TY_EXPORT void ty_message(struct ty *ty, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
TY_EXPORT void ty_stage_start(struct ty *ty, const char *stage);
TY_EXPORT void ty_stage_end(struct ty *ty, const char *stage);
/* The instance is ready for work (its state loaded, its port open): the
 * event "ready". The runner times a start, and each restart of a
 * composition's stages, up to it (docs/long-runs.md). Call it once per
 * process; later calls send nothing. */
TY_EXPORT void ty_ready(struct ty *ty);
/* True once the coordinator asked this process to end (SIGTERM: the
 * stages ended, a restart or stop action, a cancel) while a ty_load_run
 * was going or after ty_stopping was first called: the load then ends at
 * once and the case can return normally, its metrics written. A SIGTERM
 * that comes when neither is so ends the process as it always did. */
TY_EXPORT bool ty_stopping(struct ty *ty);

/* ------------------------------------------------------------------------
 * Metrics. Names carry tags after commas: "duration,round=3,size=512MB".
 * Results go to results.out, in Testground's record shape.
 */

TY_EXPORT void ty_counter_add(struct ty *ty, const char *name, int64_t n);
TY_EXPORT void ty_gauge_set(struct ty *ty, const char *name, double v);
TY_EXPORT void ty_histogram_observe(struct ty *ty, const char *name, double v);
/* A single measurement; points are written to results.out within a
 * second (and at flush), so they survive the instance being killed. */
TY_EXPORT void ty_point(struct ty *ty, const char *name, double v);
/* Timers: ty_timer_start returns a monotonic start time; ty_timer_stop
 * records the elapsed seconds under name and returns them. */
TY_EXPORT int64_t ty_timer_start(struct ty *ty);
TY_EXPORT double ty_timer_stop(struct ty *ty, const char *name, int64_t start);
/* Write every counter, gauge, histogram and timer to results.out now (also
 * done when the case ends). */
TY_EXPORT int ty_metrics_flush(struct ty *ty);

/* ------------------------------------------------------------------------
 * Load: a task run at a fixed rate or a fixed concurrency
 *
 *     static int put(struct ty *ty, void *arg, int64_t cycle) { ... }
 *     struct ty_load o = {.name = "put", .rate = 200,
 *                         .duration_ns = 60 * 1000000000LL};
 *     struct ty_load_result r;
 *     if (ty_load_run(ty, &o, put, kv, &r) < 0)
 *         return ty_fail(ty, "%s", ty_errmsg(ty));
 *
 * Open loop (rate > 0): task i is due at start + i / rate, whatever the
 * tasks before it did; up to `concurrency` tasks (default 1) run at once,
 * and a task that finds them all busy starts late. Its latency counts
 * from when it was due, not from when it started, so a stall shows in
 * every task it held up (no coordinated omission). Closed loop (rate 0):
 * `concurrency` workers (default 1) run tasks back to back; a latency is
 * the task's own time.
 *
 * The load ends at the first of: duration_ns after the start (no task
 * starts later; in the open loop, tasks due by then that could not start
 * are `missed`), `cycles` tasks started, *stop non-zero (read with an
 * atomic load; set it from any thread), a task returning > 0, the
 * coordinator asking the process to end (SIGTERM: see ty_stopping), and
 * 2 s before the run's deadline. Tasks in flight finish; ty_load_run
 * returns when they have. With none of duration_ns, cycles and stop, the
 * load lasts until the coordinator stops the instance (a composition's
 * stages: docs/long-runs.md) or the run's deadline.
 *
 * Metrics, the name's tags kept after the suffix ("put,stage=2" gives
 * "put.cycles,stage=2"): counters "<name>.cycles" (tasks run) and
 * "<name>.errors" (of them, those that returned < 0), in results.out and
 * work.csv; histogram "<name>.latency" (seconds, every task).
 */

struct ty_load {
    const char *name;    /* stem of the metrics' names, tags allowed */
    double rate;         /* tasks a second (open loop); 0 = closed loop */
    int concurrency;     /* tasks at once, 1..1024; 0 = 1 */
    int64_t duration_ns; /* 0 = no limit */
    int64_t cycles;      /* tasks to start; 0 = no limit */
    const int *stop;     /* NULL, or non-zero to end the load early */
};

struct ty_load_result {
    int64_t cycles;    /* tasks run */
    int64_t errors;    /* of them, returned < 0 */
    int64_t missed;    /* open loop: due before the end, never started */
    double elapsed_s;  /* from the start until the last task finished */
    double rate;       /* cycles / elapsed_s */
    double max_late_s; /* open loop: the most a task started after due */
};

/* Run fn(ty, arg, cycle) as o says, cycle being the task's 0-based number
 * (each number once). fn returns 0 (done), < 0 (failed: counted in
 * errors, the load goes on) or > 0 (end the load: that task counts as
 * neither). Several tasks run at once on the SDK's threads when
 * concurrency > 1 (the calling thread is one of them), so fn and arg must
 * allow it. Returns 0 when the load ran, whatever its tasks returned, with
 * *out filled in (out may be NULL); -EINVAL for a bad option (ty_errmsg
 * names the field), or another negative errno when a worker thread could
 * not start (the tasks already run are in *out). */
TY_EXPORT int ty_load_run(struct ty *ty, const struct ty_load *o,
                          int (*fn)(struct ty *ty, void *arg, int64_t cycle),
                          void *arg, struct ty_load_result *out);

/* ------------------------------------------------------------------------
 * Memory: heap profiles and memory snapshots
 */

/* Take a heap profile (gzipped pprof, heap-<label>.pb.gz) and its JSON
 * sidecar (heap-<label>.json: RSS, high-water mark, allocator totals,
 * cgroup usage) and send both to the coordinator. */
TY_EXPORT int ty_heap_snapshot(struct ty *ty, const char *label);
/* Return free memory to the system (malloc_trim) — C's counterpart of "run
 * the GC before profiling again". */
TY_EXPORT void ty_heap_trim(struct ty *ty);
/* Mean bytes between samples (default 512 KiB; 1 = every allocation). */
TY_EXPORT void ty_heap_set_rate(uint64_t bytes);
TY_EXPORT uint64_t ty_heap_rate(void);

/* The helper for a plan's `memory_snapshots` parameter (none | simple |
 * detailed). ty_memory_round_end: in simple and detailed mode, a snapshot
 * labelled "round-<n>-pre-trim", a trim, and "round-<n>-post-trim"; in
 * every mode, the parameter unset included, one line of the round's
 * memory figures appended to memory-rounds.jsonl (those of the post-trim
 * snapshot, or read at the call in none mode, without a profile). Returns
 * 0 or a negative errno (a bad parameter, a failed snapshot or append).
 * ty_memory_event: in detailed mode, a snapshot every N calls (N from the
 * `memory_snapshot_every` parameter, default 10); otherwise nothing. */
TY_EXPORT int ty_memory_round_end(struct ty *ty, int round);
TY_EXPORT int ty_memory_event(struct ty *ty);

/* ------------------------------------------------------------------------
 * Helpers
 */

/* SHA-256 of len bytes at data into out. */
TY_EXPORT void ty_sha256(const void *data, size_t len, uint8_t out[32]);

#ifdef __cplusplus
}
#endif

#endif
