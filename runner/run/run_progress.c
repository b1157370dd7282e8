/*
 * run_progress.c — what the user sees while a run goes.
 *
 * On a terminal: one line per group, redrawn in place at most four times a
 * second — instances started, waiting at a barrier, finished (and how many
 * of those did not succeed). Notes (an instance died, the deadline passed,
 * cancel) are printed above the block. Without a terminal the same notes
 * are plain lines, plus one line when every instance has started, so logs
 * stay readable.
 *
 * When stdout is a pipe whose reader goes away (`testyard run | head`),
 * the run is canceled as by SIGTERM: the loop polls the pipe for that,
 * and a write to it raises SIGPIPE, which the run's signalfd takes. From
 * then on nothing more is printed on it.
 */
#include "run/run_int.h"

#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRESS_EVERY_MS 250

struct group_counts {
    size_t started, waiting, ended, bad, total;
};

static void
count_group(const struct run *r, size_t g, struct group_counts *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < r->n; i++) {
        const struct run_inst *in = &r->insts[i];

        if ((size_t)in->group != g)
            continue;
        c->total++;
        c->started += in->started;
        c->waiting += in->waiting && !in->ended;
        c->ended += in->ended;
        c->bad += in->ended && in->outcome != OUTCOME_SUCCESS;
    }
}

static void
erase_block(struct run *r)
{
    for (int i = 0; i < r->progress_lines; i++)
        fputs("\033[1A\r\033[K", stdout);
    r->progress_lines = 0;
}

static void
draw_block(struct run *r)
{
    int64_t elapsed = now_mono_ns() / 1000000 - r->start_mono_ms;

    for (size_t g = 0; g < r->comp->ngroups; g++) {
        struct group_counts c;

        count_group(r, g, &c);
        printf("  %-14s started %zu/%zu  at barrier %zu  finished %zu/%zu",
               r->comp->groups[g].id, c.started, c.total, c.waiting, c.ended,
               c.total);
        if (c.bad > 0)
            printf("  (%zu not ok)", c.bad);
        if (g == 0)
            printf("  [%llds]", (long long)(elapsed / 1000));
        putchar('\n');
        r->progress_lines++;
    }
    fflush(stdout);
}

void
run__progress_draw(struct run *r, bool final)
{
    int64_t now = now_mono_ns() / 1000000;

    if (r->opts.quiet)
        return;
    if (!r->opts.progress) {
        if (!r->announced_start && r->nstarted == r->n && r->n > 0) {
            r->announced_start = true;
            printf("testyard: run %s: all %zu instances started\n", r->run_id,
                   r->n);
            fflush(stdout);
        }
        return;
    }
    if (!final && now - r->progress_at_ms < PROGRESS_EVERY_MS)
        return;
    r->progress_at_ms = now;
    erase_block(r);
    draw_block(r);
}

void
run__progress_note(struct run *r, const char *fmt, ...)
{
    va_list ap;

    if (r->opts.quiet)
        return;
    if (r->opts.progress)
        erase_block(r);
    fputs("testyard: ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    if (r->opts.progress)
        draw_block(r);
    fflush(stdout);
}

int
run__progress_pipe_fd(const struct run *r)
{
    struct stat st;

    if (r->out_lost || fstat(STDOUT_FILENO, &st) < 0 || !S_ISFIFO(st.st_mode))
        return -1;
    return STDOUT_FILENO;
}

void
run__progress_lost(struct run *r)
{
    r->out_lost = true;
    r->opts.quiet = true;
    r->opts.progress = false;
}
