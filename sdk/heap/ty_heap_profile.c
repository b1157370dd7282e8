/*
 * ty_heap_profile.c — a heap snapshot as a pprof profile in Go's layout:
 * sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes, period type space/bytes with the rate as period, one
 * sample per call stack with a "bytes" label (the average block size),
 * values un-sampled with Go's estimator (scaleHeapSample), and mappings,
 * locations and functions from this process's ELF files (ty_symbols.c).
 * A frame no symbol table names keeps its address and mapping (file name,
 * build id, addresses, offset) and carries no line, so pprof can name it
 * later against the file; the totals count such frames per object for
 * the sidecar.
 *
 * Addresses follow pprof's convention: a location's address is a return
 * address minus one, so that it lands inside the call instruction and
 * symbolizes to the calling line, as Go's runtime/pprof and pprof's own
 * legacy parsers do. Each stack's samples were taken at one rate (a rate
 * change starts new buckets), so each is scaled by its own rate.
 */
#include "ty_pprof.h"
#include "ty_symbols.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ty__heap_scale(uint64_t count, uint64_t bytes, uint64_t rate,
               int64_t *est_count, int64_t *est_bytes)
{
    double avg, scale;

    if (count == 0 || bytes == 0) {
        *est_count = *est_bytes = 0;
        return;
    }
    if (rate <= 1) {
        *est_count = (int64_t)count;
        *est_bytes = (int64_t)bytes;
        return;
    }
    avg = (double)bytes / (double)count;
    scale = 1 / (1 - exp(-avg / (double)rate));
    *est_count = (int64_t)((double)count * scale);
    *est_bytes = (int64_t)((double)bytes * scale);
}

/* The function a symbol stands for: gcc names the copies it specialises,
 * splits or outlines "f.constprop.0", "f.isra.0", "f.part.0", "f.cold",
 * and a versioned symbol in a .symtab reads "f@@GLIBC_2.2.5"; pprof should
 * show f. */
static const char *
unclone(const char *sym, char *buf, size_t size)
{
    static const char *const tags[] = {
        ".constprop.", ".isra.",      ".part.", ".cold",
        ".lto_priv.",  ".localalias", "@"};
    size_t cut = strlen(sym);

    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        const char *t = strstr(sym, tags[i]);

        if (t != NULL && (size_t)(t - sym) < cut)
            cut = (size_t)(t - sym);
    }
    if (cut == strlen(sym) || cut == 0 || cut >= size)
        return sym;
    memcpy(buf, sym, cut);
    buf[cut] = '\0';
    return buf;
}

/* Per mapping: locations in it and how many had no name. */
struct map_use {
    size_t locs, unnamed;
};

static uint64_t
heap_location(struct ty__pprof *p, struct ty__symbolizer *sym,
              struct map_use *use, uintptr_t pc, struct ty__heap_totals *tot)
{
    uintptr_t addr = pc - 1;
    uint64_t id = ty__pprof_location_of(p, addr), fid = 0;
    const char *name, *file;
    char buf[512];
    int m;

    if (id != 0)
        return id;
    m = ty__symbolizer_find(sym, addr);
    if (m >= 0) {
        use[m].locs++;
        if (ty__symbolize(sym, m, addr, &name, &file) == 0)
            fid = ty__pprof_function(p, unclone(name, buf, sizeof(buf)), name,
                                     file);
        else
            use[m].unnamed++;
    }
    tot->frames++;
    tot->unsymbolized += fid == 0;
    return ty__pprof_location(p, addr, m >= 0 ? (uint64_t)m + 1 : 0, fid);
}

/* A stack's estimated alloc_objects, alloc_space, inuse_objects and
 * inuse_space, added to the totals. */
static void
rec_values(const struct ty__heap_rec *r, int64_t v[4],
           struct ty__heap_totals *tot)
{
    ty__heap_scale(r->allocs, r->alloc_bytes, r->rate, &v[0], &v[1]);
    ty__heap_scale(r->allocs - r->frees, r->alloc_bytes - r->free_bytes,
                   r->rate, &v[2], &v[3]);
    tot->alloc_objects += v[0];
    tot->alloc_bytes += v[1];
    tot->inuse_objects += v[2];
    tot->inuse_bytes += v[3];
    tot->samples++;
}

void
ty__heap_totals_of(const struct ty__heap_snap *s, struct ty__heap_totals *tot)
{
    int64_t v[4];

    *tot = (struct ty__heap_totals){0};
    for (size_t i = 0; i < s->n; i++)
        rec_values(&s->recs[i], v, tot);
}

static void
heap_sample(struct ty__pprof *p, struct ty__symbolizer *sym,
            struct map_use *use, const struct ty__heap_rec *r,
            struct ty__heap_totals *tot)
{
    uint64_t locs[TY_HEAP_MAX_DEPTH];
    int64_t v[4];
    uint32_t n = r->depth < TY_HEAP_MAX_DEPTH ? r->depth : TY_HEAP_MAX_DEPTH;

    for (uint32_t i = 0; i < n; i++)
        locs[i] = heap_location(p, sym, use, r->pcs[i], tot);
    rec_values(r, v, tot);
    ty__pprof_sample(p, locs, n, v, 4, "bytes",
                     (int64_t)(r->alloc_bytes / r->allocs));
}

static void
heap_mappings(struct ty__pprof *p, const struct ty__symbolizer *sym,
              const struct map_use *use)
{
    for (size_t i = 0; i < sym->n; i++) {
        const struct ty__mapping *m = &sym->maps[i];
        uint64_t id = ty__pprof_mapping(p, m->start, m->limit, m->offset,
                                        m->path, m->build_id);

        ty__pprof_mapping_has_functions(p, id,
                                        use[i].locs > 0 && use[i].unnamed == 0);
    }
}

void
ty__heap_totals_release(struct ty__heap_totals *tot)
{
    for (size_t i = 0; i < tot->nobjects; i++)
        free(tot->objects[i].path);
    tot->nobjects = 0;
}

/* The objects with the most unnamed frames into tot, most first (the
 * earlier mapping among equals). */
static void
heap_symobjs(const struct ty__symbolizer *sym, const struct map_use *use,
             struct ty__heap_totals *tot)
{
    for (size_t i = 0; i < sym->n; i++) {
        size_t k = tot->nobjects;
        struct ty__heap_symobj *o;

        if (use[i].unnamed == 0)
            continue;
        while (k > 0 && tot->objects[k - 1].frames < use[i].unnamed)
            k--;
        if (k == TY_HEAP_SYM_OBJECTS)
            continue;
        if (tot->nobjects == TY_HEAP_SYM_OBJECTS)
            free(tot->objects[--tot->nobjects].path);
        memmove(&tot->objects[k + 1], &tot->objects[k],
                (tot->nobjects - k) * sizeof(*o));
        o = &tot->objects[k];
        o->path = strdup(sym->maps[i].path);
        snprintf(o->build_id, sizeof(o->build_id), "%s", sym->maps[i].build_id);
        o->frames = use[i].unnamed;
        tot->nobjects++;
        if (o->path == NULL)
            ty__heap_totals_release(tot); /* none rather than some */
    }
}

static int
heap_encode(struct ty__pprof *p, void **gz, size_t *len)
{
    struct ty__buf raw;
    int r = ty__pprof_encode(p, &raw);

    if (r == 0)
        r = ty__gzip(raw.buf, raw.len, gz, len);
    ty__buf_release(&raw);
    return r;
}

int
ty__heap_profile(const struct ty__heap_snap *s, void **gz, size_t *len,
                 struct ty__heap_totals *tot)
{
    struct ty__symbolizer sym = {0};
    struct ty__pprof *p = ty__pprof_new();
    struct map_use *use;
    int r;

    *tot = (struct ty__heap_totals){0};
    if (p == NULL)
        return -ENOMEM;
    if (ty__symbolizer_init(&sym) < 0)
        sym = (struct ty__symbolizer){0};
    use = calloc(sym.n + 1, sizeof(*use));
    if (use == NULL) {
        ty__symbolizer_release(&sym);
        ty__pprof_destroy(&p);
        return -ENOMEM;
    }
    ty__pprof_sample_type(p, "alloc_objects", "count");
    ty__pprof_sample_type(p, "alloc_space", "bytes");
    ty__pprof_sample_type(p, "inuse_objects", "count");
    ty__pprof_sample_type(p, "inuse_space", "bytes");
    ty__pprof_period(p, "space", "bytes", (int64_t)s->rate);
    ty__pprof_time(p, s->time_ns);
    for (size_t i = 0; i < s->n; i++)
        heap_sample(p, &sym, use, &s->recs[i], tot);
    heap_mappings(p, &sym, use);
    heap_symobjs(&sym, use, tot);
    r = heap_encode(p, gz, len);
    free(use);
    ty__symbolizer_release(&sym);
    ty__pprof_destroy(&p);
    return r;
}
