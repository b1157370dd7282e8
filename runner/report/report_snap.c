/*
 * report_snap.c — an instance's heap snapshots, and each group's top
 * allocation sites.
 *
 * A snapshot is heap-<label>.pb.gz (the pprof profile) and heap-<label>.json
 * (its sidecar: RSS, VmHWM, RssAnon, mallinfo2, the profile's totals, the
 * cgroup's usage, the label, the round and the trigger; see
 * sdk/heap/ty_heapctl.c). The figures come from the sidecar; when it is
 * missing, the profile is decoded for heap in use and its time. The round
 * is the sidecar's, or the N of a label starting "round-N"; "pre-trim" and
 * "post-trim" in the label say which side of malloc_trim the snapshot was
 * taken. Why it was taken (its trigger: a round's end, a new peak, the
 * coordinator's pre-OOM request, ...) is the sidecar's "trigger", or for
 * runs from before sidecars had one, what the label says; its time is put
 * on the run's clock once the run's start is known.
 *
 * memory-rounds.jsonl holds the instance's own readings at each round's
 * end (ty_memory_round_end, in every memory_snapshots mode): the same
 * figures as a sidecar, one JSON object a line, without a profile. They
 * are kept as snapshots of their own (in->readings) for the rounds that
 * have no post-trim sidecar.
 *
 * Top sites: the last snapshot (by time) of each instance of a group that
 * has a profile holding anything is decoded, its inuse_space ranked by
 * site (pprof__sites), and the sites of the group's instances added
 * together. A plan that frees everything before its snapshots leaves
 * profiles of 0 B: the latest one that held something speaks for the
 * instance then, and the group says how many held nothing.
 * Growing sites: the same for the growth of each site's in-use between an
 * instance's first post-trim profile and its last profile.
 */
#include "report/report_int.h"

#include "report/pprof_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SIDECAR_MAX_BYTES ((size_t)1 << 20)
#define READINGS_MAX_BYTES ((size_t)64 << 20)
/* Rounds are matched to readings one by one: beyond this many lines the
 * rest is left out (with a note) rather than taking minutes. */
#define READINGS_MAX 10000

static void
snap_init(struct report_snap *s)
{
    memset(s, 0, sizeof(*s));
    s->round = -1;
    s->inuse = s->rss = s->hwm = s->rss_anon = -1;
    s->malloc_inuse = s->cgroup = s->own = s->own_res = -1;
    s->arena = s->hblkhd = s->fordblks = -1;
    s->cgroup_limit = s->t_ms = s->pid = -1;
}

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
    snap_init(s);
    s->label = xstrndup(label, len);
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

/* ---- kinds ----------------------------------------------------------- */

static const char *const trigger_names[] = {
    [TRIG_CALL] = "call",     [TRIG_ROUND] = "round",
    [TRIG_EVENT] = "event",   [TRIG_PERIODIC] = "periodic",
    [TRIG_PEAK] = "peak",     [TRIG_PREOOM] = "pre-oom",
    [TRIG_SIGNAL] = "signal", [TRIG_EXIT] = "exit",
};

const char *
report__trigger_name(enum report_trigger t)
{
    return trigger_names[t];
}

static bool
trigger_of_name(const char *name, enum report_trigger *t)
{
    for (size_t i = 0; name != NULL && i < ARRAY_LEN(trigger_names); i++)
        if (strcmp(name, trigger_names[i]) == 0) {
            *t = (enum report_trigger)i;
            return true;
        }
    return false;
}

/* The labels the SDK and the LD_PRELOAD profiler give their snapshots;
 * numbered ones end in -<k>. */
static const struct {
    const char *name;
    bool numbered;
    enum report_trigger trigger;
} label_kinds[] = {
    {"peak", false, TRIG_PEAK},   {"pre-oom", false, TRIG_PREOOM},
    {"exit", false, TRIG_EXIT},   {"periodic-", true, TRIG_PERIODIC},
    {"event-", true, TRIG_EVENT}, {"signal-", true, TRIG_SIGNAL},
};

static bool
digits_to_end(const char *s)
{
    return *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

static bool
label_is(const char *l, enum report_trigger *t)
{
    for (size_t i = 0; i < ARRAY_LEN(label_kinds); i++) {
        size_t n = strlen(label_kinds[i].name);

        if (label_kinds[i].numbered ? strncmp(l, label_kinds[i].name, n) == 0 &&
                                          digits_to_end(l + n)
                                    : strcmp(l, label_kinds[i].name) == 0) {
            *t = label_kinds[i].trigger;
            return true;
        }
    }
    return false;
}

static bool
round_label(const char *l)
{
    return strncmp(l, "round-", 6) == 0 && l[6] >= '0' && l[6] <= '9';
}

/* What the label says: round-N..., one of label_kinds, or the LD_PRELOAD
 * profiler's <program>-<pid>-<what> with what one of them; anything
 * else is a label the plan chose. */
static enum report_trigger
trigger_of_label(const char *l)
{
    enum report_trigger t = TRIG_CALL;

    if (round_label(l))
        return TRIG_ROUND;
    if (label_is(l, &t))
        return t;
    for (const char *p = strchr(l, '-'); p != NULL; p = strchr(p + 1, '-')) {
        size_t d = strspn(p + 1, "0123456789");

        if (d > 0 && p[1 + d] == '-' && label_is(p + 2 + d, &t))
            return t;
    }
    return TRIG_CALL;
}

static void
classify(struct report_snap *s, const char *trigger)
{
    const char *l = s->label;

    size_t n = strlen(l);
    bool peak =
        strcmp(l, "peak") == 0 || (n > 5 && strcmp(l + n - 5, "-peak") == 0);

    s->kind = strstr(l, "pre-trim")    ? SNAP_PRE
              : strstr(l, "post-trim") ? SNAP_POST
              : peak                   ? SNAP_PEAK
                                       : SNAP_OTHER;
    if (s->round < 0 && round_label(l))
        s->round = atoi(l + 6);
    if (!trigger_of_name(trigger, &s->trigger))
        s->trigger = trigger_of_label(l);
    /* a plan's own round-N-peak (ty_heap_snapshot) is drawn as a peak */
    if (peak && (s->trigger == TRIG_CALL || s->trigger == TRIG_ROUND))
        s->trigger = TRIG_PEAK;
}

void
report__snaps_clock(struct report *r)
{
    for (size_t i = 0; i < r->ninsts; i++)
        for (size_t k = 0; k < r->insts[i].nsnaps; k++) {
            struct report_snap *s = &r->insts[i].snaps[k];

            s->t_ms = -1;
            if (s->time_ns > 0 && r->start_ns > 0)
                /* a clock a little behind the run's start reads as 0 */
                s->t_ms = s->time_ns > r->start_ns
                              ? (s->time_ns - r->start_ns) / 1000000
                              : 0;
        }
}

/* ---- reading --------------------------------------------------------- */

/* The figures a sidecar and a reading share: time, round, RSS, VmHWM,
 * RssAnon, mallinfo2, the profile's totals and the cgroup's usage. */
static void
figures(struct report_jctx *c, const cJSON *j, struct report_snap *s)
{
    const cJSON *mi, *prof, *cg;
    int64_t round, uord;

    s->time_ns = time_parse_rfc3339(report__jstr(c, j, "", "time"));
    s->pid = report__jnum(c, j, "", "pid");
    round = report__jnum(c, j, "", "round");
    s->round = round >= 0 && round < 1000000 ? (int)round : -1;
    s->rss = report__jnum(c, j, "", "rss_bytes");
    s->hwm = report__jnum(c, j, "", "vm_hwm_bytes");
    s->rss_anon = report__jnum(c, j, "", "rss_anon_bytes");
    mi = report__jitem(c, j, "", "mallinfo", cJSON_Object);
    uord = report__jnum(c, mi, "mallinfo", "uordblks");
    s->arena = report__jnum(c, mi, "mallinfo", "arena");
    s->hblkhd = report__jnum(c, mi, "mallinfo", "hblkhd");
    s->fordblks = report__jnum(c, mi, "mallinfo", "fordblks");
    s->malloc_inuse =
        uord >= 0 ? i64_add_sat(uord, s->hblkhd > 0 ? s->hblkhd : 0) : -1;
    prof = report__jitem(c, j, "", "profile", cJSON_Object);
    s->inuse = report__jnum(c, prof, "profile", "inuse_bytes");
    s->own = report__jnum(c, prof, "profile", "profiler_bytes");
    s->own_res = report__jnum(c, prof, "profile", "profiler_resident_bytes");
    s->empty = prof != NULL &&
               report__jnum(c, prof, "profile", "alloc_objects") == 0 &&
               report__jnum(c, prof, "profile", "samples") == 0;
    cg = report__jitem(c, j, "", "cgroup", cJSON_Object);
    s->cgroup = report__jnum(c, cg, "cgroup", "current_bytes");
    s->cgroup_limit = report__jnum(c, cg, "cgroup", "limit_bytes");
}

/* The sidecar's figures into s; *trigger gets its "trigger" (caller
 * frees; NULL when it has none). */
static int
sidecar(struct report *r, struct report_snap *s, char **trigger,
        struct err *err)
{
    struct report_jctx c = {s->json_path, err, false};
    bool absent;
    cJSON *j = report__json_file(r, s->json_path, &absent, err);

    if (j == NULL)
        return absent ? 0 : -1;
    figures(&c, j, s);
    if (report__jstr(&c, j, "", "trigger") != NULL)
        *trigger = xstrdup(report__jstr(&c, j, "", "trigger"));
    cJSON_Delete(j);
    return c.failed ? -1 : 0;
}

/* ---- memory-rounds.jsonl ------------------------------------------------ */

struct readings_ctx {
    struct report_inst *in;
    const char *path;
    bool capped; /* READINGS_MAX lines read; the rest is left out */
};

/* A reading's heap in use is the profiler's, which may not be running
 * (a plan without the malloc interposer): nothing in use and no object
 * at all is not a heap, but no figure. */
static int
reading_line(struct report *r, void *ctx, int line, const char *text,
             size_t len, struct err *err)
{
    struct readings_ctx *rc = ctx;
    cleanup_free char *name = NULL;
    struct report_jctx c = {NULL, err, false};
    cJSON *j;
    const cJSON *prof;
    struct report_snap s;

    if (rc->capped)
        return 0;
    if (rc->in->nreadings == READINGS_MAX) {
        report__note(r,
                     "%s: more than %d rounds; those from line %d on "
                     "are left out",
                     rc->path, READINGS_MAX, line);
        rc->capped = true;
        return 0;
    }
    name = xasprintf("%s:%d", rc->path, line);
    c.path = name;
    j = report__json_text(text, len, rc->path, line, err);
    if (j == NULL)
        return -1;
    snap_init(&s);
    figures(&c, j, &s);
    prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
    if (s.inuse == 0 && cJSON_IsObject(prof) &&
        report__jnum(&c, prof, "profile", "inuse_objects") <= 0)
        s.empty = true;
    if (!c.failed && s.round < 0) {
        err_set(err, EINVAL, "%s: round: expected a round number", name);
        c.failed = true;
    }
    cJSON_Delete(j);
    if (c.failed)
        return err_status(err, EXIT_DATAERR);
    s.kind = SNAP_POST;
    s.line = line;
    if (s.empty)
        s.inuse = -1;
    xgrow(&rc->in->readings, &rc->in->capreadings, rc->in->nreadings + 1,
          sizeof(*rc->in->readings));
    rc->in->readings[rc->in->nreadings++] = s;
    return 0;
}

/* By round, then by line. */
static int
cmp_reading(const void *a, const void *b)
{
    const struct report_snap *x = a, *y = b;

    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int
readings_load(struct report *r, struct report_inst *in, struct err *err)
{
    cleanup_free char *path = path_join(in->dir, "memory-rounds.jsonl");
    struct readings_ctx rc = {in, path, false};
    struct err e = {0};
    size_t len;
    cleanup_free char *text =
        report__read(r, path, READINGS_MAX_BYTES, &len, &e);

    if (text == NULL && e.code == ENOENT)
        return 0;
    if (text == NULL) {
        *err = e;
        return err_status(err, EXIT_DATAERR);
    }
    if (report__jsonl_lines(r, path, text, len, reading_line, &rc, err) < 0)
        return -1;
    if (in->nreadings > 1)
        qsort(in->readings, in->nreadings, sizeof(*in->readings), cmp_reading);
    return 0;
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
    if (readings_load(r, in, err) < 0)
        return -1;
    scan(r, in);
    for (size_t i = 0; i < in->nsnaps; i++) {
        struct report_snap *s = &in->snaps[i];
        cleanup_free char *trigger = NULL;

        if (s->json_path != NULL && sidecar(r, s, &trigger, err) < 0)
            return -1;
        if (s->json_path == NULL && from_profile(r, s, err) < 0)
            return -1;
        classify(s, trigger);
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
    int64_t period; /* sampling period of the last profile read */
};

static void
acc_free(struct report_site *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(v[k].function);
    free(v);
}

static int64_t
samples_of(double n)
{
    return n < 0 ? -1 : report__i64(round(n));
}

static void
acc_add(struct site_acc *a, const struct pprof_site *s, size_t n)
{
    xgrow(&a->v, &a->cap, a->n + n, sizeof(*a->v));
    for (size_t i = 0; i < n; i++)
        a->v[a->n++] = (struct report_site){xstrdup(s[i].function),
                                            s[i].flat,
                                            s[i].cum,
                                            samples_of(s[i].samples),
                                            s[i].testyard,
                                            0,
                                            NAN};
}

static void
acc_release(struct site_acc *a)
{
    for (size_t k = 0; k < a->n; k++)
        free(a->v[k].function);
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* The profile that speaks for an instance: its last, or when that held
 * 0 B in use, the latest one that held something. */
static const struct report_snap *
sites_profile(const struct report_inst *in, bool *older)
{
    const struct report_snap *last = NULL;

    for (size_t i = in->nsnaps; i-- > 0;) {
        const struct report_snap *s = &in->snaps[i];

        if (s->pb_path == NULL)
            continue;
        if (last == NULL)
            last = s;
        if (s->inuse != 0) {
            *older = s != last;
            return s;
        }
    }
    *older = false;
    return last;
}

/* Whether a and b come from one process: always for the SDK; the
 * LD_PRELOAD profiler runs in every process of a program's tree (a
 * wrapper shell, helpers), each with profiles of its own. */
static bool
same_process(const struct report_snap *a, const struct report_snap *b)
{
    return a->pid < 0 || b->pid < 0 || a->pid == b->pid;
}

/* The instance's last profile of the process that held the most heap in
 * any of its profiles: under LD_PRELOAD a wrapper's exit profile, taken
 * after the program it ran was killed, is not what filled the instance. */
const struct report_snap *
report__last_profile(const struct report_inst *in)
{
    const struct report_snap *big = NULL;

    for (size_t i = 0; i < in->nsnaps; i++) {
        const struct report_snap *s = &in->snaps[i];

        if (s->pb_path != NULL && (big == NULL || s->inuse > big->inuse))
            big = s;
    }
    for (size_t i = in->nsnaps; big != NULL && i-- > 0;)
        if (in->snaps[i].pb_path != NULL && same_process(&in->snaps[i], big))
            return &in->snaps[i];
    return big;
}

/* Add the sites of the profile at path to a and, when asked, its
 * inuse_space to *total and its unnamed frames to *syms (rel: the
 * profile's run-relative path). */
static int
profile_sites(struct report *r, const char *path, struct site_acc *a,
              int64_t *total, struct report_symbols *syms, const char *rel,
              struct err *err)
{
    struct pprof_profile *p;
    struct pprof_site *sites = NULL;
    size_t n;
    int v;

    if ((p = read_profile(r, path, err)) == NULL)
        return err_status(err, EXIT_DATAERR);
    v = pprof__value_index(p, "inuse_space");
    n = pprof__sites(p, v, &sites);
    acc_add(a, sites, n);
    a->period = pprof__period(p);
    if (total != NULL)
        *total = i64_add_sat(*total, pprof__total(p, v));
    if (syms != NULL)
        report__syms_add(syms, p, rel);
    free(sites);
    pprof__destroy(&p);
    return 0;
}

/* Add the sites of the instance's profile; g->sites_label is set to its
 * label, or to "" when instances disagree. */
static int
inst_sites(struct report *r, struct report_group *g,
           const struct report_inst *in, struct site_acc *a, struct err *err)
{
    bool older;
    const struct report_snap *s = sites_profile(in, &older);
    cleanup_free char *rel = NULL;

    for (size_t i = 0; i < in->nsnaps; i++)
        if (in->snaps[i].pb_path != NULL) {
            g->nprofiles++;
            g->nprofiles_zero += in->snaps[i].inuse == 0;
        }
    if (s == NULL)
        return 0;
    rel = xasprintf("%s/heap-%s.pb.gz", in->label, s->label);
    if (profile_sites(r, s->pb_path, a, &g->sites_total, &g->syms, rel, err) <
        0)
        return -1;
    g->sites_ninst++;
    g->sites_older += older;
    if (g->sites_label == NULL)
        g->sites_label = xstrdup(s->label);
    else if (strcmp(g->sites_label, s->label) != 0)
        g->sites_label[0] = '\0';
    return 0;
}

static int
cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct report_site *)a)->function,
                  ((const struct report_site *)b)->function);
}

/* The plan's sites before testyard's, then by in-use (or growth), cum,
 * name. */
static int
cmp_flat(const void *a, const void *b)
{
    const struct report_site *x = a, *y = b;

    if (x->testyard != y->testyard)
        return x->testyard ? 1 : -1;
    if (x->growth != y->growth)
        return x->growth > y->growth ? -1 : 1;
    if (x->flat != y->flat)
        return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    return strcmp(x->function, y->function);
}

/* Sum the sites of the same function in v[0..n); returns the new n. */
static size_t
sum_by_name(struct report_site *v, size_t n0)
{
    size_t n = 0;

    if (n0 > 1)
        qsort(v, n0, sizeof(*v), cmp_name);
    for (size_t i = 0; i < n0; i++) {
        struct report_site *t = n > 0 ? &v[n - 1] : NULL;

        if (t == NULL || strcmp(t->function, v[i].function) != 0) {
            v[n++] = v[i];
            continue;
        }
        t->flat = i64_add_sat(t->flat, v[i].flat);
        t->cum = i64_add_sat(t->cum, v[i].cum);
        t->growth = i64_add_sat(t->growth, v[i].growth);
        t->samples = t->samples < 0 || v[i].samples < 0
                         ? -1
                         : i64_add_sat(t->samples, v[i].samples);
        t->testyard = t->testyard || v[i].testyard;
        t->rate =
            isnan(t->rate) || isnan(v[i].rate) ? NAN : t->rate + v[i].rate;
        free(v[i].function);
    }
    return n;
}

/* Sum the sites of the same function, drop those holding nothing
 * themselves (functions only on the way to a site), rank, keep the top
 * `top` into *out (NULL when none). */
static void
merge(struct site_acc *a, int top, struct report_site **out, size_t *nout)
{
    size_t n0 = sum_by_name(a->v, a->n), n = 0;

    for (size_t i = 0; i < n0; i++) {
        if (a->v[i].flat > 0)
            a->v[n++] = a->v[i];
        else
            free(a->v[i].function);
    }
    if (n > 1)
        qsort(a->v, n, sizeof(*a->v), cmp_flat);
    while (n > (size_t)top)
        free(a->v[--n].function);
    *out = n > 0 ? a->v : NULL;
    *nout = n;
    if (n == 0)
        free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* ---- growing sites ------------------------------------------------------- */

int
report__sites_growth(struct report *r, const char *from_pb, const char *to_pb,
                     struct report_site **v, size_t *n, size_t *cap,
                     struct err *err)
{
    struct site_acc a = {0}, b = {0};
    size_t na, nb, k = 0;
    int64_t least;

    if (profile_sites(r, from_pb, &a, NULL, NULL, NULL, err) < 0 ||
        profile_sites(r, to_pb, &b, NULL, NULL, NULL, err) < 0) {
        acc_free(a.v, a.n);
        acc_free(b.v, b.n);
        return -1;
    }
    na = sum_by_name(a.v, a.n);
    nb = sum_by_name(b.v, b.n);
    /* one sampled block coming or going weighs about one period (up to
     * 1.6 periods for blocks as large as it): growth within two is noise */
    least = b.period > 1 ? 2 * b.period : 0;
    /* both sorted by name: walk them together */
    for (size_t i = 0; i < nb; i++) {
        int c = 1;

        while (k < na && (c = strcmp(a.v[k].function, b.v[i].function)) < 0)
            k++;
        b.v[i].growth = b.v[i].flat - (k < na && c == 0 ? a.v[k].flat : 0);
        if (b.v[i].growth <= least) {
            free(b.v[i].function);
            continue;
        }
        xgrow(v, cap, *n + 1, sizeof(**v));
        (*v)[(*n)++] = b.v[i];
    }
    acc_free(a.v, na);
    free(b.v);
    if (*n > 1)
        qsort(*v, *n, sizeof(**v), cmp_flat);
    return 0;
}

void
report__gsites_release(struct report_gsites *gs)
{
    acc_free(gs->v, gs->n);
    free(gs->from);
    free(gs->to);
    memset(gs, 0, sizeof(*gs));
}

/* The first post-trim profile of the process that took to (a round's
 * snapshot that is not pre-trim); without one, its first profile at all. */
static const struct report_snap *
first_post(const struct report_inst *in, const struct report_snap *to)
{
    const struct report_snap *any = NULL;

    for (size_t i = 0; i < in->nsnaps; i++) {
        const struct report_snap *s = &in->snaps[i];

        if (s->pb_path == NULL || !same_process(s, to))
            continue;
        if (s->kind == SNAP_POST ||
            (s->round >= 0 && s->kind != SNAP_PRE && s->kind != SNAP_PEAK))
            return s;
        any = any ? any : s;
    }
    return any;
}

/* The last round the instance has figures for: the round of a last
 * profile that is not a round's (peak, pre-oom, exit). */
static int
round_of(const struct report_inst *in, const struct report_snap *s)
{
    if (s->round >= 0)
        return s->round;
    return in->nrounds > 0 ? in->rounds[in->nrounds - 1].round : -1;
}

static void
label_agree(char **have, const char *label, bool first)
{
    if (first)
        *have = xstrdup(label);
    else if (*have != NULL && strcmp(*have, label) != 0) {
        free(*have);
        *have = NULL;
    }
}

/* An instance's growing sites: from its first post-trim profile to its
 * last profile, with bytes per round over the rounds between. */
static int
inst_gsites(struct report *r, struct report_inst *in, struct err *err)
{
    const struct report_snap *to = report__last_profile(in),
                             *from = to ? first_post(in, to) : NULL;
    struct report_gsites *gs = &in->gsites;
    size_t cap = 0;

    if (from == NULL || from == to)
        return 0;
    if (report__sites_growth(r, from->pb_path, to->pb_path, &gs->v, &gs->n,
                             &cap, err) < 0)
        return -1;
    gs->from = xstrdup(from->label);
    gs->to = xstrdup(to->label);
    gs->ninst = 1;
    gs->rounds = round_of(in, to) - round_of(in, from);
    if (gs->rounds <= 0)
        gs->rounds = -1;
    for (size_t i = 0; i < gs->n; i++)
        gs->v[i].rate =
            gs->rounds > 0 ? (double)gs->v[i].growth / gs->rounds : NAN;
    return 0;
}

static void
group_gsites(struct report *r, struct report_group *g)
{
    struct report_gsites *gs = &g->gsites;
    size_t cap = 0;

    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_gsites *x = &r->insts[g->inst[i]].gsites;

        if (x->ninst == 0)
            continue;
        label_agree(&gs->from, x->from, gs->ninst == 0);
        label_agree(&gs->to, x->to, gs->ninst == 0);
        gs->rounds = gs->ninst == 0 || gs->rounds == x->rounds ? x->rounds : -1;
        gs->ninst++;
        xgrow(&gs->v, &cap, gs->n + x->n, sizeof(*gs->v));
        for (size_t k = 0; k < x->n; k++) {
            gs->v[gs->n] = x->v[k];
            gs->v[gs->n++].function = xstrdup(x->v[k].function);
        }
    }
    gs->n = sum_by_name(gs->v, gs->n);
    if (gs->n > 1)
        qsort(gs->v, gs->n, sizeof(*gs->v), cmp_flat);
    while (gs->n > (size_t)r->top)
        free(gs->v[--gs->n].function);
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

static int
group_peak_sites(struct report *r, struct report_group *g, struct err *err)
{
    struct site_acc a = {0};

    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_snap *s = peak_profile(&r->insts[g->inst[i]]);

        if (s == NULL)
            continue;
        if (profile_sites(r, s->pb_path, &a, &g->psites_total, NULL, NULL,
                          err) < 0) {
            acc_release(&a);
            return -1;
        }
        label_agree(&g->psites_label, s->label, g->psites_ninst == 0);
        g->psites_ninst++;
    }
    merge(&a, r->top, &g->psites, &g->npsites);
    return 0;
}

int
report__sites(struct report *r, struct report_group *g, struct err *err)
{
    struct site_acc a = {0};

    for (size_t i = 0; i < g->ninst; i++) {
        struct report_inst *in = &r->insts[g->inst[i]];

        if (inst_sites(r, g, in, &a, err) < 0 || inst_gsites(r, in, err) < 0) {
            acc_release(&a);
            return -1;
        }
    }
    merge(&a, r->top, &g->sites, &g->nsites);
    group_gsites(r, g);
    return group_peak_sites(r, g, err);
}

bool
report__same_sites(const struct report_group *g)
{
    const char *a = g->sites_label, *b = g->psites_label;

    return g->sites_older == 0 && a != NULL && b != NULL && a[0] != '\0' &&
           strcmp(a, b) == 0;
}

void
report__sites_absent_text(const struct report_group *g, char *buf, size_t size)
{
    size_t n = g->nprofiles;

    if (n == 0)
        snprintf(buf, size, "no heap profiles (heap-<label>.pb.gz) to read");
    else if (g->nprofiles_zero == n)
        snprintf(buf, size,
                 "%zu heap profile%s, %s 0 B in use at the snapshot: the "
                 "plan freed its memory before taking %s",
                 n, n == 1 ? "" : "s", n == 1 ? "with" : "all with",
                 n == 1 ? "it" : "them");
    else
        snprintf(buf, size,
                 "%zu heap profile%s, with no sampled allocation in use", n,
                 n == 1 ? "" : "s");
}

int
report__snap_sites(struct report *r, const struct report_snap *s,
                   struct report_site **sites, size_t *n, int64_t *total,
                   struct err *err)
{
    struct site_acc a = {0};

    *sites = NULL;
    *n = 0;
    *total = 0;
    if (profile_sites(r, s->pb_path, &a, total, NULL, NULL, err) < 0) {
        acc_release(&a);
        return -1;
    }
    merge(&a, r->top, sites, n);
    return 0;
}

void
report__sites_free(struct report_site **sites, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free((*sites)[i].function);
    free(*sites);
    *sites = NULL;
    *n = 0;
}

void
report__site_name(const struct report_site *s, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s", s->function, s->testyard ? " (testyard)" : "",
             s->samples == 1 ? " (1 sample)" : "");
}
