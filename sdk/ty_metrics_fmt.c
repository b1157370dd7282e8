/*
 * ty_metrics_fmt.c — the text side of metrics: JSON numbers, the records
 * of results.out and diagnostics.out in Testground's shape, and splitting
 * tags off a metric's name.
 *
 * Testground's Go SDK writes each record with encoding/json from
 *   struct { Timestamp int64 `json:"ts"`; Type string `json:"type"`;
 *            Name string `json:"name"`; Measures map[string]any }
 * so fields come in that order, "ts" is Unix nanoseconds, and the keys of
 * "measures" are sorted. The functions below write the same bytes.
 */
#include "ty_metrics.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ty__buf_add_double(struct ty__buf *b, double v)
{
    char s[40];

    if (!isfinite(v)) {
        ty__buf_addf(b, "null");
        return;
    }
    /* %.15g already gives the shortest form of any number that has one of
     * at most 15 digits; a few need 16 or 17 to read back the same. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof(s), "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    ty__buf_addf(b, "%s", s);
}

/* ---- records ----------------------------------------------------------- */

static const char *const mtype_names[] = {
    [TY__M_POINT] = "point", [TY__M_COUNTER] = "counter",
    [TY__M_GAUGE] = "gauge", [TY__M_HISTOGRAM] = "histogram",
    [TY__M_TIMER] = "timer",
};

const char *
ty__mtype_name(enum ty__mtype t)
{
    return mtype_names[t];
}

static void
record_open(struct ty__buf *b, int64_t ts_ns, enum ty__mtype t,
            const char *name)
{
    ty__buf_addf(b, "{\"ts\":%lld,\"type\":\"%s\",\"name\":", (long long)ts_ns,
                 mtype_names[t]);
    ty__json_quote(b, name);
    ty__buf_addf(b, ",\"measures\":{");
}

static void
measure(struct ty__buf *b, const char *key, double v, bool first)
{
    ty__buf_addf(b, "%s\"%s\":", first ? "" : ",", key);
    ty__buf_add_double(b, v);
}

void
ty__record_value(struct ty__buf *b, int64_t ts_ns, enum ty__mtype t,
                 const char *name, double v)
{
    record_open(b, ts_ns, t, name);
    measure(b, "value", v, true);
    ty__buf_addf(b, "}}\n");
}

void
ty__record_counter(struct ty__buf *b, int64_t ts_ns, const char *name,
                   int64_t count)
{
    record_open(b, ts_ns, TY__M_COUNTER, name);
    ty__buf_addf(b, "\"count\":%lld}}\n", (long long)count);
}

/* Measures in Go's sorted key order. For a timer, "m1" "m15" "m5" come
 * before "max", and "meanrate" after "mean". */
void
ty__record_hist(struct ty__buf *b, int64_t ts_ns, const char *name,
                const struct ty__hist_summary *s, const double *rates)
{
    record_open(b, ts_ns, rates ? TY__M_TIMER : TY__M_HISTOGRAM, name);
    measure(b, "count", (double)s->count, true);
    if (rates != NULL) {
        measure(b, "m1", rates[0], false);
        measure(b, "m15", rates[2], false);
        measure(b, "m5", rates[1], false);
    }
    measure(b, "max", s->max, false);
    measure(b, "mean", s->mean, false);
    if (rates != NULL)
        measure(b, "meanrate", rates[3], false);
    measure(b, "min", s->min, false);
    for (int i = 0; i < TY__HIST_NQ; i++)
        measure(b, ty__hist_quantile_names[i], s->q[i], false);
    measure(b, "stddev", s->stddev, false);
    measure(b, "variance", s->variance, false);
    ty__buf_addf(b, "}}\n");
}

/* ---- names ------------------------------------------------------------- */

int
ty__metrics_split_name(const char *name, char *buf, size_t bufsize,
                       const char **base, const char **keys,
                       const char **values, int maxtags)
{
    char *save = NULL, *tok;
    int n = 0;

    snprintf(buf, bufsize, "%s", name);
    *base = buf;
    tok = strchr(buf, ',');
    if (tok == NULL)
        return 0;
    *tok = '\0';
    for (tok = strtok_r(tok + 1, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');

        if (eq == NULL || strchr(eq + 1, '=') != NULL || n >= maxtags)
            continue;
        *eq = '\0';
        keys[n] = tok;
        values[n++] = eq + 1;
    }
    return n;
}
