/*
 * report_work.c — what a long run leaves beside memory.csv for fitting
 * against the work done (docs/report.md, "Against the work done"): each
 * instance's work.csv (the SDK's counters over time), processes.csv and
 * disk.csv (the monitor's per-process and disk samples), and the run's
 * stages.jsonl (the stage windows).
 *
 * Every file is optional. work.csv is written by the instance, so it is
 * read with bounds: at most WORK_MAX_BYTES, REPORT_MAX_WORK_ROWS rows and
 * REPORT_MAX_COUNTERS names, each name at most REPORT_NAME_MAX bytes;
 * past a bound the rest is left out with a note. Process names are the
 * instance's too (its /proc/PID/comm): at most REPORT_MAX_NAMES of them,
 * and as many disk paths. Columns are found by the header's names; a
 * malformed cell is an error naming the file and line (status 65), a
 * last line without its newline that does not parse is taken as cut
 * short and left out with a note, as for memory.csv.
 *
 * A counter restarts from 0 with its process (a stage's restart): its
 * rows become the running total across the instance's processes
 * (report__counter_totals, report_restarts.c) once read and sorted.
 *
 * The processes of one name are summed per sample: rss, vmsize and cpu
 * (user + system seconds) become the series process:NAME:rss, :vmsize and
 * :cpu; each disk path's allocated bytes the series disk:PATH:allocated.
 */
#include "report/report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK_MAX_BYTES ((size_t)32 << 20)
#define SAMPLES_MAX_BYTES ((size_t)512 << 20)
#define CSV_FIELDS 16

void
report__points_release(struct report_points *p)
{
    free(p->name);
    free(p->wall_ms);
    free(p->t_ms);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

void
report__work_release(struct report_work *w)
{
    for (size_t i = 0; i < w->ncounters; i++)
        report__points_release(&w->counters[i]);
    for (size_t i = 0; i < w->nseries; i++)
        report__points_release(&w->series[i]);
    free(w->counters);
    free(w->series);
    memset(w, 0, sizeof(*w));
}

void
report__points_add(struct report_points *p, int64_t wall, int64_t t, double v)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;

        p->wall_ms = xrealloc(p->wall_ms, cap * sizeof(*p->wall_ms));
        p->t_ms = xrealloc(p->t_ms, cap * sizeof(*p->t_ms));
        p->v = xrealloc(p->v, cap * sizeof(*p->v));
        p->cap = cap;
    }
    p->wall_ms[p->n] = wall;
    p->t_ms[p->n] = t;
    p->v[p->n++] = v;
}

/* The points named name in v (n of them), added when new and n < max;
 * NULL when there are max already. */
static struct report_points *
points_get(struct report_points **v, size_t *n, size_t max, const char *name,
           bool seconds)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].name, name) == 0)
            return &(*v)[i];
    if (*n >= max)
        return NULL;
    *v = xrealloc(*v, (*n + 1) * sizeof(**v));
    memset(&(*v)[*n], 0, sizeof(**v));
    (*v)[*n].name = xstrdup(name);
    (*v)[*n].seconds = seconds;
    return &(*v)[(*n)++];
}

/* ---- CSV ------------------------------------------------------------------
 */

/* Split a line (len bytes, no newline) into fields in place, with
 * RFC 4180 quotes ("a,b", "say ""hi"""); returns the count, -1 for a
 * quote left open or more than max fields. */
static int
csv_split(char *s, size_t len, char **f, int max)
{
    char *end = s + len, *w = s, *p = s;
    int n = 0;

    if (len > 0 && end[-1] == '\r')
        end--;
    for (;;) {
        if (n == max)
            return -1;
        f[n++] = w;
        if (p < end && *p == '"') {
            for (p++;; p++) {
                if (p >= end)
                    return -1;
                if (*p == '"' && p + 1 < end && p[1] == '"')
                    *w++ = *p++;
                else if (*p == '"')
                    break;
                else
                    *w++ = *p;
            }
            p++;
        }
        while (p < end && *p != ',')
            *w++ = *p++;
        if (p >= end)
            break;
        *w++ = '\0';
        p++;
    }
    *w = '\0';
    return n;
}

struct csvf {
    const char *path;
    int line;
    int ncols;
    const char *const *want; /* column names looked for, NULL-ended */
    void *ctx;               /* the row function's */
    int col[CSV_FIELDS];     /* want[k] is column col[k], -1 absent */
    char *f[CSV_FIELDS];
};

static int
csv_bad(const struct csvf *c, struct err *err, const char *what)
{
    err_set(err, EINVAL, "%s:%d: %s", c->path, c->line, what);
    return err_status(err, EXIT_DATAERR);
}

/* The header: every wanted column found (-1 when absent); those in
 * `need` (a bit per want[k]) must be there. */
static int
csv_header(struct csvf *c, char *s, size_t len, unsigned need, struct err *err)
{
    int n = csv_split(s, len, c->f, CSV_FIELDS);

    c->ncols = n;
    for (int k = 0; c->want[k] != NULL; k++) {
        c->col[k] = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(c->f[i], c->want[k]) == 0)
                c->col[k] = i;
        if ((need >> k & 1) && c->col[k] < 0) {
            char what[96];

            snprintf(what, sizeof(what), "expected a header with a %s column",
                     c->want[k]);
            return csv_bad(c, err, what);
        }
    }
    return 0;
}

static int
csv_row(struct csvf *c, char *s, size_t len, struct err *err)
{
    int n = csv_split(s, len, c->f, CSV_FIELDS);
    char what[64];

    if (n == c->ncols)
        return 0;
    if (n < 0)
        return csv_bad(c, err, "a quote is left open (or too many fields)");
    snprintf(what, sizeof(what), "expected %d fields, got %d", c->ncols, n);
    return csv_bad(c, err, what);
}

/* Column k of the row, or "" when the header has none. */
static const char *
csv_get(const struct csvf *c, int k)
{
    return c->col[k] >= 0 ? c->f[c->col[k]] : "";
}

/* A whole number >= 0 in column k; -1 when empty. */
static int
csv_int(const struct csvf *c, int k, int64_t *v, struct err *err)
{
    const char *s = csv_get(c, k);
    char what[128];

    if (report__count(s, v))
        return 0;
    snprintf(what, sizeof(what), "%s: expected a whole number, got \"%.40s\"",
             c->want[k], s);
    return csv_bad(c, err, what);
}

/* A decimal number >= 0 in column k; NAN when empty. */
static int
csv_num(const struct csvf *c, int k, double *v, struct err *err)
{
    const char *s = csv_get(c, k);
    char *end, what[128];

    *v = NAN;
    if (*s == '\0')
        return 0;
    errno = 0;
    *v = strtod(s, &end);
    if (*end == '\0' && errno == 0 && isfinite(*v) && *v >= 0)
        return 0;
    snprintf(what, sizeof(what),
             "%s: expected a number of seconds, got "
             "\"%.40s\"",
             c->want[k], s);
    *v = NAN;
    return csv_bad(c, err, what);
}

void
report__clean_name(const char *s, char *buf, bool *cut)
{
    size_t n = 0;

    for (; n < REPORT_NAME_MAX - 1 && s[n] != '\0'; n++)
        buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    buf[n] = '\0';
    *cut = s[n] != '\0';
}

typedef int (*row_fn)(struct report *r, struct report_inst *in, struct csvf *c,
                      struct err *err);

/* Each row of text after the header through fn; stops (true) when fn
 * returns 1 (a bound reached). */
static int
csv_rows(struct report *r, struct report_inst *in, struct csvf *c, char *text,
         size_t len, unsigned need, row_fn fn, struct err *err)
{
    char *end = text + len;
    cleanup_free char *head = NULL;

    c->line = 1;
    for (char *p = text; p < end; c->line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t w = n > 0 && p[n - 1] == '\r' ? n - 1 : n;
        struct err e = {0};
        int rc = 0;
        bool again;

        p[n] = '\0';
        if (c->line == 1)
            head = xasprintf("%.*s", (int)w, p);
        if (c->line == 1 && csv_header(c, p, n, need, err) < 0)
            return -1;
        /* the header again: a restarted process that could not see the
         * file it appends to (docs/metrics.md) */
        again = c->line > 1 && w > 0 && w == strlen(head) &&
                memcmp(p, head, w) == 0;
        if (c->line > 1 && n > 0 && !again) {
            rc = csv_row(c, p, n, nl ? err : &e);
            rc = rc == 0 ? fn(r, in, c, nl ? err : &e) : rc;
        }
        if (rc < 0 && nl != NULL)
            return -1;
        if (rc < 0) {
            report__note(r, "%s:%d: the last line is cut short; ignored",
                         c->path, c->line);
        }
        if (rc == 1)
            break;
        p += n + 1;
    }
    return 0;
}

/* Read an instance's file name (absent: NULL and 0; larger than max:
 * noted, NULL and 0). */
static char *
inst_file(struct report *r, struct report_inst *in, const char *name,
          size_t max, char **path, size_t *len, struct err *err)
{
    struct err e = {0};
    char *text;

    *path = path_join(in->dir, name);
    text = report__read(r, *path, max, len, &e);
    if (text != NULL || e.code == ENOENT)
        return text;
    if (e.code == EFBIG) {
        report__note(r, "%s/%s: larger than %zu MiB: not read", in->label, name,
                     max >> 20);
        return NULL;
    }
    *err = e;
    err_status(err, EXIT_DATAERR);
    return NULL;
}

/* ---- work.csv -------------------------------------------------------------
 */

static const char *const work_cols[] = {"time_ms", "name", "value", NULL};

struct work_ctx {
    size_t rows;
    bool names_cut, too_many;
};

/* With the table full, an untagged counter ("cycles") takes the place
 * of a tagged one ("blocks_made,round=3"): a total across the run is
 * what work is fitted against, a counter of one round moves in that
 * round only. NULL when every kept counter is untagged. */
static struct report_points *
replace_tagged(struct report_work *wk, const char *name)
{
    for (size_t i = wk->ncounters; i-- > 0;) {
        struct report_points *p = &wk->counters[i];

        if (strchr(p->name, ',') == NULL)
            continue;
        report__points_release(p);
        p->name = xstrdup(name);
        return p;
    }
    return NULL;
}

static int
work_row(struct report *r, struct report_inst *in, struct csvf *c,
         struct err *err)
{
    struct work_ctx *w = c->ctx;
    struct report_work *wk = &in->work;
    struct report_points *p;
    int64_t t, v;
    char name[REPORT_NAME_MAX];
    bool cut;

    (void)r;
    if (csv_int(c, 0, &t, err) < 0 || csv_int(c, 2, &v, err) < 0)
        return -1;
    if (t < 0 || v < 0 || csv_get(c, 1)[0] == '\0')
        return csv_bad(c, err, "expected time_ms, a name and a value");
    if (++w->rows > REPORT_MAX_WORK_ROWS)
        return 1;
    report__clean_name(csv_get(c, 1), name, &cut);
    w->names_cut = w->names_cut || cut;
    p = points_get(&wk->counters, &wk->ncounters, REPORT_MAX_COUNTERS, name,
                   false);
    if (p == NULL && strchr(name, ',') == NULL)
        p = replace_tagged(wk, name);
    if (p == NULL)
        w->too_many = w->too_many || strchr(name, ',') == NULL;
    else
        report__points_add(p, t, -1, (double)v);
    return 0;
}

static int
cmp_i64_at(const int64_t *a, size_t i, size_t j)
{
    return (a[i] > a[j]) - (a[i] < a[j]);
}

/* A counter's rows in time order (the SDK writes them so; a clock step
 * back would not): insertion sort, nearly sorted input. */
static void
points_sort(struct report_points *p)
{
    for (size_t i = 1; i < p->n; i++) {
        for (size_t j = i; j > 0 && cmp_i64_at(p->wall_ms, j - 1, j) > 0; j--) {
            int64_t tw = p->wall_ms[j], tt = p->t_ms[j];
            double tv = p->v[j];

            p->wall_ms[j] = p->wall_ms[j - 1];
            p->t_ms[j] = p->t_ms[j - 1];
            p->v[j] = p->v[j - 1];
            p->wall_ms[j - 1] = tw;
            p->t_ms[j - 1] = tt;
            p->v[j - 1] = tv;
        }
    }
}

static int
work_load(struct report *r, struct report_inst *in, struct err *err)
{
    cleanup_free char *path = NULL;
    size_t len = 0;
    cleanup_free char *text =
        inst_file(r, in, "work.csv", WORK_MAX_BYTES, &path, &len, err);
    struct work_ctx w = {0};
    struct csvf c = {.path = path, .want = work_cols, .ctx = &w};

    if (text == NULL)
        return err->code != 0 ? -1 : 0;
    if (csv_rows(r, in, &c, text, len, 7, work_row, err) < 0)
        return -1;
    for (size_t i = 0; i < in->work.ncounters; i++)
        points_sort(&in->work.counters[i]);
    report__counter_totals(r, in);
    if (w.rows > REPORT_MAX_WORK_ROWS)
        report__note(r,
                     "%s/work.csv: more than %d rows; the rest is left "
                     "out",
                     in->label, REPORT_MAX_WORK_ROWS);
    if (w.too_many)
        report__note(r,
                     "%s/work.csv: more than %d counters without tags; "
                     "only the first %d are fitted against",
                     in->label, REPORT_MAX_COUNTERS, REPORT_MAX_COUNTERS);
    if (w.names_cut)
        report__note(r,
                     "%s/work.csv: counter names longer than %d bytes are "
                     "cut",
                     in->label, REPORT_NAME_MAX - 1);
    return 0;
}

/* ---- processes.csv and disk.csv -------------------------------------------
 */

/* A sample's wall clock: its time column, else the run's start plus
 * t_ms; -1 when neither is known. */
static int64_t
wall_of(const struct report *r, const char *time, int64_t t_ms)
{
    int64_t ns = time_parse_rfc3339(time);

    if (ns > 0)
        return ns / 1000000;
    return r->start_ns > 0 ? r->start_ns / 1000000 + t_ms : -1;
}

/* Add v to the series key's sample at t_ms (the processes of one name
 * are summed per sample), or start the next sample. */
static bool
series_add(struct report_inst *in, const char *key, bool seconds, int64_t wall,
           int64_t t_ms, double v)
{
    struct report_work *w = &in->work;
    struct report_points *p =
        points_get(&w->series, &w->nseries, REPORT_MAX_NAMES * 4, key, seconds);

    if (p == NULL)
        return false;
    if (p->n > 0 && p->t_ms[p->n - 1] == t_ms)
        p->v[p->n - 1] += v;
    else
        report__points_add(p, wall, t_ms, v);
    return true;
}

struct names {
    char v[REPORT_MAX_NAMES][REPORT_NAME_MAX];
    size_t n;
    bool over;
};

/* Whether name is one of the first REPORT_MAX_NAMES seen. */
static bool
names_keep(struct names *ns, const char *name)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], name) == 0)
            return true;
    if (ns->n == REPORT_MAX_NAMES) {
        ns->over = true;
        return false;
    }
    snprintf(ns->v[ns->n++], REPORT_NAME_MAX, "%s", name);
    return true;
}

enum { P_TIME, P_TMS, P_NAME, P_VMSIZE, P_RSS, P_USER, P_SYS };
static const char *const proc_cols[] = {
    "time",      "t_ms",       "name",         "vmsize_bytes",
    "rss_bytes", "cpu_user_s", "cpu_system_s", NULL};

static int
proc_row(struct report *r, struct report_inst *in, struct csvf *c,
         struct err *err)
{
    struct names *ns = c->ctx;
    int64_t t, vms, rss, wall;
    double user, sys;
    char name[REPORT_NAME_MAX], key[REPORT_NAME_MAX + 32];
    bool cut;

    if (csv_int(c, P_TMS, &t, err) < 0 || csv_int(c, P_VMSIZE, &vms, err) < 0 ||
        csv_int(c, P_RSS, &rss, err) < 0 ||
        csv_num(c, P_USER, &user, err) < 0 || csv_num(c, P_SYS, &sys, err) < 0)
        return -1;
    if (t < 0)
        return csv_bad(c, err, "t_ms is empty");
    report__clean_name(csv_get(c, P_NAME), name, &cut);
    if (!names_keep(ns, name))
        return 0;
    wall = wall_of(r, csv_get(c, P_TIME), t);
    snprintf(key, sizeof(key), "process:%s:rss", name);
    if (rss >= 0)
        series_add(in, key, false, wall, t, (double)rss);
    snprintf(key, sizeof(key), "process:%s:vmsize", name);
    if (vms >= 0)
        series_add(in, key, false, wall, t, (double)vms);
    snprintf(key, sizeof(key), "process:%s:cpu", name);
    if (!isnan(user) || !isnan(sys))
        series_add(in, key, true, wall, t,
                   (isnan(user) ? 0 : user) + (isnan(sys) ? 0 : sys));
    return 0;
}

enum { D_TIME, D_TMS, D_PATH, D_ALLOC };
static const char *const disk_cols[] = {"time", "t_ms", "path",
                                        "allocated_bytes", NULL};

static int
disk_row(struct report *r, struct report_inst *in, struct csvf *c,
         struct err *err)
{
    struct names *ns = c->ctx;
    int64_t t, alloc;
    char path[REPORT_NAME_MAX], key[REPORT_NAME_MAX + 32];
    bool cut;

    if (csv_int(c, D_TMS, &t, err) < 0 || csv_int(c, D_ALLOC, &alloc, err) < 0)
        return -1;
    if (t < 0)
        return csv_bad(c, err, "t_ms is empty");
    report__clean_name(csv_get(c, D_PATH), path, &cut);
    if (alloc < 0 || !names_keep(ns, path))
        return 0; /* a path that does not exist (yet) */
    snprintf(key, sizeof(key), "disk:%s:allocated", path);
    series_add(in, key, false, wall_of(r, csv_get(c, D_TIME), t), t,
               (double)alloc);
    return 0;
}

/* processes.csv or disk.csv: cols (NULL-terminated), the required ones
 * in need. */
static int
samples_load(struct report *r, struct report_inst *in, const char *name,
             const char *const *cols, unsigned need, row_fn fn, struct err *err)
{
    cleanup_free char *path = NULL;
    size_t len = 0;
    cleanup_free char *text =
        inst_file(r, in, name, SAMPLES_MAX_BYTES, &path, &len, err);
    struct names ns = {0};
    struct csvf c = {.path = path, .want = cols, .ctx = &ns};

    if (text == NULL)
        return err->code != 0 ? -1 : 0;
    if (csv_rows(r, in, &c, text, len, need, fn, err) < 0)
        return -1;
    if (ns.over)
        report__note(r,
                     "%s/%s: more than %d %s; only the first %d are "
                     "fitted",
                     in->label, name, REPORT_MAX_NAMES,
                     fn == proc_row ? "process names" : "paths",
                     REPORT_MAX_NAMES);
    return 0;
}

int
report__work_load(struct report *r, struct report_inst *in, struct err *err)
{
    if (work_load(r, in, err) < 0)
        return -1;
    if (samples_load(r, in, "processes.csv", proc_cols,
                     1u << P_TMS | 1u << P_NAME, proc_row, err) < 0)
        return -1;
    return samples_load(r, in, "disk.csv", disk_cols,
                        1u << D_TMS | 1u << D_PATH | 1u << D_ALLOC, disk_row,
                        err);
}

/* ---- stages.jsonl ---------------------------------------------------------
 */

static int
stage_line(struct report *r, void *ctx, int line, const char *text, size_t len,
           struct err *err)
{
    const char *path = ctx;
    cJSON *j = report__json_text(text, len, path, line, err);
    char where[32];
    struct report_jctx c = {path, err, false};
    const char *name, *by;
    int64_t start, end;

    if (j == NULL)
        return -1;
    snprintf(where, sizeof(where), "line %d", line);
    name = report__jstr(&c, j, where, "stage");
    start = report__jnum(&c, j, where, "start_ms");
    end = report__jnum(&c, j, where, "end_ms");
    by = report__jstr(&c, j, where, "ended_by");
    if (!c.failed && (name == NULL || start < 0)) {
        err_set(err, EINVAL, "%s:%d: expected a stage and its start_ms", path,
                line);
        c.failed = true;
        err_status(err, EXIT_DATAERR);
    }
    if (!c.failed && r->nstages < REPORT_MAX_STAGES) {
        struct report_stage *s;
        char clean[REPORT_NAME_MAX];
        bool cut;

        xgrow(&r->stages, &r->capstages, r->nstages + 1, sizeof(*r->stages));
        s = &r->stages[r->nstages++];
        memset(s, 0, sizeof(*s));
        report__clean_name(name, clean, &cut);
        s->name = xstrdup(clean);
        s->start_ms = start;
        s->end_ms = end;
        if (by != NULL) {
            report__clean_name(by, clean, &cut);
            snprintf(s->ended_by, sizeof(s->ended_by), "%.*s",
                     (int)sizeof(s->ended_by) - 1, clean);
        }
    }
    cJSON_Delete(j);
    return c.failed ? -1 : 0;
}

int
report__stages_load(struct report *r, struct err *err)
{
    cleanup_free char *path = path_join(r->run_dir, "stages.jsonl");
    struct err e = {0};
    size_t len = 0;
    cleanup_free char *text = NULL;

    if (r->stages_result) /* result.json has them, with the actions */
        return 0;
    text = report__read(r, path, WORK_MAX_BYTES, &len, &e);
    if (text == NULL && e.code != ENOENT) {
        *err = e;
        return err_status(err, EXIT_DATAERR);
    }
    if (text == NULL)
        return 0;
    if (report__jsonl_lines(r, path, text, len, stage_line, path, err) < 0)
        return -1;
    if (r->nstages == REPORT_MAX_STAGES)
        report__note(r, "stages.jsonl: only the first %d stages are fitted",
                     REPORT_MAX_STAGES);
    return 0;
}
