/*
 * heap_pb.c — pprof profile reader for tests (see heap_pb.h).
 *
 * A wire-format reader over a byte range (varints, keys, length-delimited
 * fields, packed or unpacked repeated scalars) and one function per message
 * type. Unknown fields are skipped, as any protobuf reader does.
 */
#include "heap_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* realloc for a test helper: running out of memory ends the test. */
static void *
xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);

    if (q == NULL) {
        fprintf(stderr, "heap_pb: out of memory\n");
        abort();
    }
    return q;
}

struct rd {
    const uint8_t *p, *end;
    bool bad;
};

static uint64_t
rd_varint(struct rd *r)
{
    uint64_t v = 0;

    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->bad = true;
            return 0;
        }
        v |= (uint64_t)(*r->p & 0x7f) << shift;
        if ((*r->p++ & 0x80) == 0)
            return v;
    }
    r->bad = true;
    return 0;
}

/* Next field: its number, wire type, and for wire type 2 its bytes. */
static bool
rd_field(struct rd *r, int *field, int *wire, struct rd *sub, uint64_t *v)
{
    uint64_t key, len;

    if (r->bad || r->p >= r->end)
        return false;
    key = rd_varint(r);
    *field = (int)(key >> 3);
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0:
        *v = rd_varint(r);
        break;
    case 2:
        len = rd_varint(r);
        if (len > (uint64_t)(r->end - r->p)) {
            r->bad = true;
            return false;
        }
        *sub = (struct rd){r->p, r->p + len, false};
        r->p += len;
        break;
    case 1:
    case 5:
        if ((size_t)(r->end - r->p) < (*wire == 1 ? 8u : 4u)) {
            r->bad = true;
            return false;
        }
        r->p += *wire == 1 ? 8 : 4;
        break;
    default:
        r->bad = true;
        return false;
    }
    return !r->bad;
}

/* Append one or many (packed) values of a repeated scalar. */
static void
rd_repeated(int wire, struct rd *sub, uint64_t v, uint64_t **arr, size_t *n)
{
    if (wire == 0) {
        *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
        (*arr)[(*n)++] = v;
        return;
    }
    while (wire == 2 && sub->p < sub->end && !sub->bad) {
        uint64_t x = rd_varint(sub);

        *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
        (*arr)[(*n)++] = x;
    }
}

static void
value_type(struct rd *r, int64_t out[2])
{
    int f, w;
    struct rd sub;
    uint64_t v = 0;

    while (rd_field(r, &f, &w, &sub, &v))
        if (w == 0 && (f == 1 || f == 2))
            out[f - 1] = (int64_t)v;
}

static void
label(struct rd *r, struct heap_pb_sample *s)
{
    int f, w;
    struct rd sub;
    uint64_t v = 0;

    while (rd_field(r, &f, &w, &sub, &v)) {
        if (w == 0 && f == 1)
            s->label_key = (int64_t)v;
        if (w == 0 && f == 3)
            s->label_num = (int64_t)v;
    }
}

static void
sample(struct rd *r, struct heap_pb_sample *s)
{
    int f, w;
    struct rd sub;
    uint64_t v = 0;

    while (rd_field(r, &f, &w, &sub, &v)) {
        if (f == 1)
            rd_repeated(w, &sub, v, &s->locs, &s->nlocs);
        else if (f == 2)
            rd_repeated(w, &sub, v, (uint64_t **)&s->values, &s->nvalues);
        else if (f == 3 && w == 2)
            label(&sub, s);
    }
}

static void
location(struct rd *r, struct heap_pb_loc *l)
{
    int f, w, lf, lw;
    struct rd sub, lsub;
    uint64_t v = 0, lv = 0;

    while (rd_field(r, &f, &w, &sub, &v)) {
        if (w == 0 && f == 1)
            l->id = v;
        else if (w == 0 && f == 2)
            l->mapping_id = v;
        else if (w == 0 && f == 3)
            l->address = v;
        else if (w == 2 && f == 4 && l->nlines < HEAP_PB_MAX_LINES) {
            l->funcs[l->nlines] = 0;
            while (rd_field(&sub, &lf, &lw, &lsub, &lv))
                if (lw == 0 && lf == 1)
                    l->funcs[l->nlines] = lv;
            l->nlines++;
        }
    }
}

static void
function(struct rd *r, struct heap_pb_func *fn)
{
    int f, w;
    struct rd sub;
    uint64_t v = 0;

    while (rd_field(r, &f, &w, &sub, &v)) {
        if (w != 0)
            continue;
        if (f == 1)
            fn->id = v;
        else if (f == 2)
            fn->name = (int64_t)v;
        else if (f == 3)
            fn->system_name = (int64_t)v;
        else if (f == 4)
            fn->filename = (int64_t)v;
    }
}

static void
mapping(struct rd *r, struct heap_pb_map *m)
{
    int f, w;
    struct rd sub;
    uint64_t v = 0;

    while (rd_field(r, &f, &w, &sub, &v)) {
        if (w != 0)
            continue;
        switch (f) {
        case 1:
            m->id = v;
            break;
        case 2:
            m->start = v;
            break;
        case 3:
            m->limit = v;
            break;
        case 4:
            m->offset = v;
            break;
        case 5:
            m->file = (int64_t)v;
            break;
        case 6:
            m->build_id = (int64_t)v;
            break;
        case 7:
            m->has_functions = v != 0;
            break;
        default:
            break;
        }
    }
}

#define GROW(arr, n)                                                           \
    ((arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr))),                      \
     memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

static void
profile_field(struct heap_pb *p, int f, int w, struct rd *sub, uint64_t v)
{
    if (f == 1 && w == 2 && p->ntypes < HEAP_PB_MAX_TYPES)
        value_type(sub, p->types[p->ntypes++]);
    else if (f == 2 && w == 2)
        sample(sub, GROW(p->samples, p->nsamples));
    else if (f == 3 && w == 2)
        mapping(sub, GROW(p->maps, p->nmaps));
    else if (f == 4 && w == 2)
        location(sub, GROW(p->locs, p->nlocs));
    else if (f == 5 && w == 2)
        function(sub, GROW(p->funcs, p->nfuncs));
    else if (f == 6 && w == 2) {
        char **s = GROW(p->strs, p->nstrs);
        size_t len = (size_t)(sub->end - sub->p);

        *s = malloc(len + 1);
        memcpy(*s, sub->p, len);
        (*s)[len] = '\0';
    } else if (f == 9 && w == 0)
        p->time_nanos = (int64_t)v;
    else if (f == 11 && w == 2)
        value_type(sub, p->period_type);
    else if (f == 12 && w == 0)
        p->period = (int64_t)v;
}

/* ------------------------------------------------------------------------
 * Checks
 */

static bool
str_ok(const struct heap_pb *p, int64_t i)
{
    return i >= 0 && (size_t)i < p->nstrs;
}

static bool
has_id(const void *arr, size_t n, size_t size, uint64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (*(const uint64_t *)((const char *)arr + i * size) == id)
            return true;
    return false;
}

static bool
unique_ids(const void *arr, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t id = *(const uint64_t *)((const char *)arr + i * size);

        if (id == 0 || has_id(arr, i, size, id))
            return false;
    }
    return true;
}

static const char *
check_samples(const struct heap_pb *p)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (!str_ok(p, p->types[i][0]) || !str_ok(p, p->types[i][1]))
            return "sample type string out of range";
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct heap_pb_sample *s = &p->samples[i];

        if (s->nvalues != p->ntypes)
            return "sample value count differs from sample types";
        for (size_t j = 0; j < s->nlocs; j++)
            if (!has_id(p->locs, p->nlocs, sizeof(*p->locs), s->locs[j]))
                return "sample refers to a missing location";
        if (!str_ok(p, s->label_key))
            return "label key out of range";
    }
    return NULL;
}

static const char *
check_locations(const struct heap_pb *p)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        const struct heap_pb_loc *l = &p->locs[i];

        if (l->mapping_id != 0 &&
            !has_id(p->maps, p->nmaps, sizeof(*p->maps), l->mapping_id))
            return "location refers to a missing mapping";
        for (size_t j = 0; j < l->nlines; j++)
            if (!has_id(p->funcs, p->nfuncs, sizeof(*p->funcs), l->funcs[j]))
                return "line refers to a missing function";
    }
    return NULL;
}

static const char *
check_strings(const struct heap_pb *p)
{
    for (size_t i = 0; i < p->nfuncs; i++)
        if (!str_ok(p, p->funcs[i].name) ||
            !str_ok(p, p->funcs[i].system_name) ||
            !str_ok(p, p->funcs[i].filename))
            return "function string out of range";
    for (size_t i = 0; i < p->nmaps; i++)
        if (!str_ok(p, p->maps[i].file) || !str_ok(p, p->maps[i].build_id))
            return "mapping string out of range";
    if (!str_ok(p, p->period_type[0]) || !str_ok(p, p->period_type[1]))
        return "period type string out of range";
    return NULL;
}

static const char *
check(const struct heap_pb *p)
{
    const char *why;

    if (p->nstrs == 0 || p->strs[0][0] != '\0')
        return "string table does not start with \"\"";
    if (!unique_ids(p->maps, p->nmaps, sizeof(*p->maps)) ||
        !unique_ids(p->locs, p->nlocs, sizeof(*p->locs)) ||
        !unique_ids(p->funcs, p->nfuncs, sizeof(*p->funcs)))
        return "an id is 0 or not unique";
    if ((why = check_samples(p)) != NULL || (why = check_locations(p)) != NULL)
        return why;
    return check_strings(p);
}

int
heap_pb_decode(const uint8_t *buf, size_t len, struct heap_pb *p, char *err,
               size_t errlen)
{
    struct rd r = {buf, buf + len, false}, sub = {0};
    int f, w;
    uint64_t v = 0;
    const char *why;

    memset(p, 0, sizeof(*p));
    while (rd_field(&r, &f, &w, &sub, &v))
        profile_field(p, f, w, &sub, v);
    why = r.bad ? "malformed wire format" : check(p);
    if (why != NULL) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

int
heap_pb_gunzip(const void *gz, size_t len, uint8_t **out, size_t *outlen)
{
    z_stream z = {0};
    size_t cap = len * 4 + 1024;
    uint8_t *buf = malloc(cap);
    int r;

    if (buf == NULL || inflateInit2(&z, 15 + 16) != Z_OK) {
        free(buf);
        return -1;
    }
    z.next_in = (Bytef *)(uintptr_t)gz;
    z.avail_in = (uInt)len;
    do {
        if (z.total_out == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        z.next_out = buf + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        r = inflate(&z, Z_NO_FLUSH);
    } while (r == Z_OK);
    *outlen = z.total_out;
    inflateEnd(&z);
    if (r != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

int
heap_pb_parse_gz(const void *gz, size_t len, struct heap_pb *p, char *err,
                 size_t errlen)
{
    uint8_t *raw;
    size_t n;
    int r;

    memset(p, 0, sizeof(*p));
    if (heap_pb_gunzip(gz, len, &raw, &n) < 0) {
        snprintf(err, errlen, "not a gzip stream");
        return -1;
    }
    r = heap_pb_decode(raw, n, p, err, errlen);
    free(raw);
    return r;
}

void
heap_pb_free(struct heap_pb *p)
{
    for (size_t i = 0; i < p->nstrs; i++)
        free(p->strs[i]);
    for (size_t i = 0; i < p->nsamples; i++) {
        free(p->samples[i].locs);
        free(p->samples[i].values);
    }
    free(p->strs);
    free(p->samples);
    free(p->locs);
    free(p->funcs);
    free(p->maps);
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------------------
 * Queries
 */

const char *
heap_pb_str(const struct heap_pb *p, int64_t i)
{
    return str_ok(p, i) ? p->strs[i] : "?";
}

int
heap_pb_type(const struct heap_pb *p, const char *type)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (strcmp(heap_pb_str(p, p->types[i][0]), type) == 0)
            return (int)i;
    return -1;
}

int64_t
heap_pb_total(const struct heap_pb *p, int v)
{
    int64_t sum = 0;

    for (size_t i = 0; i < p->nsamples && v >= 0; i++)
        if ((size_t)v < p->samples[i].nvalues)
            sum += p->samples[i].values[v];
    return sum;
}

static const struct heap_pb_loc *
find_loc(const struct heap_pb *p, uint64_t id)
{
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i].id == id)
            return &p->locs[i];
    return NULL;
}

static bool
loc_in_func(const struct heap_pb *p, const struct heap_pb_loc *l,
            const char *func)
{
    for (size_t j = 0; l != NULL && j < l->nlines; j++)
        for (size_t k = 0; k < p->nfuncs; k++)
            if (p->funcs[k].id == l->funcs[j] &&
                strcmp(heap_pb_str(p, p->funcs[k].name), func) == 0)
                return true;
    return false;
}

static bool
sample_in_func(const struct heap_pb *p, const struct heap_pb_sample *s,
               const char *func)
{
    for (size_t j = 0; j < s->nlocs; j++)
        if (loc_in_func(p, find_loc(p, s->locs[j]), func))
            return true;
    return false;
}

int64_t
heap_pb_sum_path(const struct heap_pb *p, const char *func, const char *caller,
                 int v)
{
    int64_t sum = 0;

    for (size_t i = 0; i < p->nsamples && v >= 0; i++)
        if ((size_t)v < p->samples[i].nvalues &&
            sample_in_func(p, &p->samples[i], func) &&
            (caller == NULL || sample_in_func(p, &p->samples[i], caller)))
            sum += p->samples[i].values[v];
    return sum;
}

int64_t
heap_pb_sum_func(const struct heap_pb *p, const char *func, int v)
{
    return heap_pb_sum_path(p, func, NULL, v);
}

bool
heap_pb_has_func(const struct heap_pb *p, const char *func)
{
    for (size_t i = 0; i < p->nsamples; i++)
        if (sample_in_func(p, &p->samples[i], func))
            return true;
    return false;
}
