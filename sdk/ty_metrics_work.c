/*
 * ty_metrics_work.c — work.csv: every counter's running total as a time
 * series, so the report can fit memory, CPU and disk against the work an
 * instance did (cycles done) rather than against wall time.
 *
 *     time_ms,name,value
 *     1764650000123,load.cycles,120
 *     1764650000123,"load.cycles,stage=2",40
 *
 * time_ms is Unix wall-clock milliseconds (the clock the host and the
 * containers share, so rows line up with the coordinator's samples), name
 * the counter's name with its tags (a CSV field: quoted when it holds a
 * comma or a quote), value its total. A counter gets a row when it
 * changed, at most one a second, from the sampler thread's tick; one more
 * for each that changed at ty_metrics_flush; and a last row of every
 * counter when the case ends. Rows are appended through the metrics' sink
 * as results.out's records are (to the coordinator, or under
 * TEST_OUTPUTS_PATH), so an instance killed later leaves what it had.
 *
 * The file is capped: past TY__WORK_CAP bytes from one process nothing
 * more is appended, and stderr says so once; rows never reach the file
 * cut in half.
 */
#include "ty_int.h"
#include "ty_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROW_EVERY_NS 1000000000LL

struct ty__work {
    pthread_mutex_t lock; /* rendering and sending, so rows stay in order */
    size_t cap, written;
    bool header; /* written, or the file already had one */
    bool full;
};

/* One render: what ty__metrics_each_counter's callback needs. */
struct render {
    struct ty__buf *b;
    enum ty__work_mode mode;
    int64_t time_ms, now_ns;
};

static size_t cap_override;

void
ty__work_set_cap(size_t bytes)
{
    cap_override = bytes;
}

/* Whether <outputs>/work.csv is already there with something in it (not
 * through a link: the instance's folder is its own to plant one in). */
static bool
file_started(const struct ty *ty)
{
    const char *dir = ty->outputs_path ? ty->outputs_path : ".";
    struct stat st;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool started;

    if (dfd < 0)
        return false;
    started = fstatat(dfd, TY__WORK_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
              S_ISREG(st.st_mode) && st.st_size > 0;
    close(dfd);
    return started;
}

struct ty__work *
ty__work_new(const struct ty *ty)
{
    struct ty__work *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return NULL;
    pthread_mutex_init(&w->lock, NULL);
    w->cap = cap_override ? cap_override : TY__WORK_CAP;
    w->header = file_started(ty);
    return w;
}

void
ty__work_destroy(struct ty__work **wp)
{
    struct ty__work *w = wp ? *wp : NULL;

    if (w == NULL)
        return;
    pthread_mutex_destroy(&w->lock);
    free(w);
    *wp = NULL;
}

static bool
wants_row(const struct render *r, int64_t count, const struct ty__work_mark *k)
{
    bool changed = !k->rowed || k->value != count;

    switch (r->mode) {
    case TY__WORK_TICK:
        return changed && r->now_ns >= k->next_ns;
    case TY__WORK_CHANGED:
        return changed;
    case TY__WORK_ALL:
        return true;
    }
    return false;
}

static void
render_row(void *arg, const char *name, int64_t count,
           struct ty__work_mark *mark)
{
    struct render *r = arg;

    if (!wants_row(r, count, mark))
        return;
    ty__buf_addf(r->b, "%lld,", (long long)r->time_ms);
    ty__buf_add_csv(r->b, name);
    ty__buf_addf(r->b, ",%lld\n", (long long)count);
    mark->rowed = true;
    mark->value = count;
    mark->next_ns = r->now_ns + ROW_EVERY_NS;
}

/* Keep the whole rows of b that fit under the cap; the first time some do
 * not, say so. */
static void
fit_cap(struct ty__work *w, struct ty__buf *b)
{
    size_t room = w->cap > w->written ? w->cap - w->written : 0;
    char *cut;

    if (b->len <= room)
        return;
    b->buf[room] = '\0';
    cut = strrchr(b->buf, '\n');
    b->len = cut ? (size_t)(cut - b->buf) + 1 : 0;
    b->buf[b->len] = '\0';
    w->full = true;
    fprintf(stderr,
            "testyard: %s reached its cap of %zu bytes; no more rows are "
            "written\n",
            TY__WORK_FILE, w->cap);
}

/* The header (when the file has none yet) and the rows, within the cap;
 * call with w->lock held. */
static int
send_rows(struct ty *ty, struct ty__work *w, const struct ty__buf *rows)
{
    struct ty__buf b = {0};
    int rc;

    if (!w->header)
        ty__buf_adds(&b, TY__WORK_HEADER);
    ty__buf_add(&b, rows->buf, rows->len);
    if (b.oom || rows->oom) {
        ty__buf_release(&b);
        return ty__seterr(ty, -ENOMEM, "%s: out of memory rendering rows",
                          TY__WORK_FILE);
    }
    fit_cap(w, &b);
    rc = ty__metrics_emit(ty, TY__WORK_FILE, &b);
    if (rc == 0) {
        w->written += b.len;
        w->header = w->header || b.len > 0;
    }
    ty__buf_release(&b);
    return rc;
}

int
ty__work_write(struct ty *ty, struct ty__work *w, enum ty__work_mode mode,
               int64_t now_ns)
{
    struct ty__buf rows = {0};
    struct render r = {.b = &rows, .mode = mode};
    int rc = 0;

    if (w == NULL)
        return 0;
    pthread_mutex_lock(&w->lock);
    if (!w->full) {
        /* the wall time of the caller's instant, not of this moment:
         * rows are then as far apart on the wall clock as the rule
         * spaced them on the monotonic one, however long the caller
         * took to get here (results.out first, a slow machine) */
        r.time_ms = (ty__wall_ns() - (ty__now_ns() - now_ns)) / 1000000;
        r.now_ns = now_ns;
        ty__metrics_each_counter(ty, render_row, &r);
        if (rows.len > 0 || rows.oom)
            rc = send_rows(ty, w, &rows);
    }
    pthread_mutex_unlock(&w->lock);
    ty__buf_release(&rows);
    return rc;
}
