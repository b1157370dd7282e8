/*
 * report_csv.c — an instance's memory.csv (docs/memory.md), or the
 * memory.csv.partial a coordinator that did not finish leaves.
 *
 * Columns are found by the header's names, so a column added later does
 * not break the report; t_ms and usage_bytes are required. An empty cell
 * is "unknown". Every row is written with one write(2), so a row is never
 * cut in half by the writer; a last line without its newline that does
 * not parse is taken as cut short (the file was copied while written) and
 * left out with a note. Anything else malformed is an error naming the
 * file and line.
 *
 * When result.json has no memory figures for the instance (a run that did
 * not finish), they are worked out from the series as the monitor would.
 */
#include "report/report_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX_BYTES ((size_t)512 << 20)
#define CSV_MAX_COLS 32

static const struct {
    const char *name;
    size_t off;
} columns[] = {
    {"t_ms", offsetof(struct report_sample, t_ms)},
    {"usage_bytes", offsetof(struct report_sample, usage)},
    {"anon_bytes", offsetof(struct report_sample, anon)},
    {"file_bytes", offsetof(struct report_sample, file)},
    {"peak_bytes", offsetof(struct report_sample, peak)},
    {"limit_bytes", offsetof(struct report_sample, limit)},
    {"oom_kills", offsetof(struct report_sample, oom_kills)},
};

struct csv {
    const char *path;
    int line;
    int ncols;
    int col[CSV_MAX_COLS]; /* index into columns[], -1 ignored */
    int time_col;          /* the wall-clock column, -1 when absent */
};

/* Split s (len bytes, no newline) at commas into f; returns the count. */
static int
split(char *s, size_t len, char **f, int max)
{
    int n = 0;

    s[len] = '\0';
    if (len > 0 && s[len - 1] == '\r')
        s[len - 1] = '\0';
    f[n++] = s;
    for (char *p = s; *p != '\0'; p++) {
        if (*p != ',')
            continue;
        *p = '\0';
        if (n == max)
            return max + 1;
        f[n++] = p + 1;
    }
    return n;
}

static int
header(struct csv *c, char *s, size_t len, struct err *err)
{
    char *f[CSV_MAX_COLS];
    int n = split(s, len, f, CSV_MAX_COLS), have = 0;

    if (n > CSV_MAX_COLS)
        n = CSV_MAX_COLS;
    c->ncols = n;
    c->time_col = -1;
    for (int i = 0; i < n; i++) {
        c->col[i] = -1;
        if (strcmp(f[i], "time") == 0)
            c->time_col = i;
        for (size_t k = 0; k < ARRAY_LEN(columns); k++)
            if (strcmp(f[i], columns[k].name) == 0)
                c->col[i] = (int)k;
        if (c->col[i] == 0 || c->col[i] == 1)
            have |= 1 << c->col[i];
    }
    if (have == 3)
        return 0;
    err_set(err, EINVAL,
            "%s:1: expected a header with t_ms and usage_bytes "
            "columns",
            c->path);
    return err_status(err, EXIT_DATAERR);
}

bool
report__count(const char *s, int64_t *v)
{
    char *end;
    long long x;

    *v = -1;
    if (*s == '\0')
        return true;
    errno = 0;
    x = strtoll(s, &end, 10);
    if (*end != '\0' || errno != 0 || x < 0)
        return false;
    *v = x;
    return true;
}

static int
cell(const struct csv *c, const char *s, int i, int64_t *v, struct err *err)
{
    if (report__count(s, v))
        return 0;
    err_set(err, EINVAL,
            "%s:%d: %s: expected a whole number of %s, got \"%.40s\"", c->path,
            c->line, columns[c->col[i]].name,
            c->col[i] == 0 ? "milliseconds" : "bytes", s);
    return err_status(err, EXIT_DATAERR);
}

/* One row into *smp; *wall gets its time column (0 when none). */
static int
row(const struct csv *c, char *s, size_t len, struct report_sample *smp,
    int64_t *wall, struct err *err)
{
    char *f[CSV_MAX_COLS];
    int n = split(s, len, f, CSV_MAX_COLS);

    if (n != c->ncols) {
        err_set(err, EINVAL, "%s:%d: expected %d fields, got %d", c->path,
                c->line, c->ncols, n);
        return err_status(err, EXIT_DATAERR);
    }
    *smp = (struct report_sample){-1, -1, -1, -1, -1, -1, -1};
    for (int i = 0; i < n; i++) {
        if (c->col[i] >= 0 &&
            cell(c, f[i], i, (int64_t *)((char *)smp + columns[c->col[i]].off),
                 err) < 0)
            return -1;
    }
    if (smp->t_ms < 0) {
        err_set(err, EINVAL, "%s:%d: t_ms is empty", c->path, c->line);
        return err_status(err, EXIT_DATAERR);
    }
    *wall = c->time_col >= 0 ? time_parse_rfc3339(f[c->time_col]) : 0;
    return 0;
}

static void
add_sample(struct report *r, struct report_inst *in,
           const struct report_sample *s, int64_t wall)
{
    xgrow(&in->samples, &in->capsamples, in->nsamples + 1,
          sizeof(*in->samples));
    in->samples[in->nsamples++] = *s;
    if (r->start_ns <= 0 && wall > 0 && s->t_ms <= wall / 1000000)
        r->start_ns = wall - s->t_ms * 1000000;
}

static int
parse(struct report *r, struct report_inst *in, struct csv *c, char *text,
      size_t len, struct err *err)
{
    char *end = text + len;

    for (char *p = text; p < end; c->line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct report_sample s;
        struct err e = {0};
        int64_t wall = 0;

        if (c->line == 1 && header(c, p, n, err) < 0)
            return -1;
        if (c->line > 1 && n > 0) {
            if (row(c, p, n, &s, &wall, nl ? err : &e) == 0) {
                add_sample(r, in, &s, wall);
            } else if (nl != NULL) {
                return -1;
            } else {
                report__note(r, "%s:%d: the last line is cut short; ignored",
                             c->path, c->line);
            }
        }
        p += n + 1;
    }
    if (c->line == 1)
        return header(c, text, 0, err);
    return 0;
}

/* The monitor's figures from the series, for what result.json lacks. */
static void
derive(struct report_inst *in)
{
    int64_t peak = -1, peak_t = -1, last = -1, oom_t = -1, before = -1;

    for (size_t i = 0; i < in->nsamples; i++) {
        const struct report_sample *s = &in->samples[i];
        int64_t top = s->usage > s->peak ? s->usage : s->peak;

        if (top > peak) {
            peak = top;
            peak_t = s->t_ms;
        }
        if (s->oom_kills > 0 && oom_t < 0) {
            oom_t = s->t_ms;
            before = last;
        }
        if (s->limit >= 0 && in->limit < 0)
            in->limit = s->limit;
        if (s->usage >= 0)
            last = s->usage;
    }
    if (in->peak < 0) {
        in->peak = peak;
        in->peak_t_ms = peak_t;
    }
    if (in->final < 0)
        in->final = last;
    if (!in->oom && oom_t >= 0) {
        in->oom = true;
        in->oom_t_ms = oom_t;
        in->before_oom = before;
    }
}

int
report__csv_load(struct report *r, struct report_inst *in, struct err *err)
{
    /* The runner keeps an unfinished series in .runner/<group>/<index>/
     * until the instance ends; a coordinator that died leaves it there. */
    static const char *const names[] = {"memory.csv", "memory.csv.partial",
                                        ".runner/memory.csv.partial"};
    cleanup_free char *path = NULL;
    cleanup_free char *text = NULL;
    struct csv c = {0};
    size_t len = 0;

    for (size_t i = 0; i < ARRAY_LEN(names) && text == NULL; i++) {
        struct err e = {0};

        free(path);
        path = i < 2 ? path_join(in->dir, names[i])
                     : xasprintf("%s/.runner/%s/memory.csv.partial",
                                 report_run_dir(r), in->label);
        text = report__read(r, path, CSV_MAX_BYTES, &len, &e);
        if (text == NULL && e.code != ENOENT) {
            *err = e;
            return err_status(err, EXIT_DATAERR);
        }
        if (text != NULL)
            in->series = i < 2 ? names[i] : names[1];
    }
    if (text == NULL)
        return 0;
    c.path = path;
    c.line = 1;
    if (parse(r, in, &c, text, len, err) < 0)
        return -1;
    derive(in);
    return 0;
}
