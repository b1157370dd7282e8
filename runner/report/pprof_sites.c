/*
 * pprof_sites.c — rank a profile's allocation sites (see report/pprof_int.h):
 * walk each sample's frames innermost first, look through allocator and
 * profiler wrappers to the first user function, and total the sample's
 * value there (flat) and on every function of its stack once (cum).
 */
#include "report/pprof_read_int.h"

#include "ty_hash.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- allocation sites -------------------------------------------------- */

/* Frames that allocate on a caller's behalf: the allocator's entry
 * points, libc functions that return fresh memory, C++'s operator new
 * (mangled and not), the runner's and plans' die-on-failure helpers, and
 * the SDK's internals. */
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
    "ty__", "ty_heap_", "__libc_", "__GI_", "_dl_",
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

/* The frames of one sample, innermost first. */
struct frame_it {
    const struct pprof_profile *p;
    const struct pp_sample *s;
    size_t loc, line;
};

static const char *
frame_next(struct frame_it *it)
{
    while (it->loc < it->s->nlocs) {
        const struct pp_loc *l =
            &it->p->locs[it->p->slocs[it->s->loc0 + it->loc]];

        if (l->nlines == 0 && it->line == 0) {
            it->line = 1;
            return l->synth;
        }
        if (it->line < l->nlines)
            return it->p->lnames[l->line0 + it->line++];
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
    a->sites[a->n] = (struct pprof_site){name, 0, 0};
    a->slot[i] = ++a->n;
    return a->n - 1;
}

static void
agg_sample(struct agg *a, const struct pprof_profile *p, size_t k, int64_t val)
{
    struct frame_it it = {p, &p->samples[k], 0, 0};
    const char *f, *site = NULL, *first = NULL;
    size_t i;

    while ((f = frame_next(&it)) != NULL) {
        if (first == NULL)
            first = f;
        if (pprof__is_wrapper(f))
            continue;
        if (site == NULL)
            site = f;
        i = agg_get(a, f);
        if (a->last[i] != k + 1) {
            a->last[i] = k + 1;
            a->sites[i].cum = i64_add_sat(a->sites[i].cum, val);
        }
    }
    if (site == NULL) {
        i = agg_get(a, first ? first : "(no stack)");
        a->sites[i].cum = i64_add_sat(a->sites[i].cum, val);
    } else {
        i = agg_get(a, site);
    }
    a->sites[i].flat = i64_add_sat(a->sites[i].flat, val);
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
            agg_sample(&a, p, k, val);
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
