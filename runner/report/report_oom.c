/*
 * report_oom.c — what an OOM-killed instance left before it died, so the
 * report can say what filled its memory: the last heap profile it wrote
 * (a pre-OOM snapshot the coordinator asked for, a peak, a round's end,
 * a periodic one), how long before the kill that was, where the cgroup's
 * usage stood against its limit then, and that profile's top allocation
 * sites. When there is no profile the words say why that matters and
 * what to set; result.json's memory.pre_oom says whether the coordinator
 * asked for one.
 *
 * The sites are ranked as the groups' are (report__snap_sites), so
 * whatever marks them there (testyard's own allocations, sites seen in a
 * single sample) marks them here, and they are written by the same code
 * in summary.json and report.html.
 */
#include "report/report_int.h"

#include <stdio.h>
#include <string.h>

static int64_t
dist(int64_t a, int64_t b)
{
    return a > b ? a - b : b - a;
}

const struct report_sample *
report__sample_near(const struct report_inst *in, int64_t t_ms)
{
    size_t lo = 0, hi = in->nsamples;
    const struct report_sample *best = NULL;

    if (t_ms < 0 || in->nsamples == 0)
        return NULL;
    while (lo < hi) { /* the first sample at or after t_ms */
        size_t mid = lo + (hi - lo) / 2;

        if (in->samples[mid].t_ms < t_ms)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo > 0 ? lo - 1 : 0; i <= lo && i < in->nsamples; i++) {
        const struct report_sample *s = &in->samples[i];

        if (s->usage >= 0 &&
            (best == NULL || dist(s->t_ms, t_ms) < dist(best->t_ms, t_ms)))
            best = s;
    }
    return best;
}

static int
inst_oom(struct report *r, struct report_inst *in, struct err *err)
{
    struct report_oom *k = &in->kill;
    const struct report_sample *near;

    k->last = report__last_profile(in); /* what grew until then: in->gsites */
    if (k->last == NULL)
        return 0;
    near = report__sample_near(in, k->last->t_ms);
    if (in->oom_t_ms >= 0 && k->last->t_ms >= 0)
        k->before_kill_ms =
            in->oom_t_ms > k->last->t_ms ? in->oom_t_ms - k->last->t_ms : 0;
    k->usage = k->last->cgroup >= 0 ? k->last->cgroup
               : near != NULL       ? near->usage
                                    : -1;
    k->limit = k->last->cgroup_limit >= 0         ? k->last->cgroup_limit
               : near != NULL && near->limit >= 0 ? near->limit
                                                  : in->limit;
    return report__snap_sites(r, k->last, &k->sites, &k->nsites,
                              &k->sites_total, err);
}

int
report__ooms(struct report *r, struct err *err)
{
    for (size_t i = 0; i < r->ninsts; i++)
        if (r->insts[i].oom && inst_oom(r, &r->insts[i], err) < 0)
            return -1;
    return 0;
}

/* ", at 115.2 MiB of 128.0 MiB limit", ", at 115.2 MiB" or "". */
static void
usage_words(int64_t usage, int64_t limit, char *buf, size_t size)
{
    char u[32], l[32];

    report__fmt_bytes(usage, u, sizeof(u));
    report__fmt_bytes(limit, l, sizeof(l));
    if (usage < 0)
        snprintf(buf, size, "%s", "");
    else if (limit <= 0)
        snprintf(buf, size, ", at %s", u);
    else
        snprintf(buf, size, ", at %s of %s limit", u, l);
}

void
report__oom_profile_text(const struct report_inst *in, char *buf, size_t size)
{
    const struct report_oom *k = &in->kill;
    char age[32], at[32], use[96];

    if (k->last == NULL && in->preoom.requests > 0) {
        report__fmt_ms(in->preoom.first_ms, at, sizeof(at));
        snprintf(buf, size,
                 "no heap profile before the kill, so nothing shows what "
                 "filled the memory: the coordinator asked for one at %s "
                 "but none came (does the plan use the SDK, or run with "
                 "the LD_PRELOAD profiler?)",
                 at);
        return;
    }
    if (k->last == NULL && in->blackbox) {
        snprintf(buf, size,
                 "no heap profile before the kill, so nothing shows what "
                 "filled the memory: set run.profiles: {heap: preload} on "
                 "its group (a dynamically linked program)");
        return;
    }
    if (k->last == NULL) {
        snprintf(buf, size,
                 "no heap profile before the kill, so nothing shows what "
                 "filled the memory: set run.profiles.heap or keep "
                 "run_config.pre_oom_snapshot on");
        return;
    }
    usage_words(k->usage, k->limit, use, sizeof(use));
    report__fmt_ms(k->before_kill_ms, age, sizeof(age));
    report__fmt_ms(k->last->t_ms, at, sizeof(at));
    if (k->before_kill_ms >= 0)
        snprintf(buf, size, "last profile %s before the kill (%s)%s", age,
                 k->last->label, use);
    else
        snprintf(buf, size,
                 "last profile at %s (%s)%s; the kill's time is "
                 "unknown",
                 at, k->last->label, use);
}

static const char *
via_words(const char *via)
{
    if (strcmp(via, "sync") == 0)
        return " over the sync connection";
    if (strcmp(via, "signal") == 0)
        return " by a signal to the LD_PRELOAD profiler";
    return "";
}

void
report__preoom_text(const struct report_inst *in, char *buf, size_t size)
{
    const struct report_preoom *p = &in->preoom;
    char first[32], last[32], use[96], more[80] = "";

    if (!in->has_preoom) {
        snprintf(buf, size, "%s", "");
        return;
    }
    if (p->requests == 0) {
        snprintf(buf, size,
                 "no pre-OOM snapshot was asked for (usage was not seen "
                 "past run_config.pre_oom_snapshot of the limit, it is "
                 "off, or no process of the instance could be asked: "
                 "neither the SDK nor the LD_PRELOAD profiler)");
        return;
    }
    report__fmt_ms(p->first_ms, first, sizeof(first));
    report__fmt_ms(p->last_ms, last, sizeof(last));
    usage_words(p->usage, p->limit, use, sizeof(use));
    if (p->requests > 1)
        snprintf(more, sizeof(more), "; %lld requests, the last at %s",
                 (long long)p->requests, last);
    snprintf(buf, size, "pre-OOM snapshot asked for at %s%s%s%s", first,
             via_words(p->via), use, more);
}
