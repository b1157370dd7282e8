/*
 * report/report_int.h — the report's model of a run, shared by its modules:
 *
 *   report.c          build / write / print / destroy, notes
 *   report_load.c     result.json, composition.json, folders; JSON helpers
 *   report_bars.c     barriers.jsonl and the rounds' spans on the clock
 *   report_csv.c      memory.csv
 *   report_snap.c     heap snapshots (sidecars and profiles), top sites
 *   report_stats.c    rounds, least squares, trends and verdicts
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
#define REPORT_MIN_RISE_FRACTION 0.10
#define REPORT_MIN_R2 0.6
#define REPORT_TOP_DEFAULT 10

enum report_snap_kind { SNAP_PRE, SNAP_POST, SNAP_OTHER, SNAP_PEAK };

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
    int64_t time_ns; /* wall clock; 0 when unknown */
    int64_t inuse, rss, hwm, rss_anon, malloc_inuse, cgroup;
    int64_t own; /* the profiler's own tables (profiler_bytes) */
    bool empty;  /* the profiler had sampled nothing: inuse is unknown */
};

/* A round's figures for an instance, or averaged over a group's
 * instances that have that round (ninst of them). */
struct report_round {
    int round;
    int ninst;
    int64_t heap_pre, heap_post, rss_pre, rss_post, cgroup;
};

enum report_trend {
    TREND_UNKNOWN, /* fewer than REPORT_MIN_ROUNDS rounds */
    TREND_FLAT,
    TREND_GROWING,
    TREND_SHRINKING,
};

/* y = intercept + slope * round over n rounds spanning `span` rounds
 * (last - first); mean of y; R^2. */
struct report_fit {
    size_t n;
    double slope, intercept, r2, mean, span;
    enum report_trend trend;
};

enum report_verdict_kind {
    VERDICT_NO_DATA,    /* no per-round figures at all */
    VERDICT_NOT_ENOUGH, /* some, fewer than REPORT_MIN_ROUNDS */
    VERDICT_FLAT,
    VERDICT_GROWING,
    VERDICT_SHRINKING,
    VERDICT_RETENTION, /* heap in use flat, RSS growing */
};

struct report_verdict {
    enum report_verdict_kind kind;
    const char *basis; /* "heap_inuse", "rss", "cgroup" or NULL */
    double rate;       /* bytes per round of the basis */
    double r2;
    char text[256];
};

struct report_growth {
    struct report_fit heap, rss, cgroup;
    struct report_verdict verdict;
};

struct report_site {
    char *function;
    int64_t flat, cum;
};

/* A group's allocation sites from one profile of each instance. */
struct report_sites {
    struct report_site *v; /* the top ones, largest first */
    size_t n;
    int64_t total; /* inuse_space of the profiles they come from */
    size_t ninst;  /* instances whose profile was read */
    char *label;   /* label of those profiles when all agree, else "" */
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
    const char *series; /* "memory.csv", "memory.csv.partial" or NULL */
    struct report_sample *samples;
    size_t nsamples, capsamples;
    struct report_snap *snaps;
    size_t nsnaps, capsnaps;
    struct report_round *rounds;
    size_t nrounds;
    struct report_growth growth;
};

struct report_group {
    char *id;
    int64_t limit;
    size_t *inst; /* indexes into report.insts */
    size_t ninst, capinst;
    int64_t peak, peak_t_ms, final;
    const char *peak_inst; /* label of the instance with the peak */
    size_t noom;
    struct report_round *rounds;
    size_t nrounds;
    struct report_growth growth;
    struct report_sites sites;      /* at each instance's last snapshot */
    struct report_sites peak_sites; /* at each instance's peak snapshot */
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
    struct strvec notes; /* what is missing, one sentence each */
};

/* report.c */
void report__note(struct report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct report_group *report__group_get(struct report *r, const char *id);
struct report_inst *report__inst_add(struct report *r, const char *group,
                                     int index);

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

/* report_snap.c */
int report__snaps_load(struct report *r, struct report_inst *in,
                       struct err *err);
/* The group's top sites at its instances' last snapshots and at their
 * peaks (the snapshot with the most heap in use). */
int report__sites(struct report *r, struct report_group *g, struct err *err);
/* Whether the peak sites come from the same profiles as the last ones
 * (every instance's last snapshot is its peak): shown once. */
bool report__same_sites(const struct report_group *g);

/* report_stats.c */
int report__fit_line(const double *x, const double *y, size_t n,
                     struct report_fit *f);
enum report_trend report__trend_of(const struct report_fit *f);
void report__verdict_of(struct report_growth *g);
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

/* report_svg.c */
void report__svg_memory(struct strbuf *sb, const struct report *r);
void report__svg_rounds(struct strbuf *sb, const struct report *r);
const char *report__group_color(size_t g);

/* report_fmt.c */
void report__fmt_bytes(int64_t v, char *buf, size_t size);
/* A figure worked out in doubles (a mean, seconds * 1000) as an int64_t,
 * held within its range; NaN is -1, unknown. */
int64_t report__i64(double d);
void report__fmt_rate(double bytes_per_round, char *buf, size_t size);
void report__fmt_ms(int64_t ms, char *buf, size_t size);
void report__html_esc(struct strbuf *sb, const char *s);

#endif
