/*
 * ty_metrics_hist.c — histograms for ty_histogram_observe and timers.
 *
 * Count, min, max, mean and variance are always exact (Welford's running
 * update). Quantiles are exact while a histogram holds at most
 * TY__HIST_EXACT_MAX values: the values are kept and sorted when a
 * quantile is asked for. Beyond that the values move into logarithmic
 * buckets, as in DDSketch: with gamma = (1 + a) / (1 - a), bucket i holds
 * magnitudes in (gamma^(i-1), gamma^i] and stands for 2 gamma^i / (gamma+1),
 * which is within a relative error a (1%) of every value in the bucket.
 * Positive and negative values have their own buckets, zeros a counter.
 * Each sign keeps at most TY__HIST_MAX_BUCKETS buckets (a span of 10^35
 * between smallest and largest magnitude); past that, the smallest
 * magnitudes are merged into the lowest bucket kept. So memory is bounded
 * at about 64 KiB of samples or 2 x 32 KiB of counts per histogram.
 */
#include "ty_metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const double ty__hist_quantiles[TY__HIST_NQ] = {0.5,  0.75,  0.95,
                                                0.99, 0.999, 0.9999};
const char *const ty__hist_quantile_names[TY__HIST_NQ] = {
    "p50", "p75", "p95", "p99", "p999", "p9999"};

/* ln(gamma) = ln(1.01 / 0.99) for a = TY__HIST_ALPHA = 0.01, and
 * 2 / (gamma + 1), which is 1 - a. */
#define LOG_GAMMA 0.020000666706669435
#define BUCKET_SCALE (1 - TY__HIST_ALPHA)

static int32_t
bucket_of(double magnitude)
{
    return (int32_t)ceil(log(magnitude) / LOG_GAMMA);
}

static double
bucket_value(int32_t i)
{
    return exp((double)i * LOG_GAMMA) * BUCKET_SCALE;
}

void
ty__hist_init(struct ty__hist *h)
{
    memset(h, 0, sizeof(*h));
}

void
ty__hist_release(struct ty__hist *h)
{
    free(h->samples);
    free(h->pos.counts);
    free(h->neg.counts);
    memset(h, 0, sizeof(*h));
}

/* Make s cover buckets [lo, hi] (a superset of what it covers now), keeping
 * the highest TY__HIST_MAX_BUCKETS and merging lower ones into the lowest
 * kept. */
static int
store_cover(struct ty__hist_store *s, int32_t lo, int32_t hi)
{
    int64_t *c;

    if ((int64_t)hi - lo + 1 > TY__HIST_MAX_BUCKETS)
        lo = hi - TY__HIST_MAX_BUCKETS + 1;
    c = calloc((size_t)(hi - lo + 1), sizeof(*c));
    if (c == NULL)
        return -ENOMEM;
    for (int32_t k = 0; k < s->n; k++) {
        int32_t i = s->lo + k;

        c[(i < lo ? lo : i) - lo] += s->counts[k];
    }
    free(s->counts);
    s->counts = c;
    s->lo = lo;
    s->n = hi - lo + 1;
    return 0;
}

static int
store_add(struct ty__hist_store *s, int32_t i)
{
    if (s->n == 0 && store_cover(s, i, i) < 0)
        return -ENOMEM;
    if (i < s->lo || i >= s->lo + s->n) {
        int32_t hi = s->lo + s->n - 1;

        if (store_cover(s, i < s->lo ? i : s->lo, i > hi ? i : hi) < 0)
            return -ENOMEM;
    }
    s->counts[(i < s->lo ? s->lo : i) - s->lo]++;
    s->total++;
    return 0;
}

static int
bucket_add(struct ty__hist *h, double v)
{
    if (v > 0)
        return store_add(&h->pos, bucket_of(v));
    if (v < 0)
        return store_add(&h->neg, bucket_of(-v));
    h->zeros++;
    return 0;
}

/* Move the kept values into buckets. */
static int
switch_to_buckets(struct ty__hist *h)
{
    for (size_t i = 0; i < h->nsamples; i++)
        if (bucket_add(h, h->samples[i]) < 0)
            return -ENOMEM;
    free(h->samples);
    h->samples = NULL;
    h->nsamples = h->cap = 0;
    h->bucketed = true;
    return 0;
}

static int
keep_sample(struct ty__hist *h, double v)
{
    if (h->nsamples == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        double *p;

        if (cap > TY__HIST_EXACT_MAX)
            cap = TY__HIST_EXACT_MAX;
        p = realloc(h->samples, cap * sizeof(*p));
        if (p == NULL)
            return -ENOMEM;
        h->samples = p;
        h->cap = cap;
    }
    h->samples[h->nsamples++] = v;
    return 0;
}

int
ty__hist_add(struct ty__hist *h, double v)
{
    double delta;
    int rc;

    if (!isfinite(v))
        return 0;
    if (!h->bucketed && h->nsamples == TY__HIST_EXACT_MAX &&
        switch_to_buckets(h) < 0)
        return -ENOMEM;
    rc = h->bucketed ? bucket_add(h, v) : keep_sample(h, v);
    if (rc < 0)
        return rc;
    if (h->count == 0 || v < h->min)
        h->min = v;
    if (h->count == 0 || v > h->max)
        h->max = v;
    h->count++;
    delta = v - h->mean;
    h->mean += delta / (double)h->count;
    h->m2 += delta * (v - h->mean);
    return 0;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* go-metrics' SampleSnapshot.Percentiles: interpolate around q(n+1). */
static double
exact_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n + 1);
    size_t i;

    if (pos < 1)
        return v[0];
    if (pos >= (double)n)
        return v[n - 1];
    i = (size_t)pos;
    return v[i - 1] + (pos - floor(pos)) * (v[i] - v[i - 1]);
}

/* Walk the buckets in value order (most negative first) to the one that
 * holds the value of 0-based rank r. */
static double
bucket_quantile(const struct ty__hist *h, double q)
{
    int64_t r = (int64_t)floor(q * (double)(h->count - 1));
    int64_t seen = 0;

    for (int32_t k = h->neg.n - 1; k >= 0; k--) {
        seen += h->neg.counts[k];
        if (seen > r)
            return -bucket_value(h->neg.lo + k);
    }
    seen += h->zeros;
    if (seen > r)
        return 0;
    for (int32_t k = 0; k < h->pos.n; k++) {
        seen += h->pos.counts[k];
        if (seen > r)
            return bucket_value(h->pos.lo + k);
    }
    return h->max;
}

static bool
is_sorted(const double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] < v[i - 1])
            return false;
    return true;
}

double
ty__hist_quantile(struct ty__hist *h, double q)
{
    double v;

    if (h->count == 0)
        return 0;
    if (!h->bucketed) {
        if (!is_sorted(h->samples, h->nsamples))
            qsort(h->samples, h->nsamples, sizeof(double), cmp_double);
        return exact_quantile(h->samples, h->nsamples, q);
    }
    v = bucket_quantile(h, q);
    if (v < h->min)
        return h->min;
    return v > h->max ? h->max : v;
}

void
ty__hist_summarize(struct ty__hist *h, struct ty__hist_summary *out)
{
    memset(out, 0, sizeof(*out));
    if (h->count == 0)
        return;
    out->count = h->count;
    out->min = h->min;
    out->max = h->max;
    out->mean = h->mean;
    out->variance = h->m2 / (double)h->count;
    out->stddev = sqrt(out->variance);
    for (int i = 0; i < TY__HIST_NQ; i++)
        out->q[i] = ty__hist_quantile(h, ty__hist_quantiles[i]);
}
