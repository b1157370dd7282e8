/*
 * report_bars.c — barriers.jsonl (one line per barrier released, failed or
 * timed out, written by the sync service) and the rounds it implies.
 *
 * A state named like a round's start (next-N, start-N, round-N, begin-N)
 * or end (finish-N, end-N) marks round N on the clock when it is released;
 * every other barrier is a plain marker on the chart. The times are wall
 * clock; they go on the report's clock (ms since the run started) through
 * the run's start time.
 */
#include "report/report_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BARS_MAX_BYTES ((size_t)256 << 20)

static const struct {
    const char *prefix;
    enum report_bar_kind kind;
} round_states[] = {
    {"next-", BAR_START},  {"start-", BAR_START}, {"round-", BAR_START},
    {"begin-", BAR_START}, {"finish-", BAR_END},  {"end-", BAR_END},
};

int
report_round_of(const char *state, bool *end)
{
    for (size_t i = 0; i < ARRAY_LEN(round_states); i++) {
        size_t n = strlen(round_states[i].prefix);
        const char *num = state + n;

        if (strncmp(state, round_states[i].prefix, n) != 0 || *num == '\0' ||
            strspn(num, "0123456789") != strlen(num) || strlen(num) > 6)
            continue;
        *end = round_states[i].kind == BAR_END;
        return atoi(num);
    }
    return -1;
}

static void
classify(struct report_barrier *b)
{
    bool end = false;

    b->round = report_round_of(b->state, &end);
    b->kind = b->round < 0 ? BAR_OTHER : end ? BAR_END : BAR_START;
}

static void
bar_add(struct report *r, const char *state, const char *result, int64_t target,
        const char *error)
{
    struct report_barrier *b;

    xgrow(&r->bars, &r->capbars, r->nbars + 1, sizeof(*r->bars));
    b = &r->bars[r->nbars++];
    memset(b, 0, sizeof(*b));
    b->state = xstrdup(state);
    b->result = xstrdup(result);
    b->target = target;
    b->error = error ? xstrdup(error) : NULL;
    classify(b);
}

/* One line: 0, or -1 with err naming path:line. *ns gets its time. */
static int
bar_line(struct report *r, const char *path, int line, const char *text,
         size_t len, int64_t *ns, struct err *err)
{
    cleanup_free char *name = xasprintf("%s:%d", path, line);
    struct report_jctx c = {name, err, false};
    const char *where = "";
    cJSON *j = report__json_text(text, len, path, line, err);
    const char *state, *result, *error;
    int64_t target;
    double t;

    if (j == NULL)
        return -1;
    state = report__jstr(&c, j, where, "state");
    result = report__jstr(&c, j, where, "result");
    error = report__jstr(&c, j, where, "error");
    target = report__jnum(&c, j, where, "target");
    t = report__jdouble(&c, j, where, "t_ns");
    /* t_ns past what int64_t holds is no time at all (2^63 is exact) */
    *ns = t > 0 && t < 9223372036854775808.0
              ? (int64_t)t
              : time_parse_rfc3339(report__jstr(&c, j, where, "time"));
    if (!c.failed && (state == NULL || result == NULL || *ns <= 0)) {
        err_set(err, EINVAL,
                "%s: expected \"state\", \"result\" and "
                "\"t_ns\" or \"time\"",
                name);
        c.failed = true;
        err_status(err, EXIT_DATAERR);
    }
    if (!c.failed)
        bar_add(r, state, result, target, error);
    cJSON_Delete(j);
    return c.failed ? -1 : 0;
}

static struct report_span *
span_get(struct report *r, int round)
{
    struct report_span *s;

    for (size_t i = 0; i < r->nspans; i++)
        if (r->spans[i].round == round)
            return &r->spans[i];
    xgrow(&r->spans, &r->capspans, r->nspans + 1, sizeof(*r->spans));
    s = &r->spans[r->nspans++];
    *s = (struct report_span){round, -1, -1, false};
    return s;
}

static int
cmp_span(const void *a, const void *b)
{
    const struct report_span *x = a, *y = b;

    return (x->round > y->round) - (x->round < y->round);
}

/* A round whose end barrier was never released ends where it failed. */
static void
failed_ends(struct report *r)
{
    for (size_t i = 0; i < r->nbars; i++) {
        const struct report_barrier *b = &r->bars[i];
        struct report_span *s;

        if (b->kind != BAR_END || strcmp(b->result, "released") == 0)
            continue;
        for (size_t k = 0; k < r->nspans; k++) {
            s = &r->spans[k];
            if (s->round == b->round && (s->end_ms < 0 || s->failed) &&
                (s->end_ms < 0 || b->t_ms < s->end_ms)) {
                s->end_ms = b->t_ms;
                s->failed = true;
            }
        }
    }
}

/* Rounds from released boundaries; a round without a start begins where
 * the one before ended, one without an end ends where the next begins. */
static void
make_spans(struct report *r)
{
    for (size_t i = 0; i < r->nbars; i++) {
        const struct report_barrier *b = &r->bars[i];
        struct report_span *s;
        int64_t *at;

        if (b->kind == BAR_OTHER || strcmp(b->result, "released") != 0)
            continue;
        s = span_get(r, b->round);
        at = b->kind == BAR_START ? &s->start_ms : &s->end_ms;
        if (*at < 0 || b->t_ms < *at)
            *at = b->t_ms;
    }
    if (r->nspans > 1)
        qsort(r->spans, r->nspans, sizeof(*r->spans), cmp_span);
    failed_ends(r);
    for (size_t i = 0; i < r->nspans; i++) {
        struct report_span *s = &r->spans[i];

        if (s->start_ms < 0 && i > 0)
            s->start_ms = r->spans[i - 1].end_ms;
        if (s->end_ms < 0 && i + 1 < r->nspans)
            s->end_ms = r->spans[i + 1].start_ms;
    }
}

/* Put the barriers on the report's clock. */
static void
place(struct report *r, const int64_t *ns)
{
    if (r->start_ns <= 0 && r->nbars > 0) {
        r->start_ns = ns[0];
        report__note(r, "the run's start time is unknown: the chart's clock "
                        "starts at the first barrier");
    }
    for (size_t i = 0; i < r->nbars; i++)
        r->bars[i].t_ms = (ns[i] - r->start_ns) / 1000000;
}

/* Each line's time, in the order of r->bars. */
struct bar_times {
    const char *path;
    int64_t *ns;
    size_t cap;
};

static int
one_line(struct report *r, void *ctx, int line, const char *text, size_t len,
         struct err *err)
{
    struct bar_times *bt = ctx;
    int64_t t;

    if (bar_line(r, bt->path, line, text, len, &t, err) < 0)
        return -1;
    xgrow(&bt->ns, &bt->cap, r->nbars, sizeof(*bt->ns));
    bt->ns[r->nbars - 1] = t;
    return 0;
}

int
report__bars_load(struct report *r, struct err *err)
{
    cleanup_free char *path = path_join(r->run_dir, "barriers.jsonl");
    struct bar_times bt = {path, NULL, 0};
    struct err e = {0};
    size_t len;
    cleanup_free char *text = report__read(r, path, BARS_MAX_BYTES, &len, &e);

    if (text == NULL && e.code == ENOENT) {
        report__note(r, "barriers.jsonl is missing: rounds are not marked "
                        "on the chart");
        return 0;
    }
    if (text == NULL) {
        *err = e;
        return err_status(err, EXIT_DATAERR);
    }
    if (report__jsonl_lines(r, path, text, len, one_line, &bt, err) < 0) {
        free(bt.ns);
        return -1;
    }
    place(r, bt.ns);
    free(bt.ns);
    make_spans(r);
    return 0;
}
