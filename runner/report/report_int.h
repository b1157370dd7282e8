/*
 * report/report_int.h — the report's model of a run, shared by its modules:
 *
 *   report.c          build / write / print / destroy, notes
 *   report_load.c     result.json, composition.json, folders; JSON helpers
 *   report_bars.c     barriers.jsonl and the rounds' spans on the clock
 *   report_csv.c      memory.csv
 *   report_snap.c     heap snapshots (sidecars and profiles), their kinds
 *                     and times, round readings (memory-rounds.jsonl), top
 *                     and growing sites
 *   report_oom.c      what an OOM-killed instance left before the kill
 *   report_syms.c     frames the profiles could not name, and how to
 *                     name them
 *   report_stats.c    rounds, lines through them, trends and verdicts
 *   report_work.c     work.csv, processes.csv, disk.csv, stages.jsonl
 *   report_restarts.c result.json's stages and restarts, counters as
 *                     totals across restarts, restart time against the
 *                     work done; report_restarts_html.c shows them
 *   report_fits.c     the series against the work done (counters,
 *                     rounds) per stage; report_fits_html.c shows them
 *   report_json.c     summary.json
 *   report_html.c     report.html (report_svg.c draws its charts)
 *   report_text.c     the terminal table
 *   report_fmt.c      bytes, times and HTML escaping
 *   report_compare.c  two reports side by side
 *
 * Bytes and times are int64_t with -1 for "unknown"; times are
 * milliseconds since the run started (memory.csv's t_ms), the one clock
 * the report puts everything on.
 *
 * Ownership: everything hangs off struct report and is freed by
 * report_destroy.
 */
#ifndef TY_REPORT_INT_H
#define TY_REPORT_INT_H

#include "base/strbuf.h"
#include "base/strvec.h"
#include "report/report.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>

/* Verdict thresholds (docs/report.md, "How verdicts are decided"). */
#define REPORT_MIN_ROUNDS 3
#define REPORT_MIN_RISE_BYTES ((int64_t)1 << 20)
#define REPORT_MIN_RISE_FRACTION 0.20
#define REPORT_MIN_R2 0.6
/* The last two rounds must both stand above the first third of the
 * rounds by the same rise (docs/report.md). */
#define REPORT_HOLD_ROUNDS 2
#define REPORT_TOP_DEFAULT 10

/* SNAP_PEAK: a high-water snapshot (the profiler's peak, a plan's
 * round-N-peak), never a round's end reading. */
enum report_snap_kind { SNAP_PRE, SNAP_POST, SNAP_OTHER, SNAP_PEAK };

/* Why a snapshot was taken: the sidecar's "trigger", or for older runs
 * what its label says (docs/report.md, "Snapshot kinds"). */
enum report_trigger {
    TRIG_CALL,     /* ty_heap_snapshot with a label of the plan's */
    TRIG_ROUND,    /* ty_memory_round_end: round-N-pre-trim / -post-trim */
    TRIG_EVENT,    /* event-k */
    TRIG_PERIODIC, /* periodic-k (profiles.heap) */
    TRIG_PEAK,     /* a new high-water mark of heap in use */
    TRIG_PREOOM,   /* asked for by the coordinator near the limit */
    TRIG_SIGNAL,   /* the LD_PRELOAD profiler's signal: signal-k */
    TRIG_EXIT,     /* the LD_PRELOAD profiler at exit */
};

struct report_sample {
    int64_t t_ms, usage, anon, file, peak, limit, oom_kills;
};

/* One heap snapshot: heap-<label>.pb.gz and heap-<label>.json. */
struct report_snap {
    char *label;
    char *pb_path;   /* NULL when the profile is missing */
    char *json_path; /* NULL when the sidecar is missing */
    int round;       /* -1: not a round's snapshot */
    enum report_snap_kind kind;
    enum report_trigger trigger;
    int64_t time_ns; /* wall clock; 0 when unknown */
    int64_t t_ms;    /* on the run's clock; -1 when unknown */
    int64_t inuse, rss, hwm, rss_anon, malloc_inuse, cgroup;
    int64_t cgroup_limit; /* the sidecar's cgroup.limit_bytes */
    int64_t own;          /* the profiler's own tables (profiler_bytes) */
    int64_t own_res;      /* their resident part (profiler_resident_bytes) */
    int64_t arena, hblkhd, fordblks; /* mallinfo2 */
    int64_t pid; /* the process that took it (the sidecar's); -1 unknown */
    bool empty;  /* the profiler had sampled nothing: inuse is unknown */
    int line;    /* a reading's line in memory-rounds.jsonl */
};

/* A round's figures for an instance, or averaged over a group's
 * instances that have that round (ninst of them). */
struct report_round {
    int round;
    int ninst;
    int64_t heap_pre, heap_post, rss_pre, rss_post, cgroup;
    int64_t rss_anon; /* RssAnon after the trim */
    int64_t malloc;   /* malloc's footprint: mallinfo arena + hblkhd */
    int64_t mfree;    /* free inside malloc's heaps: fordblks */
    int64_t outside;  /* rss_anon - malloc - own_res, at least 0 */
    int64_t own_res;  /* the heap profiler's resident tables */
};
#define REPORT_ROUND_FIGURES 10

enum report_trend {
    TREND_UNKNOWN, /* fewer than REPORT_MIN_ROUNDS rounds */
    TREND_FLAT,
    TREND_GROWING,
    TREND_SHRINKING,
};

/* y = intercept + slope * round over n rounds spanning `span` rounds
 * (last - first). slope is Theil-Sen's (the median of the slopes between
 * every two rounds), intercept the median of y - slope * round; ls_slope
 * and r2 are the least-squares line's. held is the rise that holds at
 * the end: the lower of the last two rounds less the highest of the
 * first third (negated for a fall). level is what the relative floor is
 * taken of: the median of y, or a larger series' median. */
struct report_fit {
    size_t n;
    double slope, intercept, r2, mean, span;
    double ls_slope, median, held, level;
    enum report_trend trend;
};

enum report_verdict_kind {
    VERDICT_NO_DATA,    /* no per-round figures at all */
    VERDICT_NOT_ENOUGH, /* some, fewer than REPORT_MIN_ROUNDS */
    VERDICT_FLAT,
    VERDICT_GROWING,
    VERDICT_SHRINKING,
    VERDICT_RETENTION, /* heap in use flat, RSS and malloc's heaps grow */
    VERDICT_OUTSIDE,   /* heap in use and malloc flat, RSS growing */
};

struct report_verdict {
    enum report_verdict_kind kind;
    const char *basis; /* "heap_inuse", "rss", "rss_anon", "cgroup", NULL */
    double rate;       /* bytes per round of the basis */
    double r2;
    char text[256];
};

struct report_growth {
    struct report_fit heap, rss, cgroup;
    struct report_fit anon, malloc, mfree, outside, own;
    const char *site; /* the first plan site growing (borrowed), or NULL */
    struct report_verdict verdict;
};

/* An allocation site; for growing sites `growth` is what its in-use grew
 * by between two profiles and rate that per round (NAN unknown). samples:
 * the samples its estimate rests on (-1 unknown). testyard: testyard's
 * own allocations (the SDK's sync buffers, its profiler), never the
 * plan's top or growing site. */
struct report_site {
    char *function;
    int64_t flat, cum;
    int64_t samples;
    bool testyard;
    int64_t growth;
    double rate;
};

/* Sites ranked by how much their in-use grew between two profiles of
 * each instance (summed over a group's): from the first post-trim
 * snapshot to the last one with a profile. */
struct report_gsites {
    char *from, *to; /* labels when every instance agrees, else NULL */
    int rounds;      /* rounds between them; -1 unknown or disagreeing */
    size_t ninst;    /* instances with two profiles */
    struct report_site *v;
    size_t n;
};

/* result.json's memory.pre_oom: the coordinator asked the instance for
 * a pre-OOM snapshot (requests > 0), or never did. */
struct report_preoom {
    int64_t requests, first_ms, last_ms, usage, limit;
    char via[8]; /* "sync", "signal" or "" */
};

/* What an OOM-killed instance left (report_oom.c): its last profile
 * before the kill (NULL when it left none; it points into the instance's
 * snaps), how long before the kill it was taken, the usage and limit at
 * that moment, and the profile's top sites. */
struct report_oom {
    const struct report_snap *last;
    int64_t before_kill_ms, usage, limit;
    struct report_site *sites;
    size_t nsites;
    int64_t sites_total;
};

/* The frames of a group's profiles that have no symbols (report_syms.c):
 * summed over the profile each instance's top sites come from. */
#define REPORT_SYM_OBJECTS 8
struct report_symobj {
    char *path, *build_id;
    int64_t frames;
};
struct report_symbols {
    size_t nprofiles; /* profiles counted; 0: the group had none */
    int64_t frames, unsymbolized;
    struct report_symobj objects[REPORT_SYM_OBJECTS]; /* most frames first */
    size_t nobjects;
    char *example; /* a profile with such frames, run-relative, or NULL */
};

/* ---- against the work done (docs/report.md) ------------------------- */

#define REPORT_MAX_COUNTERS 8       /* counters of work.csv kept */
#define REPORT_MAX_NAMES 16         /* process names, disk paths per instance */
#define REPORT_MAX_WORK_ROWS 200000 /* rows of work.csv read */
#define REPORT_MAX_STAGES 64        /* stages kept, and as many actions */
#define REPORT_MAX_RESTARTS 1000    /* restarts kept per instance */
#define REPORT_MAX_WFITS 1024       /* fits against the work done per group */
#define REPORT_NAME_MAX 128         /* bytes of a counter's or process's name */
/* CPU seconds must rise this much to grow (bytes: REPORT_MIN_RISE_BYTES) */
#define REPORT_MIN_RISE_SECONDS 0.5
/* and restart time this much */
#define REPORT_MIN_RISE_RESTART_S 0.05

/* A time series of an instance: a counter of work.csv (v its running
 * total) or a series fitted against them (key "process:kvd:rss",
 * "disk:state:allocated", "cgroup:usage", "heap:inuse"). wall_ms is unix
 * milliseconds (-1 unknown), t_ms the run's clock (-1 unknown, as for a
 * counter). */
struct report_points {
    char *name;
    bool seconds; /* CPU seconds, not bytes */
    int64_t *wall_ms, *t_ms;
    double *v;
    size_t n, cap;
};

struct report_work {
    struct report_points *counters;
    size_t ncounters;
    struct report_points *series;
    size_t nseries;
};

/* A stage on the run's clock (result.json's "stages", else stages.jsonl)
 * or an action between stages (result.json's only): name set for a
 * stage, action ("restart", "pause", "unpause", "stop") and group for an
 * action. end_ms -1: the end (or unknown); start_ms -1 unknown. Stages
 * with a start are the fits' windows. */
struct report_stage {
    char *name;
    char *action, *group;
    int64_t start_ms, end_ms;
    char ended_by[16]; /* "duration", "rounds", ...; "" unknown */
};

/* A restart of an instance (result.json's instances[].restarts[]): on
 * the run's clock, -1 unknown; stop_unix the stop's unix milliseconds,
 * start_unix the new process's start on that clock (the stop's when its
 * start is unknown); seconds from the stop to ready, NAN when it never
 * was (down_seconds NAN unknown). number: its place in result.json's
 * list, from 1. */
struct report_restart {
    char *stage; /* the stage before the action; NULL unknown */
    int number;
    int64_t action_index;
    int64_t stop_ms, stop_unix, start_unix, exit_ms, start_ms, ready_ms;
    double seconds, down_seconds;
    char ready_by[16]; /* "sdk", "tcp", "command", "started"; "" */
    bool killed;       /* SIGKILLed after its grace */
};

/* One fit of a group's series against x ("rounds" or a counter) within
 * a stage (NULL: the whole run): fit is the median over the ninst
 * instances that have it, first the first such instance's own fit and
 * its points (px, py) for the chart. */
struct report_wfit {
    char *series, *x, *stage;
    bool seconds;
    bool restart; /* restart:seconds: y is a restart's seconds */
    size_t ninst;
    struct report_fit fit, first;
    const char *first_inst; /* borrowed label */
    double *px, *py;
    size_t npts;
};

struct report_inst {
    char *group;
    int index;
    char *label; /* "providers/0" */
    char *dir;
    bool listed; /* in result.json */
    bool started;
    char *outcome, *how, *error;
    int64_t limit, peak, peak_t_ms, final, oom_t_ms, before_oom;
    bool oom;
    bool has_preoom; /* result.json has memory.pre_oom (null or not) */
    /* result.json says it never said hello to the sync service */
    bool never_connected;
    bool blackbox; /* its group ran its own program */
    struct report_preoom preoom;
    struct report_oom kill; /* when oom */
    const char *series;     /* "memory.csv", "memory.csv.partial" or NULL */
    struct report_sample *samples;
    size_t nsamples, capsamples;
    struct report_snap *snaps;
    size_t nsnaps, capsnaps;
    struct report_snap *readings; /* memory-rounds.jsonl, one per line */
    size_t nreadings, capreadings;
    struct report_round *rounds;
    size_t nrounds;
    struct report_growth growth;
    struct report_gsites gsites;
    struct report_work work;         /* work.csv, processes.csv, disk.csv */
    struct report_restart *restarts; /* in stop order */
    size_t nrestarts;
    int64_t ready_ms;  /* its first start's ready (result.json); -1 */
    char ready_by[16]; /* and how it was known; "" */
};

struct report_group {
    char *id;
    int64_t limit;
    bool blackbox; /* it ran its own program (run.command, run.image) */
    size_t *inst;  /* indexes into report.insts */
    size_t ninst, capinst;
    int64_t peak, peak_t_ms, final;
    const char *peak_inst; /* label of the instance with the peak */
    size_t noom;
    struct report_round *rounds;
    size_t nrounds;
    struct report_growth growth;
    struct report_site *sites; /* the top ones, largest first */
    size_t nsites;
    int64_t sites_total;   /* inuse_space of the profiles they come from */
    size_t sites_ninst;    /* instances whose last profile was read */
    char *sites_label;     /* label of those profiles when all agree */
    size_t sites_older;    /* instances whose sites come from a profile
                              before their last (which held 0 B in use) */
    size_t nprofiles;      /* heap profiles of the group's instances */
    size_t nprofiles_zero; /* of them, those with 0 B in use */
    /* The same at each instance's peak snapshot (its profile with the
     * most heap in use): where the memory went, where the last snapshot
     * shows what was kept. psites_label: NULL when instances differ. */
    struct report_site *psites;
    size_t npsites;
    int64_t psites_total;
    size_t psites_ninst;
    char *psites_label;
    struct report_gsites gsites;
    struct report_symbols syms;
    struct report_wfit *wfits;
    size_t nwfits, capwfits;
};

enum report_bar_kind { BAR_START, BAR_END, BAR_OTHER };

struct report_barrier {
    char *state;
    char *result; /* "released", "failed", "timeout" */
    char *error;  /* NULL unless failed */
    int64_t t_ms, target;
    int round; /* -1 unless a round boundary */
    enum report_bar_kind kind;
};

/* Round N on the clock, from its barriers; -1 where not known. A round
 * whose end barrier failed or timed out ends there, marked failed. */
struct report_span {
    int round;
    int64_t start_ms, end_ms;
    bool failed;
};

struct report {
    char *run_dir;
    int run_fd; /* run_dir, to read beneath it without following links */
    char *run_id, *plan, *case_name, *runner, *outcome, *started;
    char *name;        /* the composition's name (what a run without a plan
                        * is called) */
    double duration_s; /* -1 unknown */
    bool finished;     /* result.json was there */
    bool interrupted;  /* no result.json, and its coordinator is gone */
    int64_t start_ns;  /* wall clock of t_ms 0; 0 unknown */
    int64_t end_ms;    /* the last time anything happened */
    int top;
    struct report_group *groups;
    size_t ngroups, capgroups;
    struct report_inst *insts;
    size_t ninsts, capinsts;
    struct report_barrier *bars;
    size_t nbars, capbars;
    struct report_span *spans;
    size_t nspans, capspans;
    /* the stages and actions, in order; no stage: the whole run */
    struct report_stage *stages;
    size_t nstages, capstages;
    bool stages_result;  /* they come from result.json, not stages.jsonl */
    struct strvec notes; /* what is missing, one sentence each */
};

/* report.c */
void report__note(struct report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct report_group *report__group_get(struct report *r, const char *id);
struct report_inst *report__inst_add(struct report *r, const char *group,
                                     int index);

/* The instances that never connected to the sync service, by group
 * with their indexes as ranges ("providers 0-3, requestors 1, 5") into
 * sb; false (sb untouched) when there are none. *blackbox: every one of
 * them ran its own program. */
bool report__never_connected(const struct report *r, struct strbuf *sb,
                             bool *blackbox);
/* The report's line about them ("never connected to the sync service:
 * ...", one sentence), or NULL when there are none. Caller frees. */
char *report__never_connected_line(const struct report *r);

/* report_load.c */
int report__load(struct report *r, struct err *err);

/* Checked reads of JSON members: a member that is there, not null and of
 * the wrong type fills err once ("<path>: <where>.<key>: expected a
 * number") and sets failed; absent or null gives -1 / NULL. */
struct report_jctx {
    const char *path;
    struct err *err;
    bool failed;
};
/* A file of the run (path is under r->run_dir), read without following a
 * link on any component below the run folder (instances can write their
 * folders). A link or anything but a regular file is noted and reads as
 * absent (NULL, err->code ENOENT). Caller frees. */
char *report__read(struct report *r, const char *path, size_t max_bytes,
                   size_t *len, struct err *err);
/* A folder of the run (rel to the run folder), opened the same way, for
 * readdir; NULL when it cannot be. */
DIR *report__opendir(const struct report *r, const char *rel);
/* Parse a JSON file of the run; NULL and *absent when it does not exist,
 * NULL and err ("<path>:<line>:<col>: not valid JSON") when it is
 * malformed. */
cJSON *report__json_file(struct report *r, const char *path, bool *absent,
                         struct err *err);
cJSON *report__json_text(const char *text, size_t len, const char *name,
                         int line, struct err *err);
int64_t report__jnum(struct report_jctx *c, const cJSON *o, const char *where,
                     const char *key);
double report__jdouble(struct report_jctx *c, const cJSON *o, const char *where,
                       const char *key);
const char *report__jstr(struct report_jctx *c, const cJSON *o,
                         const char *where, const char *key);
bool report__jbool(struct report_jctx *c, const cJSON *o, const char *where,
                   const char *key);
const cJSON *report__jitem(struct report_jctx *c, const cJSON *o,
                           const char *where, const char *key, int type);

/* report_bars.c: barriers.jsonl into r->bars and r->spans. */
int report__bars_load(struct report *r, struct err *err);

/* report_csv.c: read inst's memory.csv (or .partial) if there is one. */
int report__csv_load(struct report *r, struct report_inst *in, struct err *err);
/* A CSV cell of a whole number >= 0 into *v, -1 when empty; false when
 * it is neither. */
bool report__count(const char *s, int64_t *v);

/* Call fn on each line of a JSON-lines file (text, len bytes) that is not
 * blank, with its 1-based number; an error on the last line when it has
 * no newline is taken as a line cut short: noted and ignored. */
int report__jsonl_lines(struct report *r, const char *path, const char *text,
                        size_t len,
                        int (*fn)(struct report *r, void *ctx, int line,
                                  const char *text, size_t len,
                                  struct err *err),
                        void *ctx, struct err *err);

/* report_work.c: inst's work.csv, processes.csv and disk.csv, each
 * optional; the run's stages.jsonl. */
int report__work_load(struct report *r, struct report_inst *in,
                      struct err *err);
int report__stages_load(struct report *r, struct err *err);
void report__points_add(struct report_points *p, int64_t wall, int64_t t,
                        double v);
void report__points_release(struct report_points *p);
/* The points named name among v[0..n), or NULL. Borrowed. */
const struct report_points *report__points_find(const struct report_points *v,
                                                size_t n, const char *name);
void report__work_release(struct report_work *w);

/* A name from an instance: control characters become '?', at most
 * REPORT_NAME_MAX - 1 bytes (buf holds REPORT_NAME_MAX); *cut when it
 * was longer. */
void report__clean_name(const char *s, char *buf, bool *cut);

/* report_restarts.c */
/* result.json's instances[i].restarts (o the instance's object, where
 * "instances[i]") into in, with its ready_ms and ready_by. A member of
 * the wrong type is an error; a restart without its stop's times, or
 * with negative seconds, is left out with a note. */
int report__restarts_load(struct report *r, struct report_jctx *c,
                          struct report_inst *in, const cJSON *o,
                          const char *where);
/* result.json's top-level "stages" into r->stages (absent: nothing, and
 * stages.jsonl is read instead). */
int report__result_stages(struct report *r, struct report_jctx *c,
                          const cJSON *j);
/* Each counter of in's work.csv (sorted by time) as its running total
 * across the instance's processes: after each restart, and at any other
 * drop (noted), the values go on from the last one before. */
void report__counter_totals(struct report *r, struct report_inst *in);
/* Counter c's total at wall (unix ms): interpolated between its rows,
 * its last total after them, 0 before the first; NAN without rows. */
double report__total_at(const struct report_points *c, int64_t wall);
/* Every group's restart time against cycles so far and against the
 * restart's number (series restart:seconds), into its wfits. */
void report__restart_fits(struct report *r);
/* The restarts of g's instances: how many, how many had a time (their
 * seconds into *secs, caller frees, in instance order), were killed;
 * the median and largest time (NAN without one). */
struct report_rstats {
    size_t count, timed, killed;
    double median, max;
    double *secs;
};
void report__restart_stats(const struct report *r, const struct report_group *g,
                           struct report_rstats *st);
/* The restart fit of g to show in one line: a growing one against a
 * counter, else any growing one, else the first against a counter, else
 * against restarts; NULL when g has none. Borrowed. */
const struct report_wfit *report__restart_fit(const struct report_group *g);
/* "4 restarts, 410 ms median (max 520 ms)[, 1 never ready][, 1 killed
 * after its grace]" and, with a fit, "; growing +20.0 ms per 1000 cycles
 * against cycles (R² 0.97)". */
void report__restart_line(const struct report *r, const struct report_group *g,
                          char *buf, size_t size);
/* summary.json's groups[].restarts, instances[].restarts and stages. */
cJSON *report__restarts_group_json(const struct report *r,
                                   const struct report_group *g);
cJSON *report__restarts_inst_json(const struct report_inst *in);
cJSON *report__stages_json(const struct report *r);
void report__restarts_release(struct report_inst *in);
void report__stages_release(struct report *r);

/* report_restarts_html.c: the "Stages and restarts" section; the memory
 * chart's stage bands and restart lines (report_svg.c draws them). */
void report__html_restarts(struct strbuf *sb, const struct report *r);

/* report_fits.c: every group's fits against the work done. */
void report__fits(struct report *r);
/* A fit of g from its instances' fits[0..n) (n > 0): the group's line is
 * the median of theirs, its trend taken with the floor min_rise (in the
 * series' unit); the first instance's (first_inst) points px, py
 * (npts) are kept, thinned, for the chart. NULL when g has
 * REPORT_MAX_WFITS already. */
struct report_wfit *report__wfit_add(struct report_group *g, const char *series,
                                     const char *x, const char *stage,
                                     bool seconds, double min_rise,
                                     const struct report_fit *fits, size_t n,
                                     const char *first_inst, const double *px,
                                     const double *py, size_t npts);
void report__wfits_release(struct report_group *g);
/* "+4.0 KiB per cycle", "+3.1 ms CPU per cycle", "+16.0 MiB per round". */
void report__fmt_per(const struct report_wfit *w, double slope, char *buf,
                     size_t size);
/* "growing", "flat", "shrinking", "not enough points". */
const char *report__wfit_verdict(const struct report_wfit *w);
cJSON *report__wfits_json(const struct report_group *g);

/* report_fits_html.c: the "Against the work done" section. */
void report__html_fits(struct strbuf *sb, const struct report *r);

/* report_snap.c */
int report__snaps_load(struct report *r, struct report_inst *in,
                       struct err *err);
int report__sites(struct report *r, struct report_group *g, struct err *err);
/* Whether g's peak sites come from the same profiles as its top sites
 * (every instance's last snapshot is its peak): shown once. */
bool report__same_sites(const struct report_group *g);
/* The instance's latest snapshot with a profile (snapshots are in time
 * order) of the process whose profiles held the most heap (under
 * LD_PRELOAD every process of the program's tree has its own); NULL when
 * none. Borrowed. */
const struct report_snap *report__last_profile(const struct report_inst *in);
/* The top sites of one profile (at most r->top, largest first) into
 * *sites (caller frees with report__sites_free) and its inuse_space
 * total into *total. */
int report__snap_sites(struct report *r, const struct report_snap *s,
                       struct report_site **sites, size_t *n, int64_t *total,
                       struct err *err);
void report__sites_free(struct report_site **sites, size_t *n);
/* Why group g has no sites: "no heap profiles ...", or "8 heap profiles,
 * all with 0 B in use at the snapshot: ...". */
void report__sites_absent_text(const struct report_group *g, char *buf,
                               size_t size);
/* Every snapshot's time on the run's clock, once the start is known. */
void report__snaps_clock(struct report *r);
const char *report__trigger_name(enum report_trigger t);

/* report_oom.c */
int report__ooms(struct report *r, struct err *err);
/* "last profile 800 ms before the kill (pre-oom), at 115.2 MiB of 128.0
 * MiB limit", or why there is none. */
void report__oom_profile_text(const struct report_inst *in, char *buf,
                              size_t size);
/* "pre-OOM snapshot asked for at 3.3 s over the sync connection, at
 * 88.0 MiB of 96.0 MiB limit", or "" when result.json does not say. */
void report__preoom_text(const struct report_inst *in, char *buf, size_t size);
/* The sample of the instance's memory.csv nearest t_ms; NULL when none. */
const struct report_sample *report__sample_near(const struct report_inst *in,
                                                int64_t t_ms);
/* The sites of profile to_pb less those of from_pb (both under the run
 * folder), largest growth first, only those that grew; testyard's after
 * the plan's. Appended to *v (n, cap); names are the caller's. */
int report__sites_growth(struct report *r, const char *from_pb,
                         const char *to_pb, struct report_site **v, size_t *n,
                         size_t *cap, struct err *err);
void report__gsites_release(struct report_gsites *gs);
/* A site's name as the tables show it: "f (testyard)", "f (1 sample)". */
void report__site_name(const struct report_site *s, char *buf, size_t size);

/* report_syms.c */
struct pprof_profile;
/* Add profile p (rel: its run-relative path) to g's counts. */
void report__syms_add(struct report_symbols *g, const struct pprof_profile *p,
                      const char *rel);
void report__syms_release(struct report_symbols *g);
/* "12 of 40 frames in providers' profiles have no symbols: ... (install
 * ...; or symbolize later: pprof ...)", or "" when every frame was named
 * or none of g's sites shown is unnamed. */
void report__syms_text(const struct report_group *g, char *buf, size_t size);
/* summary.json's groups[].symbols; null when the group had no profile. */
cJSON *report__syms_json(const struct report_group *g);

/* report_stats.c */
int report__fit_line(const double *x, const double *y, size_t n,
                     struct report_fit *f);
/* The median of v[0..n), n > 0, which it sorts. */
double report__median(double *v, size_t n);
enum report_trend report__trend_of(const struct report_fit *f);
/* The same with another absolute floor (min_rise, in the series' unit). */
enum report_trend report__trend_floor(const struct report_fit *f,
                                      double min_rise);
void report__verdict_of(struct report_growth *g);
/* Say the verdicts again now that growing sites are known. */
void report__verdicts_name_sites(struct report *r);
void report__analyse(struct report *r);
const char *report__trend_name(enum report_trend t);
const char *report__verdict_name(enum report_verdict_kind k);
/* Round `round` of group g, or NULL when it has none. Borrowed. */
const struct report_round *report__round_of(const struct report_group *g,
                                            int round);

/* report_json.c */
cJSON *report__json(const struct report *r);
cJSON *report__fit_json(const struct report_fit *f);

/* report_html.c */
char *report__html(const struct report *r);
void report__html_head(struct strbuf *sb, const char *title);
void report__html_foot(struct strbuf *sb);
/* A group's heading: <h3 class="site">, its colour swatch and its id,
 * left open for what follows. */
void report__html_group_h3(struct strbuf *sb, const char *id, size_t gi);

/* report_svg.c */
void report__svg_memory(struct strbuf *sb, const struct report *r);
void report__svg_rounds(struct strbuf *sb, const struct report *r);
/* Legend entries (<li>) for the snapshot markers the memory chart drew. */
void report__svg_snap_legend(struct strbuf *sb, const struct report *r);
const char *report__group_color(size_t g);

/* report_fmt.c */
void report__fmt_bytes(int64_t v, char *buf, size_t size);
/* A figure worked out in doubles (a mean, seconds * 1000) as an int64_t,
 * held within its range; NaN is -1, unknown. */
int64_t report__i64(double d);
void report__fmt_rate(double bytes_per_round, char *buf, size_t size);
void report__fmt_ms(int64_t ms, char *buf, size_t size);
void report__html_esc(struct strbuf *sb, const char *s);
/* A table cell <td class="cls"> (cls NULL: none) of text, escaped; "-"
 * for NULL. */
void report__html_cell(struct strbuf *sb, const char *cls, const char *text);

#endif
