/*
 * report/report.h — the report of a run and the comparison of two runs.
 *
 * report_generate() reads a run folder (result.json, composition.json,
 * barriers.jsonl, and each instance's memory.csv, heap-<label>.json
 * sidecars and heap-<label>.pb.gz profiles), works out per group and per
 * instance the memory figures, rounds, growth verdicts and top allocation
 * sites, writes <run>/summary.json and <run>/report.html (each complete or
 * absent), and prints the terminal table when asked. A folder with pieces
 * missing still gets a report that says what is missing; a malformed file
 * is an error naming the file and line (status 65), and a folder that does
 * not exist is status 66. docs/report.md describes every figure.
 *
 * The steps are also available one by one (build, write, print) for
 * `testyard compare`, which builds two reports and prints or writes their
 * differences.
 *
 * Ownership: struct report is the caller's (report_destroy); strings
 * passed in are borrowed; char * returned is the caller's.
 */
#ifndef TY_REPORT_H
#define TY_REPORT_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct report;

struct report_opts {
    FILE *table;  /* print the terminal table here; NULL: do not */
    bool no_html; /* write summary.json only */
    int top;      /* allocation sites kept per group; <= 0: 10 */
};

/* Build, write and (when o->table is set) print the report of run_dir. */
int report_generate(const char *run_dir, const struct report_opts *o,
                    struct err *err);

/* Read and analyse run_dir; nothing is written. */
struct report *report_build(const char *run_dir, const struct report_opts *o,
                            struct err *err);
/* Write summary.json and (unless o->no_html) report.html into the run
 * folder, each through a temporary file and a rename. */
int report_write(const struct report *r, const struct report_opts *o,
                 struct err *err);
/* The terminal table: groups, verdicts, OOM kills, top sites, what is
 * missing, and where the files are. */
void report_print(const struct report *r, FILE *out);
/* The run folder the report was built from (borrowed). */
const char *report_run_dir(const struct report *r);
void report_destroy(struct report **r);

/* The round a barrier's state names (next-N, start-N, round-N, begin-N
 * start round N; finish-N, end-N end it), *end telling which; -1 for any
 * other state. */
int report_round_of(const char *state, bool *end);

/* A fit's slope against the work done as the report writes it, for a
 * fit read back from summary.json's groups[].fits[] (series, x, slope):
 * "+4.0 KiB per cycle", "+2.0 ms CPU per cycle"; a series of seconds is
 * one named *:cpu or *:seconds, the rest are bytes. "-" when NAN. */
void report_fmt_fit_slope(const char *series, const char *x, double slope,
                          char *buf, size_t size);

/* ---- compare (report_compare.c) ---- */

/* The comparison of a (before) and b (after) as JSON text and as a
 * self-contained HTML page; caller owns the strings. */
char *report_compare_json(const struct report *a, const struct report *b);
char *report_compare_html(const struct report *a, const struct report *b);
/* The comparison as a terminal table. */
void report_compare_print(const struct report *a, const struct report *b,
                          FILE *out);

#endif
