/*
 * ty_metrics.h — what the SDK's metrics modules share, and what tests and
 * the runner's report may use: histograms, record rendering, the process
 * sample of diagnostics.out. Internal to testyard.
 *
 *   ty_metrics.c       public calls, the registry, flushing, init/fini
 *   ty_metrics_hist.c  histograms: exact, then log-bucketed
 *   ty_metrics_fmt.c   JSON records, the text buffer, tag splitting
 *   ty_metrics_diag.c  the sampler thread and diagnostics.out
 *   ty_metrics_work.c  work.csv: every counter's running total over time
 *
 * Records are JSON lines in Testground's shape (its Go SDK's
 * runtime.Metric), so scripts written for Testground's results.out and
 * diagnostics.out read ours:
 *
 *   {"ts":<unix ns>,"type":"histogram","name":"rtt,round=3",
 *    "measures":{"count":..,"max":..,...}}
 *
 * The name is written as given, tags included, as Testground does; only
 * its InfluxDB sink splits them off. Keys of "measures" are sorted, as Go
 * writes a map.
 */
#ifndef TY_METRICS_H
#define TY_METRICS_H

#include "ty_buf.h"
#include "ty_json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ty;

/* ---- text ---------------------------------------------------------- */

/* A JSON number in the shortest form that reads back the same double
 * (null for NaN and infinities, which JSON lacks). */
void ty__buf_add_double(struct ty__buf *b, double v);

/* ---- histograms -------------------------------------------------------- */

/* Samples kept exactly before switching to buckets. */
#define TY__HIST_EXACT_MAX 8192
/* Relative accuracy of a bucketed quantile. */
#define TY__HIST_ALPHA 0.01
/* Buckets per sign, bounding a histogram at about 64 KiB of counts. */
#define TY__HIST_MAX_BUCKETS 4096

/* Log-bucketed counts for one sign: bucket i holds magnitudes in
 * (gamma^(i-1), gamma^i]; counts[k] is bucket lo + k. */
struct ty__hist_store {
    int64_t *counts;
    int32_t lo;
    int32_t n;
    int64_t total;
};

struct ty__hist {
    int64_t count;
    double min, max, mean, m2; /* Welford: exact whatever the mode */
    double *samples;           /* exact mode; NULL once bucketed */
    size_t nsamples, cap;
    bool bucketed;
    struct ty__hist_store pos, neg;
    int64_t zeros;
};

/* The figures written for a histogram; quantiles are p50 p75 p95 p99
 * p99.9 p99.99. Zero everywhere when there is no sample. */
#define TY__HIST_NQ 6
struct ty__hist_summary {
    int64_t count;
    double min, max, mean, stddev, variance;
    double q[TY__HIST_NQ];
};

extern const double ty__hist_quantiles[TY__HIST_NQ];
extern const char *const ty__hist_quantile_names[TY__HIST_NQ];

void ty__hist_init(struct ty__hist *h);
void ty__hist_release(struct ty__hist *h);
/* Add one value; NaN and infinities are ignored. -ENOMEM when it could not
 * be kept. */
int ty__hist_add(struct ty__hist *h, double v);
/* Quantile q in [0, 1]. Exact mode interpolates between the two samples
 * around rank q(n+1) (as Testground's go-metrics does); bucketed mode
 * returns a value within TY__HIST_ALPHA of the sample at rank
 * floor(q(n-1)). Sorts the kept samples in place. */
double ty__hist_quantile(struct ty__hist *h, double q);
void ty__hist_summarize(struct ty__hist *h, struct ty__hist_summary *out);

/* ---- records ----------------------------------------------------------- */

enum ty__mtype {
    TY__M_POINT,
    TY__M_COUNTER,
    TY__M_GAUGE,
    TY__M_HISTOGRAM,
    TY__M_TIMER,
};

const char *ty__mtype_name(enum ty__mtype t);

/* One JSON line (with its '\n') for a point, counter or gauge. */
void ty__record_value(struct ty__buf *b, int64_t ts_ns, enum ty__mtype t,
                      const char *name, double v);
void ty__record_counter(struct ty__buf *b, int64_t ts_ns, const char *name,
                        int64_t count);
/* A histogram, or a timer when rates is not NULL (m1 m5 m15 meanrate,
 * events per second). */
void ty__record_hist(struct ty__buf *b, int64_t ts_ns, const char *name,
                     const struct ty__hist_summary *s, const double *rates);

/* Split "duration,round=3,size=512MB" into the base name (copied into
 * base) and its tags; tags[i] point into the copy held in buf (both of
 * size bufsize). Returns the number of well-formed key=value tags stored
 * (at most maxtags); malformed ones are skipped, as Testground does. */
int ty__metrics_split_name(const char *name, char *buf, size_t bufsize,
                           const char **base, const char **keys,
                           const char **values, int maxtags);

/* ---- the module inside struct ty -------------------------------------- */

/* Where the records of handles initialised from now on go:
 * ty__output_append unless this replaced it (tests capture them). NULL
 * restores the default. */
void ty__metrics_set_sink(int (*sink)(struct ty *ty, const char *file,
                                      const char *data, size_t len));
/* Send whole lines to file ("results.out", "diagnostics.out") through the
 * sink; 0 or a negative errno. */
int ty__metrics_emit(struct ty *ty, const char *file, const struct ty__buf *b);

/* Render results.out lines into b: every metric when all is true, else
 * those changed since they were last rendered; then the points recorded
 * since the last call. For flushing and tests. */
void ty__metrics_render(struct ty *ty, struct ty__buf *b, bool all);
/* ty__metrics_render(ty, b, false) and emit, then work.csv's TICK rows:
 * what the sampler thread does every second, now_ns (CLOCK_MONOTONIC)
 * being the tick's time, so that ticks a second apart give rows a second
 * apart whatever the sending took. */
int ty__metrics_tick(struct ty *ty, int64_t now_ns);
/* ty__metrics_tick at the time of the call. */
int ty__metrics_flush_changed(struct ty *ty);

/* ---- work.csv ---------------------------------------------------------- */

#define TY__WORK_FILE "work.csv"
#define TY__WORK_HEADER "time_ms,name,value\n"
/* The most bytes one process appends to work.csv. */
#define TY__WORK_CAP ((size_t)8 << 20)

/* Which counters get a row: TICK (every second, from the sampler thread)
 * those changed since their last row and whose last row is a second old;
 * CHANGED (ty_metrics_flush) those changed, whenever their last row was;
 * ALL (the end of the case) every counter, its last row. A counter that
 * never had a row counts as changed. */
enum ty__work_mode { TY__WORK_TICK, TY__WORK_CHANGED, TY__WORK_ALL };

/* What work.csv last wrote of one counter (kept in the registry). */
struct ty__work_mark {
    bool rowed;
    int64_t value;
    int64_t next_ns; /* CLOCK_MONOTONIC: no TICK row before */
};

/* Call fn on every counter in order of first use, the registry locked (fn
 * must not call back into the metrics). Nothing outside ty_main. */
void ty__metrics_each_counter(struct ty *ty,
                              void (*fn)(void *arg, const char *name,
                                         int64_t count,
                                         struct ty__work_mark *mark),
                              void *arg);

/* work.csv's state, one per handle, made by ty__metrics_init (the cap is
 * TY__WORK_CAP unless ty__work_set_cap changed it for handles made from
 * then on; 0 restores it). The header row is written first unless
 * <outputs>/work.csv is already there and not empty (an instance started
 * again in the same folder appends to what it left). */
struct ty__work;
struct ty__work *ty__work_new(const struct ty *ty);
void ty__work_destroy(struct ty__work **w);
void ty__work_set_cap(size_t bytes);
/* The rows of mode at now_ns (CLOCK_MONOTONIC, for the one-a-second
 * rule), rendered and appended through the metrics' sink
 * (ty__metrics_emit), under the state's lock so that rows reach the file
 * in the order they were taken. Past the cap nothing more is written and
 * stderr says so once. 0 or a negative errno (from the sink). */
int ty__work_write(struct ty *ty, struct ty__work *w, enum ty__work_mode mode,
                   int64_t now_ns);

/* ---- diagnostics ------------------------------------------------------- */

/* What one diagnostics sample reads; -1 when not available. */
struct ty__procstat {
    int64_t rss, hwm, rss_anon, threads, heap_inuse;
    double cpu_user, cpu_sys;
    int64_t cg_usage, cg_peak, cg_anon, cg_file, cg_limit, cg_oom_kills;
};

/* Read this process's figures; cgroup_dir may be NULL. */
void ty__procstat_read(struct ty__procstat *ps, const char *cgroup_dir,
                       int cgroup_ver);
/* The diagnostics.out lines of one sample (gauges sharing ts_ns). */
void ty__procstat_render(struct ty__buf *b, int64_t ts_ns,
                         const struct ty__procstat *ps);

/* The sampler thread, started by ty__metrics_init and stopped by
 * ty__metrics_fini: a diagnostics sample at once and then every
 * interval_ns (0 = none), and
 * every second the results that changed (as Testground's SDK does, so
 * they survive a later OOM kill). */
struct ty__diag;
struct ty__diag *ty__diag_start(struct ty *ty, int64_t interval_ns);
/* Stop and join the thread, then write a final diagnostics sample (when
 * the interval is not 0). NULL-safe. */
void ty__diag_stop(struct ty__diag **d);
/* The interval from TESTYARD_DIAGNOSTICS_INTERVAL's value (NULL: unset):
 * 5 s by default, 0 = off; a bad value gives the default and a line on
 * stderr. */
int64_t ty__diag_interval(const char *env);

#endif
