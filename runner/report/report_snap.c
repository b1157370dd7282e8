/*
 * report_snap.c — an instance's heap snapshots, and each group's top
 * allocation sites.
 *
 * A snapshot is heap-<label>.pb.gz (the pprof profile) and heap-<label>.json
 * (its sidecar: RSS, VmHWM, RssAnon, mallinfo2, the profile's totals, the
 * cgroup's usage, the label and the round; see sdk/heap/ty_heapctl.c). The
 * figures come from the sidecar; when it is missing, the profile is
 * decoded for heap in use and its time. The round is the sidecar's, or the
 * N of a label starting "round-N"; "pre-trim" and "post-trim" in the label
 * say which side of malloc_trim the snapshot was taken, and a label ending
 * in "peak" (round-N-peak, the profiler's own "peak") is a high-water
 * snapshot, never a round-end reading.
 *
 * Top sites: the last snapshot (by time) of each instance of a group that
 * has a profile is decoded, its inuse_space ranked by site
 * (pprof__sites), and the sites of the group's instances added together.
 * The peak sites are the same at each instance's snapshot with the most
 * heap in use: where its memory went, where the last snapshot shows what
 * it kept.
 */
#include "report/report_int.h"

#include "report/pprof_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SIDECAR_MAX_BYTES ((size_t)1 << 20)

static struct report_snap *
snap_get(struct report_inst *in, const char *label, size_t len)
{
    struct report_snap *s;

    for (size_t i = 0; i < in->nsnaps; i++)
        if (strlen(in->snaps[i].label) == len &&
            strncmp(in->snaps[i].label, label, len) == 0)
            return &in->snaps[i];
    xgrow(&in->snaps, &in->capsnaps, in->nsnaps + 1, sizeof(*in->snaps));
    s = &in->snaps[in->nsnaps++];
    memset(s, 0, sizeof(*s));
    s->label = xstrndup(label, len);
    s->round = -1;
    s->inuse = s->rss = s->hwm = s->rss_anon = -1;
    s->malloc_inuse = s->cgroup = s->own = -1;
    return s;
}

static bool
ends_with(const char *s, const char *suffix, size_t *stem)
{
    size_t n = strlen(s), k = strlen(suffix);

    *stem = n >= k ? n - k : 0;
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* A regular file of d (a link, planted by the instance, is not). */
static bool
is_file(DIR *d, const struct dirent *e)
{
    struct stat st;

    if (e->d_type != DT_UNKNOWN)
        return e->d_type == DT_REG;
    return fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISREG(st.st_mode);
}

/* heap-<label>.pb.gz and heap-<label>.json of the instance's folder;
 * anything of those names that is not a regular file is noted and left
 * alone. */
static void
scan(struct report *r, struct report_inst *in)
{
    DIR *d = report__opendir(r, in->label);
    struct dirent *e;

    while (d != NULL && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        size_t stem;

        if (strncmp(name, "heap-", 5) != 0)
            continue;
        if (!is_file(d, e)) {
            report__note(r,
                         "%s/%s: not read: a symbolic link or not a "
                         "regular file",
                         in->label, name);
            continue;
        }
        if (ends_with(name, ".pb.gz", &stem) && stem > 5)
            snap_get(in, name + 5, stem - 5)->pb_path =
                path_join(in->dir, name);
        else if (ends_with(name, ".json", &stem) && stem > 5)
            snap_get(in, name + 5, stem - 5)->json_path =
                path_join(in->dir, name);
    }
    if (d != NULL)
        closedir(d);
}

static void
classify(struct report_snap *s)
{
    const char *l = s->label;

    size_t n = strlen(l);

    s->kind = strstr(l, "pre-trim")                      ? SNAP_PRE
              : strstr(l, "post-trim")                   ? SNAP_POST
              : n >= 4 && strcmp(l + n - 4, "peak") == 0 ? SNAP_PEAK
                                                         : SNAP_OTHER;
    if (s->round < 0 && strncmp(l, "round-", 6) == 0 && l[6] >= '0' &&
        l[6] <= '9')
        s->round = atoi(l + 6);
}

static int
sidecar(struct report *r, struct report_snap *s, struct err *err)
{
    struct report_jctx c = {s->json_path, err, false};
    bool absent;
    cJSON *j = report__json_file(r, s->json_path, &absent, err);
    const cJSON *mi, *prof, *cg;
    int64_t round, uord, hblk;

    if (j == NULL)
        return absent ? 0 : -1;
    s->time_ns = time_parse_rfc3339(report__jstr(&c, j, "", "time"));
    round = report__jnum(&c, j, "", "round");
    s->round = round >= 0 && round < 1000000 ? (int)round : -1;
    s->rss = report__jnum(&c, j, "", "rss_bytes");
    s->hwm = report__jnum(&c, j, "", "vm_hwm_bytes");
    s->rss_anon = report__jnum(&c, j, "", "rss_anon_bytes");
    mi = report__jitem(&c, j, "", "mallinfo", cJSON_Object);
    uord = report__jnum(&c, mi, "mallinfo", "uordblks");
    hblk = report__jnum(&c, mi, "mallinfo", "hblkhd");
    s->malloc_inuse = uord >= 0 ? i64_add_sat(uord, hblk > 0 ? hblk : 0) : -1;
    prof = report__jitem(&c, j, "", "profile", cJSON_Object);
    s->inuse = report__jnum(&c, prof, "profile", "inuse_bytes");
    s->own = report__jnum(&c, prof, "profile", "profiler_bytes");
    s->empty = prof != NULL &&
               report__jnum(&c, prof, "profile", "alloc_objects") == 0 &&
               report__jnum(&c, prof, "profile", "samples") == 0;
    cg = report__jitem(&c, j, "", "cgroup", cJSON_Object);
    s->cgroup = report__jnum(&c, cg, "cgroup", "current_bytes");
    cJSON_Delete(j);
    return c.failed ? -1 : 0;
}

/* No sidecar: heap in use and the time from the profile itself. */
/* A profile of the run, read without following links. */
static struct pprof_profile *
read_profile(struct report *r, const char *path, struct err *err)
{
    size_t len = 0;
    cleanup_free char *data = report__read(r, path, PPROF_MAX_BYTES, &len, err);

    return data ? pprof__parse(data, len, path, err) : NULL;
}

static int
from_profile(struct report *r, struct report_snap *s, struct err *err)
{
    struct pprof_profile *p = read_profile(r, s->pb_path, err);

    if (p == NULL)
        return err_status(err, EXIT_DATAERR);
    s->inuse = pprof__total(p, pprof__value_index(p, "inuse_space"));
    if (pprof__value_index(p, "inuse_space") < 0)
        s->inuse = -1;
    s->time_ns = pprof__time_ns(p);
    s->empty = pprof__nsamples(p) == 0;
    pprof__destroy(&p);
    return 0;
}

/* By time; snapshots of the same millisecond by round, then pre-trim
 * before post-trim (the order the SDK takes them in), then label. */
static int
cmp_snap(const void *a, const void *b)
{
    const struct report_snap *x = a, *y = b;

    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* A profile that has never sampled an allocation, not even cumulatively,
 * comes from a profiler that was not running (a plan built without the
 * malloc interposer, a sanitizer build): its zero says nothing. */
static void
forget_empty(struct report *r, struct report_inst *in)
{
    size_t n = 0;

    for (size_t i = 0; i < in->nsnaps; i++)
        if (in->snaps[i].empty) {
            in->snaps[i].inuse = -1;
            n++;
        }
    if (n > 0)
        report__note(r,
                     "%s: %zu heap profile%s sampled no allocation at all "
                     "(was the heap profiler running?); their heap in use "
                     "is left out",
                     in->label, n, n == 1 ? "" : "s");
}

int
report__snaps_load(struct report *r, struct report_inst *in, struct err *err)
{
    scan(r, in);
    for (size_t i = 0; i < in->nsnaps; i++) {
        struct report_snap *s = &in->snaps[i];

        if (s->json_path != NULL && sidecar(r, s, err) < 0)
            return -1;
        if (s->json_path == NULL && from_profile(r, s, err) < 0)
            return -1;
        classify(s);
        if (s->pb_path == NULL)
            report__note(r, "%s: heap-%s.json has no profile (heap-%s.pb.gz)",
                         in->label, s->label, s->label);
    }
    forget_empty(r, in);
    if (in->nsnaps > 1)
        qsort(in->snaps, in->nsnaps, sizeof(*in->snaps), cmp_snap);
    return 0;
}

/* ---- top allocation sites ------------------------------------------------ */

struct site_acc {
    struct report_site *v;
    size_t n, cap;
};

static void
acc_add(struct site_acc *a, const struct pprof_site *s, size_t n)
{
    xgrow(&a->v, &a->cap, a->n + n, sizeof(*a->v));
    for (size_t i = 0; i < n; i++)
        a->v[a->n++] =
            (struct report_site){xstrdup(s[i].function), s[i].flat, s[i].cum};
}

static const struct report_snap *
last_profile(const struct report_inst *in)
{
    for (size_t i = in->nsnaps; i-- > 0;)
        if (in->snaps[i].pb_path != NULL)
            return &in->snaps[i];
    return NULL;
}

/* The profile holding the most heap in use (the latest of equals): where
 * the instance's memory was at its peak. */
static const struct report_snap *
peak_profile(const struct report_inst *in)
{
    const struct report_snap *best = NULL;

    for (size_t i = 0; i < in->nsnaps; i++) {
        const struct report_snap *s = &in->snaps[i];

        if (s->pb_path != NULL && s->inuse >= 0 &&
            (best == NULL || s->inuse >= best->inuse))
            best = s;
    }
    return best;
}

/* Add the sites of the instance's profile s (none: NULL); out->label is
 * set to its label, or to "" when instances disagree. */
static int
inst_sites(struct report *r, const struct report_snap *s,
           struct report_sites *out, struct site_acc *a, struct err *err)
{
    struct pprof_profile *p;
    struct pprof_site *sites = NULL;
    size_t n;
    int v;

    if (s == NULL)
        return 0;
    if ((p = read_profile(r, s->pb_path, err)) == NULL)
        return err_status(err, EXIT_DATAERR);
    v = pprof__value_index(p, "inuse_space");
    n = pprof__sites(p, v, &sites);
    acc_add(a, sites, n);
    out->total = i64_add_sat(out->total, pprof__total(p, v));
    out->ninst++;
    if (out->label == NULL)
        out->label = xstrdup(s->label);
    else if (strcmp(out->label, s->label) != 0)
        out->label[0] = '\0';
    free(sites);
    pprof__destroy(&p);
    return 0;
}

static int
cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct report_site *)a)->function,
                  ((const struct report_site *)b)->function);
}

static int
cmp_flat(const void *a, const void *b)
{
    const struct report_site *x = a, *y = b;

    if (x->flat != y->flat)
        return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    return strcmp(x->function, y->function);
}

/* Sum the sites of the same function, rank, keep the top r->top. */
static void
merge(struct report *r, struct report_sites *out, struct site_acc *a)
{
    size_t n = 0;

    if (a->n > 1)
        qsort(a->v, a->n, sizeof(*a->v), cmp_name);
    for (size_t i = 0; i < a->n; i++) {
        if (n > 0 && strcmp(a->v[n - 1].function, a->v[i].function) == 0) {
            a->v[n - 1].flat = i64_add_sat(a->v[n - 1].flat, a->v[i].flat);
            a->v[n - 1].cum = i64_add_sat(a->v[n - 1].cum, a->v[i].cum);
            free(a->v[i].function);
        } else {
            a->v[n++] = a->v[i];
        }
    }
    if (n > 1)
        qsort(a->v, n, sizeof(*a->v), cmp_flat);
    while (n > (size_t)r->top || (n > 0 && a->v[n - 1].flat <= 0))
        free(a->v[--n].function);
    out->v = n > 0 ? a->v : NULL;
    out->n = n;
    if (n == 0)
        free(a->v);
    a->v = NULL;
}

static int
group_sites(struct report *r, struct report_group *g,
            const struct report_snap *(*pick)(const struct report_inst *),
            struct report_sites *out, struct err *err)
{
    struct site_acc a = {0};

    for (size_t i = 0; i < g->ninst; i++) {
        if (inst_sites(r, pick(&r->insts[g->inst[i]]), out, &a, err) < 0) {
            for (size_t k = 0; k < a.n; k++)
                free(a.v[k].function);
            free(a.v);
            return -1;
        }
    }
    merge(r, out, &a);
    return 0;
}

int
report__sites(struct report *r, struct report_group *g, struct err *err)
{
    if (group_sites(r, g, last_profile, &g->sites, err) < 0)
        return -1;
    return group_sites(r, g, peak_profile, &g->peak_sites, err);
}

bool
report__same_sites(const struct report_group *g)
{
    const char *a = g->sites.label, *b = g->peak_sites.label;

    return a != NULL && b != NULL && a[0] != '\0' && strcmp(a, b) == 0;
}
