/*
 * history/history.h — the history of runs in SQLite, and the change points
 * found in it.
 *
 * Every finished run of a composition (by its metadata.name, or by the
 * schedule that fired it) is recorded with its timings, outcome and
 * recorded version, and per group its memory figures from summary.json:
 * peak, final, growth per round and the report's verdict, OOM kills and
 * how many instances ended how, and the slopes of the report's fits
 * against the work done (groups[].fits[]: per group the first
 * HISTORY_FITS_MAX, each keyed by series, x and stage, with its slope,
 * R² and verdict). Runs are numbered 1, 2, ... per name.
 * history_load reads a name's series back; history_analyse finds the
 * change points of each figure over it with E-Divisive means
 * (changepoint.c); history_print, history_json and history_csv write
 * what `testyard history` shows. For the daemon's dashboard,
 * history_names lists the names with runs (history_names.c) and
 * history_svg draws a series' charts (history_svg.c). docs/scheduling.md
 * ("History and change points") describes the tables, the method and its
 * parameters, and what the charts show.
 *
 * The tables are this module's own (prefixed history_), versioned in the
 * shared table schema(module, version) and migrated by history_migrate.
 *
 * Ownership: the sqlite3 handle is the caller's; strings passed in are
 * borrowed; struct history is the caller's (history_destroy); char * and
 * cJSON * returned are the caller's; so is the array of history_names
 * (history_names_free).
 */
#ifndef TY_HISTORY_H
#define TY_HISTORY_H

#include "base/err.h"
#include "base/strbuf.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version of the history tables this program knows. */
#define HISTORY_SCHEMA_VERSION 2

/* Fits recorded per run and group: the first this many of summary.json's
 * groups[].fits[], in its order (the report caps them at 1024). */
#define HISTORY_FITS_MAX 64

/* Create the table schema when missing and bring the history tables to
 * HISTORY_SCHEMA_VERSION, one transaction per step. A database whose
 * history tables are newer than this program is refused (EPROTO,
 * status 65) and left as it is. */
int history_migrate(sqlite3 *db, struct err *err);

struct history_meta {
    const char *name;     /* the composition's metadata.name, or the
                           * schedule's name; NULL: result.json's name */
    const char *schedule; /* schedule name or NULL */
    int64_t task_id;      /* 0 when not from the daemon (import) */
    const char *version;  /* recorded git commit, or NULL */
    double build_seconds; /* < 0: no build */
    const char *outcome;  /* NULL: from the run's result.json; else e.g.
                             "build-failed", "interrupted" (no run folder
                             needed) */
};

/* Record one finished run (run_dir may be NULL with meta->outcome set):
 * reads result.json and summary.json; one transaction. Returns the history
 * run number (1, 2, ... per name). A missing or malformed file fails
 * (status 66 or 65) naming the file and member, and nothing is written;
 * so is a run whose run id is already recorded under the name (EEXIST,
 * status 65). With meta->outcome set, a run folder without result.json
 * is recorded without groups. */
int64_t history_record(sqlite3 *db, const struct history_meta *m,
                       const char *run_dir, struct err *err);

/* ---- change points (changepoint.c) ---- */

struct history_cp_opts {
    double pvalue;     /* significance: p <= this (default 0.05) */
    int permutations;  /* of the permutation test (default 199) */
    size_t min_size;   /* fewest points each side of a split (default 3,
                          at least 2) */
    double min_effect; /* |mean after - mean before| / |mean before|
                          (default 0.05) */
    double min_abs;    /* and |mean after - mean before| at least this
                          (default 0): for figures around zero */
    double min_sd;     /* and at least this many standard deviations of
                          the points about their segments' means
                          (default 1.5): noise the test lets through */
    uint64_t seed;     /* of the permutations (default a constant) */
};

/* The defaults above. */
void history_cp_defaults(struct history_cp_opts *o);

struct history_cp {
    size_t index;       /* the first point of the new segment */
    double pvalue;      /* of the permutation test that split there */
    double mean_before; /* of the segment before (back to the previous
                           change point) */
    double mean_after;  /* of the segment after (to the next one) */
    double rel_change;  /* (after - before) / |before|; HUGE_VAL when
                           before is 0 */
};

/* The change points of v[0..n) by E-Divisive means (Matteson & James
 * 2014, alpha = 1): the split maximising the energy statistic over each
 * segment, tested with a seeded permutation test, recursing on the
 * segments while splits are significant; then points whose change of
 * mean is below the minimum effect are dropped (the smallest first, its
 * neighbours' segments merged). At most max are written to out in index
 * order; *nout gets how many were found (may exceed max). o NULL: the
 * defaults. Deterministic for a given seed. 0, or -1 with errno EINVAL
 * when a value is not finite; running out of memory is fatal (xmalloc). */
int history_changepoints(const double *v, size_t n,
                         const struct history_cp_opts *o,
                         struct history_cp *out, size_t max, size_t *nout);

/* ---- a name's series (history_load.c, history_out.c) ---- */

struct history;

/* The runs of name recorded at or after since_ns (0: all), oldest first.
 * A name with no run at all fails with ENOENT (status 66); one whose runs
 * are all before since_ns gives an empty series. */
struct history *history_load(sqlite3 *db, const char *name, int64_t since_ns,
                             struct err *err);
/* Find the change points of every figure (per group: peak, final,
 * growth per round) with o (NULL: defaults; the growth figure's min_abs
 * is raised to 64 KiB a round when o's is 0), and of every fit's slope
 * (min_effect at least 20 %, and kept only where the fit's usual verdict
 * is growing or shrinking on one side: docs/scheduling.md). */
void history_analyse(struct history *h, const struct history_cp_opts *o);
size_t history_nruns(const struct history *h);
void history_destroy(struct history **h);

/* The series as a table and the change points, one line each:
 * "providers peak: +18 % at run 41 (commit abc123), p = 0.001". */
void history_print(const struct history *h, FILE *out);
/* An array, one object per run; each change point is in the
 * change_points array of the run it starts at. */
cJSON *history_json(const struct history *h);
/* One row per run and group, with a header line. */
void history_csv(const struct history *h, FILE *out);

/* ---- the fits' slopes (history_fits.c, history_fits_out.c) ---- */

/* How many fit keys (group, series, x, stage) the runs of h have. */
size_t history_nfits(const struct history *h);
/* Per fit key, in the order keys first appear: its last slope, the
 * change since the run before that has it, its verdict; then every
 * key's slope per run and the slopes' change points. */
void history_print_fits(const struct history *h, FILE *out);
/* An array, one object per fit key: group, series, x, stage, the last
 * run's slope, r2, verdict and run, previous_slope, change (relative,
 * null unknown), runs [{run, version, slope, r2, verdict}] and
 * change_points [{run, version, change, p, mean_before, mean_after,
 * verdict_before, verdict_after}]. */
cJSON *history_fits_json(const struct history *h);
/* One row per run and fit, with a header line. */
void history_fits_csv(const struct history *h, FILE *out);

/* ---- the names (history_names.c) ---- */

struct history_name {
    char *name;         /* as recorded (composition metadata.name or
                           schedule name) */
    int64_t runs;       /* how many runs are recorded under it */
    char *last;         /* RFC 3339 start (else end) of its newest run,
                           NULL unknown */
    char *last_outcome; /* the newest run's outcome, NULL unknown */
    char *schedule;     /* the newest run's schedule, or NULL */
};

/* Every name with runs, by name (bytewise); *v the caller's
 * (history_names_free), NULL with *n 0 when there is none. On failure
 * -1 (SQLite's error, as history_load's) with *v NULL and *n 0. */
int history_names(sqlite3 *db, struct history_name **v, size_t *n,
                  struct err *err);
/* Frees v[0..n) and v (NULL: nothing). */
void history_names_free(struct history_name *v, size_t n);

/* ---- the charts (history_svg.c) ---- */

/* The CSS the charts' classes need (one string, to put in a <style>). */
extern const char history_svg_css[];

/* h's charts as HTML appended to sb, after history_analyse (without it,
 * no change points are drawn): per group, in the order groups first
 * appear, a <section class="hgroup" id="g-GROUP"> with an <h2>, and one
 * inline <svg class="hchart" data-figure="peak|final|growth"
 * data-group="ID"> per figure. x is the run (its number under it), y
 * the figure: bytes for peak and final, a signed rate per round with a
 * zero line for growth. Each known value is a circle (class "pt", "pt
 * bad" when the run's outcome is not success) with a <title> (run,
 * date, version, value, outcome), joined by polylines that an unknown
 * value or a run without the group breaks; each change point of the
 * group and figure a dashed vertical line (class "cp") at the run it
 * starts, labelled with the run, its version and the change, p-value in
 * its <title>; the version marked on the x axis where it changes. No
 * runs: a <p class="note">. Every string from the database is escaped;
 * the charts scale with their viewBox and need no script. */
void history_svg(const struct history *h, struct strbuf *sb);
/* One chart per fit key of h, in the order keys first appear (at most
 * max; 0: all), each an <svg class="hchart" data-figure="slope"
 * data-fit="N"> titled with the key, y the slope per run in the fit's
 * unit with a zero line, drawn as history_svg draws a figure, with the
 * slope change points; nothing when h has no fits. */
void history_svg_fits(const struct history *h, size_t max, struct strbuf *sb);

#endif
