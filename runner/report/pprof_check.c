/*
 * pprof_check.c — after a profile decodes, check that its parts fit
 * together the way pprof's own reader requires (the string table starts
 * with "", string indexes are in range, ids are non-zero and unique, every
 * sample has one value per sample type, every location and function it
 * refers to exists), turn the samples' location ids into indexes, and give
 * every frame a name: its function's, or, when the profile could not name
 * it, "<object>+0x<offset>" (the object file's base name and the frame's
 * offset in that file, as pprof prints an unsymbolized frame and as
 * `addr2line -e <object>` takes it), or its bare address outside any
 * mapping.
 */
#include "report/pprof_read_int.h"

#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checking and indexing --------------------------------------------- */

/* A profile whose fields decode but do not fit together. */
static int
invalid(struct dec *d, const char *fmt, ...)
{
    char why[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    err_set(d->err, EINVAL, "%s: %s", d->name, why);
    return err_status(d->err, EXIT_DATAERR);
}

/* Locations, functions and mappings all start with their uint64_t id. */
static int
cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static const void *
find_id(const void *arr, size_t n, size_t size, uint64_t id)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = (const char *)arr + mid * size;
        uint64_t v = *(const uint64_t *)e;

        if (v == id)
            return e;
        if (v < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Sort by id; ids must be non-zero and unique. */
static int
index_ids(struct dec *d, void *arr, size_t n, size_t size, const char *what)
{
    if (n > 1)
        qsort(arr, n, size, cmp_id);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = *(const uint64_t *)((char *)arr + i * size);

        if (id == 0)
            return invalid(d, "%s with id 0", what);
        if (i > 0 && id == *(const uint64_t *)((char *)arr + (i - 1) * size))
            return invalid(d, "two %ss with id %" PRIu64, what, id);
    }
    return 0;
}

static int
check_str(struct dec *d, int64_t i, const char *what, uint64_t id)
{
    if (i >= 0 && (uint64_t)i < d->prof->nstrs)
        return 0;
    return invalid(d,
                   "%s %" PRIu64 ": string index %lld out of range (%zu "
                   "strings)",
                   what, id, (long long)i, d->prof->nstrs);
}

static int
check_strings(struct dec *d)
{
    const struct pprof_profile *p = d->prof;

    if (p->nstrs == 0 || p->strs[0][0] != '\0')
        return invalid(d, "the string table must start with \"\"");
    for (size_t i = 0; i < p->ntypes; i++)
        if (check_str(d, p->types[i], "sample type", i + 1) < 0)
            return -1;
    for (size_t i = 0; i < p->nfuncs; i++)
        if (check_str(d, p->funcs[i].name, "function", p->funcs[i].id) < 0 ||
            check_str(d, p->funcs[i].system_name, "function", p->funcs[i].id) <
                0 ||
            check_str(d, p->funcs[i].file, "function", p->funcs[i].id) < 0)
            return -1;
    for (size_t i = 0; i < p->nmaps; i++)
        if (check_str(d, p->maps[i].file, "mapping", p->maps[i].id) < 0 ||
            check_str(d, p->maps[i].build_id, "mapping", p->maps[i].id) < 0)
            return -1;
    return 0;
}

/* Every sample has one value per type; its location ids become indexes
 * into locs. */
static int
check_samples(struct dec *d)
{
    struct pprof_profile *p = d->prof;

    for (size_t i = 0; i < p->nsamples; i++) {
        struct pp_sample *s = &p->samples[i];

        /* a label's key that is not a string is no "bytes" label */
        s->bytes = s->lkey > 0 && (uint64_t)s->lkey < p->nstrs &&
                           strcmp(p->strs[s->lkey], "bytes") == 0
                       ? s->lnum
                       : -1;
        if (s->nvals != p->ntypes)
            return invalid(d,
                           "sample %zu has %zu values for %zu sample "
                           "types",
                           i + 1, s->nvals, p->ntypes);
        for (size_t j = 0; j < s->nlocs; j++) {
            uint64_t *id = &p->slocs[s->loc0 + j];
            const struct pp_loc *l =
                find_id(p->locs, p->nlocs, sizeof(*l), *id);

            if (l == NULL)
                return invalid(d,
                               "sample %zu refers to location %" PRIu64
                               ", which is not in the profile",
                               i + 1, *id);
            *id = (uint64_t)(l - p->locs);
        }
    }
    return 0;
}

static const char *
loc_synth(struct pprof_profile *p, struct pp_loc *l)
{
    const struct pp_map *m;
    const char *file = NULL, *base;
    char *name;

    if (l->synth != NULL)
        return l->synth;
    m = find_id(p->maps, p->nmaps, sizeof(*m), l->mapping_id);
    if (m != NULL && p->strs[m->file][0] != '\0')
        file = p->strs[m->file];
    base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    /* the file offset: where the mapping starts in the file, plus how far
     * into the mapping the address lies */
    name = base && l->address >= m->start
               ? xasprintf("%s+0x%" PRIx64, base,
                           l->address - m->start + m->offset)
               : xasprintf("0x%" PRIx64, l->address);
    xgrow(&p->synth, &p->capsynth, p->nsynth + 1, sizeof(*p->synth));
    p->synth[p->nsynth++] = name;
    l->synth = name;
    return name;
}

static int
name_lines(struct dec *d, struct pp_loc *l)
{
    struct pprof_profile *p = d->prof;

    for (size_t j = l->line0; j < l->line0 + l->nlines; j++) {
        const struct pp_func *fn =
            find_id(p->funcs, p->nfuncs, sizeof(*fn), p->lines[j]);
        const char *name = NULL;

        p->lfiles[j] = fn != NULL ? p->strs[fn->file] : "";
        if (fn == NULL && p->lines[j] != 0)
            return invalid(d,
                           "location %" PRIu64 " refers to function %" PRIu64
                           ", which is not in the profile",
                           l->id, p->lines[j]);
        if (fn != NULL)
            name = p->strs[fn->name][0] ? p->strs[fn->name]
                                        : p->strs[fn->system_name];
        p->lnames[j] = name && name[0] ? name : loc_synth(p, l);
    }
    if (l->nlines == 0)
        loc_synth(p, l);
    return 0;
}

int
pprof__check(struct dec *d)
{
    struct pprof_profile *p = d->prof;

    if (check_strings(d) < 0 ||
        index_ids(d, p->locs, p->nlocs, sizeof(*p->locs), "location") < 0 ||
        index_ids(d, p->funcs, p->nfuncs, sizeof(*p->funcs), "function") < 0)
        return -1;
    /* Mappings are only used to name unsymbolized frames: tolerate
     * duplicates, as some writers emit them. */
    if (p->nmaps > 1)
        qsort(p->maps, p->nmaps, sizeof(*p->maps), cmp_id);
    if (check_samples(d) < 0)
        return -1;
    p->lnames = xcalloc(p->nlines ? p->nlines : 1, sizeof(*p->lnames));
    p->lfiles = xcalloc(p->nlines ? p->nlines : 1, sizeof(*p->lfiles));
    for (size_t i = 0; i < p->nlocs; i++)
        if (name_lines(d, &p->locs[i]) < 0)
            return -1;
    return 0;
}

/* ---- unsymbolized frames ----------------------------------------------- */

/* Insert mapping m with n unnamed frames into out, kept most first. */
static void
symobj_insert(const struct pprof_profile *p, const struct pp_map *m, size_t n,
              struct pprof_symbols *out)
{
    size_t k = out->nobjects;

    while (k > 0 && out->objects[k - 1].frames < n)
        k--;
    if (k == PPROF_SYM_OBJECTS)
        return;
    if (out->nobjects < PPROF_SYM_OBJECTS)
        out->nobjects++;
    memmove(&out->objects[k + 1], &out->objects[k],
            (out->nobjects - 1 - k) * sizeof(out->objects[0]));
    out->objects[k] =
        (struct pprof_symobj){p->strs[m->file], p->strs[m->build_id], n};
}

void
pprof__symbols(const struct pprof_profile *p, struct pprof_symbols *out)
{
    cleanup_free size_t *per = xcalloc(p->nmaps + 1, sizeof(*per));

    *out = (struct pprof_symbols){.frames = p->nlocs};
    for (size_t i = 0; i < p->nlocs; i++) {
        const struct pp_loc *l = &p->locs[i];
        const struct pp_map *m;

        if (l->synth == NULL)
            continue;
        out->unsymbolized++;
        m = find_id(p->maps, p->nmaps, sizeof(*m), l->mapping_id);
        if (m != NULL)
            per[m - p->maps]++;
    }
    for (size_t i = 0; i < p->nmaps; i++)
        if (per[i] > 0 && p->strs[p->maps[i].file][0] != '\0')
            symobj_insert(p, &p->maps[i], per[i], out);
}
