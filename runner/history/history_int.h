/*
 * history/history_int.h — what the files of the history module share:
 * SQLite calls with their errors in struct err (history_db.c), the
 * loaded series with its change points (history_load.c), and the forms
 * its figures are written in (history_out.c, for history_svg.c too).
 *
 * Ownership: struct history owns every string and array below it.
 */
#ifndef TY_HISTORY_INT_H
#define TY_HISTORY_INT_H

#include "history/history.h"

#include "base/sql.h"
#include "base/strbuf.h"

/* ---- SQLite (history_db.c) ---- */

/* err filled from db's last error, "what: MESSAGE"; status 74 for a
 * full disk or an I/O error, 69 for a database locked past the busy
 * timeout, 65 for a corrupt one, 70 otherwise; returns -1. */
int history__sqlerr(sqlite3 *db, struct err *err, const char *what);
int history__exec(sqlite3 *db, const char *sql, struct err *err);
int history__prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
                     struct err *err);
/* Bind a double, or NULL when v is NAN (text: sql_bind_text of
 * base/sql.h). */
void history__bind_double(sqlite3_stmt *st, int i, double v);
void history__bind_i64(sqlite3_stmt *st, int i, int64_t v, bool known);
/* Column i as a double, NAN for NULL; as an integer, unknown for NULL. */
double history__col_double(sqlite3_stmt *st, int i);
int64_t history__col_i64(sqlite3_stmt *st, int i, int64_t unknown);

/* ---- the series (history_load.c) ---- */

/* How the instances of a group ended, in result.json's order. */
enum {
    HISTORY_SUCCESS,
    HISTORY_FAILURE,
    HISTORY_CRASH,
    HISTORY_OOM,
    HISTORY_TIMEOUT,
    HISTORY_CANCELED,
    HISTORY_LOST,
    HISTORY_NOUTCOMES
};
extern const char *const history__outcome_names[HISTORY_NOUTCOMES];

/* Growth per round flat runs show is noise around zero, where a relative
 * change says nothing: a change of it must be at least this (and its
 * chart spans at least this either side of zero). */
#define HISTORY_GROWTH_MIN_ABS 65536.0
/* The least change of peak or final memory called a change point when
 * the options set none: the report's least rise (1 MiB). Below it a
 * figure moves with allocator arenas and page-cache charges from run to
 * run (a plan's final usage flips between 300 and 600 KiB on a busy
 * machine), however significant the split looks. */
#define HISTORY_BYTES_MIN_ABS 1048576.0

/* The figures of a group change points are looked for in. */
enum { HISTORY_PEAK, HISTORY_FINAL, HISTORY_GROWTH, HISTORY_NFIGURES };
/* "peak", "final", "growth"; the JSON members "peak_bytes", ... */
extern const char *const history__figure_names[HISTORY_NFIGURES];
extern const char *const history__figure_keys[HISTORY_NFIGURES];

struct history_group {
    char *id;
    int64_t instances;            /* -1 unknown */
    double fig[HISTORY_NFIGURES]; /* NAN unknown */
    char *verdict;                /* summary.json's verdict.kind, or NULL */
    int64_t oom_kills;            /* -1 unknown */
    int64_t outcomes[HISTORY_NOUTCOMES];
};

/* One fit of summary.json's groups[].fits[] as recorded: its key
 * (group, series, x, stage; stage NULL for the whole run) and figures. */
struct history_fit {
    char *group, *series, *x, *stage;
    double slope, r2;          /* NAN unknown */
    char *verdict;             /* NULL unknown */
    int64_t instances, points; /* -1 unknown */
};

struct history_run {
    int64_t number, task_id; /* task_id 0: not from the daemon */
    char *schedule, *version, *run_id, *run_dir;
    char *started, *ended, *outcome; /* RFC 3339; started NULL unknown */
    double duration_s, build_s;      /* NAN unknown / no build */
    struct history_group *groups;
    size_t ngroups;
    struct history_fit *fits; /* in the order recorded, by group */
    size_t nfits;
};

/* Run r's group whose id is id, NULL when r has none. */
const struct history_group *history__group_of(const struct history_run *r,
                                              const char *id);
/* Is group id in a run before run i? (each group is analysed and drawn
 * once, at its first run) */
bool history__seen_before(const struct history *h, size_t i, const char *id);

/* A change point of one figure of one group, at run index run. */
struct history_point {
    char *group;
    int figure;
    size_t run; /* index into runs */
    struct history_cp cp;
};

/* A fit key over the runs: the first run's fit that has it (borrowed),
 * in the order keys first appear. */
struct history_fkey {
    const struct history_fit *first;
};

/* A change point of a fit key's slope, at run index run. */
struct history_fpoint {
    size_t key; /* index into fkeys */
    size_t run;
    struct history_cp cp;
    const char *before, *after; /* the segments' usual verdicts (borrowed
                                   from the runs' fits), or NULL */
};

struct history {
    char *name;
    struct history_run *runs;
    size_t nruns;
    struct history_point *points;
    size_t npoints;
    struct history_fkey *fkeys; /* every fit key, after history_load */
    size_t nfkeys;
    struct history_fpoint *fpoints; /* after history_analyse */
    size_t nfpoints;
    struct history_cp_opts opts; /* what history_analyse used */
    bool analysed;
};

/* ---- fits (history_fits.c) ---- */

/* The least relative change of a slope called a change point: a fit's
 * slope moves more from night to night than a memory figure (a median
 * of Theil-Sen slopes over a few instances). */
#define HISTORY_SLOPE_MIN_EFFECT 0.2

/* Equal strings, or both NULL. */
bool history__same_str(const char *a, const char *b);
/* Run r's fit with key k, NULL when r has none. */
const struct history_fit *history__fit_of(const struct history_run *r,
                                          const struct history_fit *k);
/* Are two fits of the same key? */
bool history__same_key(const struct history_fit *a,
                       const struct history_fit *b);
/* Collect h's fit keys (history_load). */
void history__fit_keys(struct history *h);
/* Find the change points of every key's slope (history_analyse). */
void history__analyse_fits(struct history *h);
/* The last run (index) before run `before` with key k's slope known;
 * (size_t)-1 when none. */
size_t history__fit_last(const struct history *h, size_t k, size_t before);
/* "kvd process:kvd:rss against cycles in load" (stage "whole run" when
 * NULL); not escaped. */
void history__fit_name(const struct history_fit *f, struct strbuf *sb);
/* A slope as the report writes it ("+4.0 KiB per cycle"; "-" NAN). */
void history__fmt_slope(const struct history_fit *f, double v, char *buf,
                        size_t size);
/* A slope change point as `testyard history` lists it, appended to sb;
 * not escaped. */
void history__fpoint_line(const struct history *h,
                          const struct history_fpoint *p, struct strbuf *sb);
/* Reading recorded fits back (history_load): run id's into r. */
int history__load_fits(sqlite3 *db, int64_t id, struct history_run *r,
                       struct err *err);
void history__fits_release(struct history_run *r);

/* ---- the fits as text and JSON (history_fits_out.c) ---- */

/* The fits' part of history_print: the first keys, the slopes' change
 * points; nothing without fits. */
void history__print_fits_summary(const struct history *h, FILE *out);
/* A recorded fit: its key and figures. */
cJSON *history__fit_json(const struct history_fit *f);
/* A slope change point: run, version, change, p, means, verdicts. */
cJSON *history__fpoint_json(const struct history *h,
                            const struct history_fpoint *p);

/* ---- the forms figures are written in (history_out.c) ---- */

/* Bytes as "100.0 MiB", "-" when NAN (unknown) or negative. */
void history__fmt_bytes(double v, char *buf, size_t size);
/* A rate per round: "+8.0 MiB", "-12.0 KiB", "0 B"; "-" when NAN. */
void history__fmt_rate(double v, char *buf, size_t size);
/* Figure f's value: a rate for growth, else bytes. */
void history__fmt_figure(int f, double v, char *buf, size_t size);
/* "2026-12-02 00:51:03" of an RFC 3339 time t ("-" when NULL). */
void history__fmt_date(const char *t, char *buf, size_t size);
/* A change point's relative change: "+18 %", "-3.5 %" (of a figure that
 * was not 0 before). */
void history__fmt_change(const struct history_cp *cp, char *buf, size_t size);
/* A number, null when NAN or infinite. */
void history__json_number(cJSON *o, const char *key, double v);
/* A CSV field, quoted when it holds a comma, a quote or a line break
 * (nothing for NULL); a number after a comma (nothing after it for NAN). */
void history__csv_str(FILE *out, const char *s);
void history__csv_num(FILE *out, double v);
/* A change point as `testyard history` lists it, appended to sb:
 * "providers peak: +18 % at run 41 (commit abc123), p = 0.001 (mean
 * 100.0 MiB -> 118.0 MiB)"; not escaped. */
void history__point_line(const struct history *h, const struct history_point *p,
                         struct strbuf *sb);

#endif
