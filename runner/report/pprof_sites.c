/*
 * pprof_sites.c — rank a profile's allocation sites (see report/pprof_int.h):
 * walk each sample's frames innermost first, look through allocator
 * wrappers to the first function that asked for the memory, and total the
 * sample's value there (flat) and on every function of its stack once
 * (cum). When that function is testyard's own, the site is the outermost
 * of the testyard frames that follow, marked as testyard's; so is a site
 * in a shared library (libc's stdio, libcjson) that testyard's code
 * called: the first frame above the library's decides whose it is.
 */
#include "report/pprof_read_int.h"

#include "ty_hash.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- allocation sites -------------------------------------------------- */

/* Frames that allocate on a caller's behalf: the allocator's entry
 * points, libc functions that return fresh memory, C++'s operator new
 * (mangled and not), and the runner's and plans' die-on-failure helpers.
 * The SDK's own functions are not wrappers but testyard's sites. */
static const char *const wrapper_names[] = {
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "free",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
    "strdup",
    "strndup",
    "__strdup",
    "__strndup",
    "wcsdup",
    "asprintf",
    "vasprintf",
    "__vasprintf_internal",
    "getline",
    "getdelim",
    "open_memstream",
    "operator new",
    "operator new[]",
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "xmalloc",
    "xcalloc",
    "xrealloc",
    "xstrdup",
    "xstrndup",
    "xasprintf",
    "xgrow",
    "xmemdup",
};
static const char *const wrapper_prefixes[] = {
    "__libc_",
    "__GI_",
    "_dl_",
};

bool
pprof__is_wrapper(const char *f)
{
    for (size_t i = 0; i < ARRAY_LEN(wrapper_names); i++)
        if (strcmp(f, wrapper_names[i]) == 0)
            return true;
    for (size_t i = 0; i < ARRAY_LEN(wrapper_prefixes); i++)
        if (strncmp(f, wrapper_prefixes[i], strlen(wrapper_prefixes[i])) == 0)
            return true;
    return false;
}

/* testyard's code: the SDK's functions (ty_..., ty__...) and the static
 * functions of its source files (ty_conn.c, ty_zmtp.c, ty_heap*.c, ...),
 * whose names carry no prefix. */
bool
pprof__is_testyard(const char *f, const char *file)
{
    const char *base = file ? strrchr(file, '/') : NULL;

    base = base ? base + 1 : file;
    return strncmp(f, "ty_", 3) == 0 ||
           (base != NULL && strncmp(base, "ty_", 3) == 0 && strlen(base) > 5 &&
            strcmp(base + strlen(base) - 2, ".c") == 0);
}

/* The frames of one sample, innermost first; file is the frame's
 * source file ("" unknown), lib whether it lies outside the main
 * program's mapping (the profile's first: a shared library). */
struct frame_it {
    const struct pprof_profile *p;
    const struct pp_sample *s;
    size_t loc, line;
    const char *file;
    bool lib;
};

static const char *
frame_next(struct frame_it *it)
{
    while (it->loc < it->s->nlocs) {
        const struct pp_loc *l =
            &it->p->locs[it->p->slocs[it->s->loc0 + it->loc]];

        it->file = "";
        it->lib = it->p->nmaps > 0 && l->mapping_id != it->p->maps[0].id;
        if (l->nlines == 0 && it->line == 0) {
            it->line = 1;
            return l->synth;
        }
        if (it->line < l->nlines) {
            it->file = it->p->lfiles[l->line0 + it->line];
            return it->p->lnames[l->line0 + it->line++];
        }
        it->loc++;
        it->line = 0;
    }
    return NULL;
}

/* Sites by name: an open-addressing table of indexes into sites, sized
 * once for every name the profile can produce. */
struct agg {
    struct pprof_site *sites;
    size_t *last; /* per site: 1 + the last sample its cum counted */
    size_t n;
    size_t *slot; /* site index + 1, 0 for free */
    size_t nslot;
};

static size_t
agg_get(struct agg *a, const char *name)
{
    size_t i = (size_t)ty__fnv1a_str(TY__FNV_BASIS, name) & (a->nslot - 1);

    for (; a->slot[i] != 0; i = (i + 1) & (a->nslot - 1))
        if (strcmp(a->sites[a->slot[i] - 1].function, name) == 0)
            return a->slot[i] - 1;
    a->sites[a->n] = (struct pprof_site){name, 0, 0, 0, false};
    a->slot[i] = ++a->n;
    return a->n - 1;
}

/* The allocations a sample stands for were sampled with probability
 * 1 - exp(-avg / period) each (Go's estimator, sdk/heap/ty_pprof.h):
 * undo it to count the samples behind its estimate. */
static double
sample_count(const struct pprof_profile *p, const struct pp_sample *s,
             int objects)
{
    double n, avg;

    if (objects < 0)
        return -1;
    n = (double)p->svals[s->val0 + (size_t)objects];
    if (p->period <= 1)
        return n;
    if (s->bytes < 0)
        return -1;
    avg = (double)s->bytes;
    return n * -expm1(-avg / (double)p->period);
}

/* The site of a sample: the first frame past the wrappers, or for
 * testyard's code the last of the testyard frames that follow it. A site
 * in a library is testyard's when the first frame above the library's
 * is. */
struct site_walk {
    const char *site, *first;
    bool testyard, open; /* open: still in the run of testyard frames */
    bool inlib;          /* the site is a library's: who called it? */
};

static void
walk_frame(struct site_walk *w, const char *f, const char *file, bool lib)
{
    bool ty = pprof__is_testyard(f, file);

    if (w->site == NULL) {
        w->site = f;
        w->testyard = w->open = ty;
        w->inlib = lib && !ty;
    } else if (w->inlib) {
        if (lib && !ty)
            return;
        w->inlib = false;
        if (ty) {
            w->site = f;
            w->testyard = w->open = true;
        }
    } else if (w->open && ty) {
        w->site = f;
    } else {
        w->open = false;
    }
}

static void
agg_sample(struct agg *a, const struct pprof_profile *p, size_t k, int64_t val,
           int objects)
{
    struct frame_it it = {p, &p->samples[k], 0, 0, "", false};
    struct site_walk w = {0};
    const char *f;
    double n = sample_count(p, &p->samples[k], objects);
    size_t i;

    while ((f = frame_next(&it)) != NULL) {
        if (w.first == NULL)
            w.first = f;
        if (pprof__is_wrapper(f))
            continue;
        walk_frame(&w, f, it.file, it.lib);
        i = agg_get(a, f);
        if (a->last[i] != k + 1) {
            a->last[i] = k + 1;
            a->sites[i].cum = i64_add_sat(a->sites[i].cum, val);
        }
    }
    if (w.site == NULL) {
        i = agg_get(a, w.first ? w.first : "(no stack)");
        a->sites[i].cum = i64_add_sat(a->sites[i].cum, val);
    } else {
        i = agg_get(a, w.site);
    }
    a->sites[i].flat = i64_add_sat(a->sites[i].flat, val);
    a->sites[i].testyard = a->sites[i].testyard || w.testyard;
    if (a->sites[i].samples >= 0)
        a->sites[i].samples = n < 0 ? -1 : a->sites[i].samples + n;
}

static int
cmp_site(const void *a, const void *b)
{
    const struct pprof_site *x = a, *y = b;

    if (x->flat != y->flat)
        return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    return strcmp(x->function, y->function);
}

size_t
pprof__sites(const struct pprof_profile *p, int v, struct pprof_site **out)
{
    size_t max = p->nlines + p->nlocs + 1, n = 0;
    int objects = pprof__value_index(p, "inuse_objects");
    struct agg a = {0};

    *out = NULL;
    if (v < 0 || (size_t)v >= p->ntypes || p->nsamples == 0)
        return 0;
    for (a.nslot = 16; a.nslot < 2 * max; a.nslot *= 2)
        ;
    a.slot = xcalloc(a.nslot, sizeof(*a.slot));
    a.sites = xcalloc(max, sizeof(*a.sites));
    a.last = xcalloc(max, sizeof(*a.last));
    for (size_t k = 0; k < p->nsamples; k++) {
        int64_t val = p->svals[p->samples[k].val0 + (size_t)v];

        if (val != 0)
            agg_sample(&a, p, k, val, objects);
    }
    for (size_t i = 0; i < a.n; i++)
        if (a.sites[i].flat != 0 || a.sites[i].cum != 0)
            a.sites[n++] = a.sites[i];
    if (n > 1)
        qsort(a.sites, n, sizeof(*a.sites), cmp_site);
    free(a.slot);
    free(a.last);
    if (n == 0)
        free(a.sites);
    else
        *out = a.sites;
    return n;
}
