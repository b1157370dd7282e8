/*
 * ty_metrics.c — counters, gauges, histograms, timers and points for plans,
 * written to results.out in Testground's record shape (see ty_metrics.h).
 *
 * Every metric lives in one registry per handle, a hash table keyed by type
 * and full name (tags included, so "rtt,round=1" and "rtt,round=2" are two
 * metrics, as in Testground) and guarded by one mutex; an update is a hash
 * lookup and a few stores, so plans may call these from any thread.
 * Aggregates are cumulative: each record of a metric carries everything
 * since the start, so the last record of a name is its final value.
 *
 * Records leave through the sink (ty__output_append, which sends them to the
 * coordinator or appends under TEST_OUTPUTS_PATH): points and changed
 * aggregates every second from the sampler thread (ty_metrics_diag.c), all
 * aggregates on ty_metrics_flush() and at the end of the case. Rendering
 * happens under the lock, sending outside it. The same three points write
 * work.csv's rows (ty_metrics_work.c), for which each counter keeps a mark
 * of what its last row said.
 */
#include "ty_hash.h"
#include "ty_int.h"
#include "ty_metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TICK_NS 5000000000LL /* go-metrics' EWMA tick */
#define POINTS_FLUSH_BYTES (64 * 1024)

/* Exponentially weighted rates over 1, 5 and 15 minutes, as go-metrics
 * computes them for a timer, brought up to date lazily. */
struct rates {
    double rate[3];
    bool init;
    int64_t uncounted;
    int64_t last_tick_ns;
    int64_t start_ns;
};

struct metric {
    struct metric *hnext; /* hash chain */
    struct metric *next;  /* order of first use */
    enum ty__mtype type;
    bool dirty;
    uint64_t hash;
    int64_t count;             /* counter */
    double value;              /* gauge */
    struct ty__hist hist;      /* histogram, timer */
    struct rates rates;        /* timer */
    struct ty__work_mark work; /* counter: its last row in work.csv */
    char name[];
};

struct ty__metrics {
    pthread_mutex_t lock;
    struct metric **table;
    size_t nbuckets, n;
    struct metric *first, *last;
    struct ty__buf points; /* rendered points not sent yet */
    int (*sink)(struct ty *ty, const char *file, const char *data, size_t len);
    struct ty__diag *diag;
    struct ty__work *work;
};

/* ---- timer rates ------------------------------------------------------- */

static const double rate_minutes[3] = {1, 5, 15};

static void
rates_tick(struct rates *r, int64_t now)
{
    int64_t ticks = (now - r->last_tick_ns) / TICK_NS;
    double instant = (double)r->uncounted / (TICK_NS / 1e9);

    if (ticks <= 0)
        return;
    for (int i = 0; i < 3; i++) {
        double alpha = 1 - exp(-(TICK_NS / 1e9) / 60.0 / rate_minutes[i]);

        if (r->init)
            r->rate[i] += alpha * (instant - r->rate[i]);
        else
            r->rate[i] = instant;
        /* The ticks after the first saw no event. */
        r->rate[i] *= pow(1 - alpha, (double)(ticks - 1));
    }
    r->init = true;
    r->uncounted = 0;
    r->last_tick_ns += ticks * TICK_NS;
}

static void
rates_read(struct rates *r, int64_t count, int64_t now, double out[4])
{
    double secs = (double)(now - r->start_ns) / 1e9;

    rates_tick(r, now);
    for (int i = 0; i < 3; i++)
        out[i] = r->rate[i];
    out[3] = secs > 0 ? (double)count / secs : 0;
}

/* ---- registry ---------------------------------------------------------- */

static uint64_t
hash_of(enum ty__mtype t, const char *name)
{
    return ty__fnv1a_str(TY__FNV_BASIS ^ (uint64_t)t, name);
}

static int
table_grow(struct ty__metrics *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 64;
    struct metric **t = calloc(nb, sizeof(*t));

    if (t == NULL)
        return -ENOMEM;
    for (struct metric *e = m->first; e != NULL; e = e->next) {
        e->hnext = t[e->hash & (nb - 1)];
        t[e->hash & (nb - 1)] = e;
    }
    free(m->table);
    m->table = t;
    m->nbuckets = nb;
    return 0;
}

static struct metric *
metric_new(enum ty__mtype t, const char *name, uint64_t h)
{
    size_t len = strlen(name);
    struct metric *e = calloc(1, sizeof(*e) + len + 1);

    if (e == NULL)
        return NULL;
    e->type = t;
    e->hash = h;
    memcpy(e->name, name, len + 1);
    ty__hist_init(&e->hist);
    if (t == TY__M_TIMER)
        e->rates.start_ns = e->rates.last_tick_ns = ty__now_ns();
    return e;
}

/* Find or create; call with the lock held. NULL when out of memory. */
static struct metric *
lookup(struct ty__metrics *m, enum ty__mtype t, const char *name)
{
    uint64_t h = hash_of(t, name);
    struct metric *e;

    if (m->nbuckets > 0)
        for (e = m->table[h & (m->nbuckets - 1)]; e != NULL; e = e->hnext)
            if (e->hash == h && e->type == t && strcmp(e->name, name) == 0)
                return e;
    if (m->n >= m->nbuckets && table_grow(m) < 0)
        return NULL;
    e = metric_new(t, name, h);
    if (e == NULL)
        return NULL;
    e->hnext = m->table[h & (m->nbuckets - 1)];
    m->table[h & (m->nbuckets - 1)] = e;
    if (m->last != NULL)
        m->last->next = e;
    else
        m->first = e;
    m->last = e;
    m->n++;
    return e;
}

/* The module's state, or NULL outside ty_main (or after fini) — then
 * every call does nothing. */
static struct ty__metrics *
mets(struct ty *ty)
{
    return ty != NULL ? ty->metrics : NULL;
}

/* For the public calls: the state, or NULL when there is nothing to do
 * (no state, or no name). */
static struct ty__metrics *
mets_named(struct ty *ty, const char *name)
{
    if (name == NULL || *name == '\0')
        return NULL;
    return mets(ty);
}

/* ---- rendering and sending --------------------------------------------- */

static void
render_one(struct ty__buf *b, struct metric *e, int64_t ts, int64_t now)
{
    struct ty__hist_summary s;
    double r[4];

    switch (e->type) {
    case TY__M_COUNTER:
        ty__record_counter(b, ts, e->name, e->count);
        break;
    case TY__M_GAUGE:
        ty__record_value(b, ts, TY__M_GAUGE, e->name, e->value);
        break;
    case TY__M_HISTOGRAM:
        ty__hist_summarize(&e->hist, &s);
        ty__record_hist(b, ts, e->name, &s, NULL);
        break;
    case TY__M_TIMER:
        ty__hist_summarize(&e->hist, &s);
        rates_read(&e->rates, e->hist.count, now, r);
        ty__record_hist(b, ts, e->name, &s, r);
        break;
    case TY__M_POINT:
        break;
    }
    e->dirty = false;
}

void
ty__metrics_render(struct ty *ty, struct ty__buf *b, bool all)
{
    struct ty__metrics *m = mets(ty);
    int64_t ts = ty__wall_ns(), now = ty__now_ns();

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    for (struct metric *e = m->first; e != NULL; e = e->next)
        if (all || e->dirty)
            render_one(b, e, ts, now);
    if (m->points.len > 0) {
        ty__buf_addf(b, "%s", m->points.buf);
        m->points.len = 0;
        m->points.buf[0] = '\0';
    }
    pthread_mutex_unlock(&m->lock);
}

static int (*sink_override)(struct ty *ty, const char *file, const char *data,
                            size_t len);

void
ty__metrics_set_sink(int (*sink)(struct ty *ty, const char *file,
                                 const char *data, size_t len))
{
    sink_override = sink;
}

int
ty__metrics_emit(struct ty *ty, const char *file, const struct ty__buf *b)
{
    struct ty__metrics *m = mets(ty);

    if (b->oom)
        return ty__seterr(ty, -ENOMEM, "%s: out of memory rendering metrics",
                          file);
    if (m == NULL || b->len == 0)
        return 0;
    return m->sink(ty, file, b->buf, b->len);
}

static int
flush(struct ty *ty, bool all)
{
    struct ty__buf b = {0};
    int rc;

    ty__metrics_render(ty, &b, all);
    rc = ty__metrics_emit(ty, "results.out", &b);
    ty__buf_release(&b);
    return rc;
}

void
ty__metrics_each_counter(struct ty *ty,
                         void (*fn)(void *arg, const char *name, int64_t count,
                                    struct ty__work_mark *mark),
                         void *arg)
{
    struct ty__metrics *m = mets(ty);

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    for (struct metric *e = m->first; e != NULL; e = e->next)
        if (e->type == TY__M_COUNTER)
            fn(arg, e->name, e->count, &e->work);
    pthread_mutex_unlock(&m->lock);
}

/* results.out (all, or what changed) and then work.csv's rows of mode;
 * the first failure is what is returned. */
static int
flush_both(struct ty *ty, bool all, enum ty__work_mode mode, int64_t now_ns)
{
    int rc = flush(ty, all);
    int wrc = ty__work_write(ty, ty->metrics->work, mode, now_ns);

    return rc < 0 ? rc : wrc;
}

int
ty__metrics_tick(struct ty *ty, int64_t now_ns)
{
    if (mets(ty) == NULL)
        return 0;
    return flush_both(ty, false, TY__WORK_TICK, now_ns);
}

int
ty__metrics_flush_changed(struct ty *ty)
{
    return ty__metrics_tick(ty, ty__now_ns());
}

TY_EXPORT int
ty_metrics_flush(struct ty *ty)
{
    if (mets(ty) == NULL)
        return 0;
    return flush_both(ty, true, TY__WORK_CHANGED, ty__now_ns());
}

/* ---- public calls ------------------------------------------------------ */

TY_EXPORT void
ty_counter_add(struct ty *ty, const char *name, int64_t n)
{
    struct ty__metrics *m = mets_named(ty, name);
    struct metric *e;

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    e = lookup(m, TY__M_COUNTER, name);
    if (e != NULL) {
        e->count += n;
        e->dirty = true;
    }
    pthread_mutex_unlock(&m->lock);
}

TY_EXPORT void
ty_gauge_set(struct ty *ty, const char *name, double v)
{
    struct ty__metrics *m = mets_named(ty, name);
    struct metric *e;

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    e = lookup(m, TY__M_GAUGE, name);
    if (e != NULL) {
        e->value = v;
        e->dirty = true;
    }
    pthread_mutex_unlock(&m->lock);
}

TY_EXPORT void
ty_histogram_observe(struct ty *ty, const char *name, double v)
{
    struct ty__metrics *m = mets_named(ty, name);
    struct metric *e;

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    e = lookup(m, TY__M_HISTOGRAM, name);
    if (e != NULL && ty__hist_add(&e->hist, v) == 0)
        e->dirty = true;
    pthread_mutex_unlock(&m->lock);
}

TY_EXPORT void
ty_point(struct ty *ty, const char *name, double v)
{
    struct ty__metrics *m = mets_named(ty, name);
    bool full;

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    ty__record_value(&m->points, ty__wall_ns(), TY__M_POINT, name, v);
    if (m->points.oom)
        ty__buf_release(&m->points);
    full = m->points.len >= POINTS_FLUSH_BYTES;
    pthread_mutex_unlock(&m->lock);
    if (full)
        (void)flush(ty, false);
}

TY_EXPORT int64_t
ty_timer_start(struct ty *ty)
{
    (void)ty;
    return ty__now_ns();
}

TY_EXPORT double
ty_timer_stop(struct ty *ty, const char *name, int64_t start)
{
    int64_t now = ty__now_ns();
    double secs = (double)(now - start) / 1e9;
    struct ty__metrics *m = mets_named(ty, name);
    struct metric *e;

    if (m == NULL)
        return secs;
    pthread_mutex_lock(&m->lock);
    e = lookup(m, TY__M_TIMER, name);
    if (e != NULL && ty__hist_add(&e->hist, secs) == 0) {
        rates_tick(&e->rates, now);
        e->rates.uncounted++;
        e->dirty = true;
    }
    pthread_mutex_unlock(&m->lock);
    return secs;
}

/* ---- hooks ------------------------------------------------------------- */

void
ty__metrics_init(struct ty *ty)
{
    struct ty__metrics *m = calloc(1, sizeof(*m));

    if (m == NULL)
        return;
    pthread_mutex_init(&m->lock, NULL);
    m->sink = sink_override ? sink_override : ty__output_append;
    m->work = ty__work_new(ty);
    ty->metrics = m;
    m->diag = ty__diag_start(
        ty, ty__diag_interval(getenv("TESTYARD_DIAGNOSTICS_INTERVAL")));
}

void
ty__metrics_fini(struct ty *ty)
{
    struct ty__metrics *m = ty->metrics;
    struct metric *e, *next;

    if (m == NULL)
        return;
    ty__diag_stop(&m->diag);
    (void)flush_both(ty, true, TY__WORK_ALL, ty__now_ns());
    ty->metrics = NULL;
    ty__work_destroy(&m->work);
    for (e = m->first; e != NULL; e = next) {
        next = e->next;
        ty__hist_release(&e->hist);
        free(e);
    }
    ty__buf_release(&m->points);
    free(m->table);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
