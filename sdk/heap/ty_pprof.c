/*
 * ty_pprof.c — profile.proto writer, profile builder and gzip (see
 * ty_pprof.h; heap profiles are assembled in ty_heap_profile.c).
 *
 * The builder streams samples, locations and functions into one buffer as
 * they come (protobuf lets a message's repeated fields interleave) and adds
 * what is only known at the end — mappings, which say whether all their
 * locations were named, and the string table — when it encodes.
 */
#include "ty_hash.h"
#include "ty_pprof.h"
#include "ty_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------------------
 * Protocol buffer writer
 */

void
ty__pb_varint(struct ty__buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;

    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    ty__buf_add(b, tmp, n);
}

static void
pb_key(struct ty__buf *b, int field, int wire)
{
    ty__pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void
ty__pb_uint(struct ty__buf *b, int field, uint64_t v)
{
    if (v == 0)
        return;
    pb_key(b, field, WIRE_VARINT);
    ty__pb_varint(b, v);
}

void
ty__pb_int(struct ty__buf *b, int field, int64_t v)
{
    ty__pb_uint(b, field, (uint64_t)v);
}

void
ty__pb_bool(struct ty__buf *b, int field, bool v)
{
    ty__pb_uint(b, field, v ? 1 : 0);
}

void
ty__pb_bytes(struct ty__buf *b, int field, const void *data, size_t len)
{
    pb_key(b, field, WIRE_LEN);
    ty__pb_varint(b, len);
    ty__buf_add(b, data, len);
}

static size_t
varint_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void
ty__pb_packed(struct ty__buf *b, int field, const uint64_t *v, size_t n)
{
    size_t len = 0;

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        len += varint_len(v[i]);
    pb_key(b, field, WIRE_LEN);
    ty__pb_varint(b, len);
    for (size_t i = 0; i < n; i++)
        ty__pb_varint(b, v[i]);
}

void
ty__pb_message(struct ty__buf *b, int field, const struct ty__buf *msg)
{
    if (msg->oom)
        b->oom = true;
    ty__pb_bytes(b, field, msg->buf, msg->len);
}

/* ------------------------------------------------------------------------
 * Hash maps: uint64 -> id (ids start at 1; 0 is "absent"), and strings
 */

struct idmap {
    uint64_t *keys;
    uint64_t *ids;
    size_t cap, n;
};

static uint64_t
mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static uint64_t
idmap_get(const struct idmap *m, uint64_t key)
{
    if (m->cap == 0)
        return 0;
    for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->ids[i] == 0 || m->keys[i] == key)
            return m->ids[i];
    }
}

static int
idmap_grow(struct idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    uint64_t *ids = calloc(cap, sizeof(*ids));

    if (keys == NULL || ids == NULL) {
        free(keys);
        free(ids);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        size_t j;

        if (m->ids[i] == 0)
            continue;
        for (j = mix(m->keys[i]) & (cap - 1); ids[j] != 0;
             j = (j + 1) & (cap - 1))
            ;
        keys[j] = m->keys[i];
        ids[j] = m->ids[i];
    }
    free(m->keys);
    free(m->ids);
    m->keys = keys;
    m->ids = ids;
    m->cap = cap;
    return 0;
}

static int
idmap_put(struct idmap *m, uint64_t key, uint64_t id)
{
    size_t i;

    if ((m->n + 1) * 2 > m->cap && idmap_grow(m) < 0)
        return -ENOMEM;
    for (i = mix(key) & (m->cap - 1); m->ids[i] != 0;
         i = (i + 1) & (m->cap - 1))
        ;
    m->keys[i] = key;
    m->ids[i] = id;
    m->n++;
    return 0;
}

static void
idmap_release(struct idmap *m)
{
    free(m->keys);
    free(m->ids);
    *m = (struct idmap){0};
}

/* ------------------------------------------------------------------------
 * Profile builder
 */

struct mapping {
    uint64_t start, limit, offset;
    int64_t file, build_id;
    bool has_functions;
};

struct ty__pprof {
    struct ty__buf body;  /* samples, locations, functions */
    struct ty__buf types; /* sample types */
    char **strs;
    size_t nstrs, strcap;
    struct idmap strmap; /* hash -> index + 1, chained by probing */
    struct idmap locs, funcs;
    uint64_t nlocs, nfuncs;
    struct mapping *maps;
    size_t nmaps, mapcap;
    int64_t period_type, period_unit, period, time_ns;
    bool has_period, failed;
};

struct ty__pprof *
ty__pprof_new(void)
{
    struct ty__pprof *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->strs = calloc(64, sizeof(*p->strs));
    p->strcap = 64;
    if (p->strs == NULL || (p->strs[0] = strdup("")) == NULL) {
        free(p->strs);
        free(p);
        return NULL;
    }
    p->nstrs = 1;
    return p;
}

void
ty__pprof_destroy(struct ty__pprof **pp)
{
    struct ty__pprof *p = *pp;

    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nstrs; i++)
        free(p->strs[i]);
    free(p->strs);
    idmap_release(&p->strmap);
    idmap_release(&p->locs);
    idmap_release(&p->funcs);
    ty__buf_release(&p->body);
    ty__buf_release(&p->types);
    free(p->maps);
    free(p);
    *pp = NULL;
}

/* Strings are found by hash with linear probing over the hash key space:
 * key h, h+1, ... until the string or a free key turns up. */
int64_t
ty__pprof_str(struct ty__pprof *p, const char *s)
{
    uint64_t h;
    char *copy;

    if (s == NULL || *s == '\0')
        return 0;
    for (h = ty__fnv1a_str(TY__FNV_BASIS, s);; h++) {
        uint64_t id = idmap_get(&p->strmap, h);

        if (id == 0)
            break;
        if (strcmp(p->strs[id - 1], s) == 0)
            return (int64_t)(id - 1);
    }
    if (p->nstrs == p->strcap) {
        char **n = realloc(p->strs, p->strcap * 2 * sizeof(*n));

        if (n == NULL) {
            p->failed = true;
            return 0;
        }
        p->strs = n;
        p->strcap *= 2;
    }
    if ((copy = strdup(s)) == NULL ||
        idmap_put(&p->strmap, h, p->nstrs + 1) < 0) {
        free(copy);
        p->failed = true;
        return 0;
    }
    p->strs[p->nstrs] = copy;
    return (int64_t)p->nstrs++;
}

static void
value_type(struct ty__pprof *p, struct ty__buf *to, int field, const char *type,
           const char *unit)
{
    struct ty__buf m = {0};

    ty__pb_int(&m, VALUETYPE_TYPE, ty__pprof_str(p, type));
    ty__pb_int(&m, VALUETYPE_UNIT, ty__pprof_str(p, unit));
    ty__pb_message(to, field, &m);
    ty__buf_release(&m);
}

void
ty__pprof_sample_type(struct ty__pprof *p, const char *type, const char *unit)
{
    value_type(p, &p->types, PROFILE_SAMPLE_TYPE, type, unit);
}

void
ty__pprof_period(struct ty__pprof *p, const char *type, const char *unit,
                 int64_t period)
{
    p->period_type = ty__pprof_str(p, type);
    p->period_unit = ty__pprof_str(p, unit);
    p->period = period;
    p->has_period = true;
}

void
ty__pprof_time(struct ty__pprof *p, int64_t time_ns)
{
    p->time_ns = time_ns;
}

uint64_t
ty__pprof_mapping(struct ty__pprof *p, uint64_t start, uint64_t limit,
                  uint64_t offset, const char *file, const char *build_id)
{
    if (p->nmaps == p->mapcap) {
        size_t cap = p->mapcap ? p->mapcap * 2 : 16;
        struct mapping *n = realloc(p->maps, cap * sizeof(*n));

        if (n == NULL) {
            p->failed = true;
            return 0;
        }
        p->maps = n;
        p->mapcap = cap;
    }
    p->maps[p->nmaps] = (struct mapping){start,
                                         limit,
                                         offset,
                                         ty__pprof_str(p, file),
                                         ty__pprof_str(p, build_id),
                                         false};
    return ++p->nmaps;
}

void
ty__pprof_mapping_has_functions(struct ty__pprof *p, uint64_t id, bool has)
{
    if (id >= 1 && id <= p->nmaps)
        p->maps[id - 1].has_functions = has;
}

uint64_t
ty__pprof_function(struct ty__pprof *p, const char *name,
                   const char *system_name, const char *file)
{
    int64_t n = ty__pprof_str(p, name), f = ty__pprof_str(p, file);
    uint64_t key = (uint64_t)n << 32 | (uint64_t)f, id;
    struct ty__buf m = {0};

    if ((id = idmap_get(&p->funcs, key)) != 0)
        return id;
    id = ++p->nfuncs;
    if (idmap_put(&p->funcs, key, id) < 0)
        p->failed = true;
    ty__pb_uint(&m, FUNCTION_ID, id);
    ty__pb_int(&m, FUNCTION_NAME, n);
    ty__pb_int(&m, FUNCTION_SYSTEM_NAME,
               system_name ? ty__pprof_str(p, system_name) : n);
    ty__pb_int(&m, FUNCTION_FILENAME, f);
    ty__pb_message(&p->body, PROFILE_FUNCTION, &m);
    ty__buf_release(&m);
    return id;
}

uint64_t
ty__pprof_location_of(struct ty__pprof *p, uint64_t address)
{
    return idmap_get(&p->locs, address);
}

uint64_t
ty__pprof_location(struct ty__pprof *p, uint64_t address, uint64_t mapping_id,
                   uint64_t function_id)
{
    struct ty__buf m = {0}, line = {0};
    uint64_t id = ++p->nlocs;

    if (idmap_put(&p->locs, address, id) < 0)
        p->failed = true;
    ty__pb_uint(&m, LOCATION_ID, id);
    ty__pb_uint(&m, LOCATION_MAPPING_ID, mapping_id);
    ty__pb_uint(&m, LOCATION_ADDRESS, address);
    if (function_id != 0) {
        ty__pb_uint(&line, LINE_FUNCTION_ID, function_id);
        ty__pb_message(&m, LOCATION_LINE, &line);
    }
    ty__pb_message(&p->body, PROFILE_LOCATION, &m);
    ty__buf_release(&line);
    ty__buf_release(&m);
    return id;
}

void
ty__pprof_sample(struct ty__pprof *p, const uint64_t *locs, size_t n,
                 const int64_t *values, size_t nvalues, const char *label_key,
                 int64_t label_num)
{
    struct ty__buf m = {0}, label = {0};
    uint64_t v[16];

    for (size_t i = 0; i < nvalues && i < 16; i++)
        v[i] = (uint64_t)values[i];
    ty__pb_packed(&m, SAMPLE_LOCATION_ID, locs, n);
    ty__pb_packed(&m, SAMPLE_VALUE, v, nvalues < 16 ? nvalues : 16);
    if (label_key != NULL) {
        ty__pb_int(&label, LABEL_KEY, ty__pprof_str(p, label_key));
        ty__pb_int(&label, LABEL_NUM, label_num);
        ty__pb_message(&m, SAMPLE_LABEL, &label);
    }
    ty__pb_message(&p->body, PROFILE_SAMPLE, &m);
    ty__buf_release(&label);
    ty__buf_release(&m);
}

static void
encode_mapping(struct ty__buf *out, uint64_t id, const struct mapping *mp)
{
    struct ty__buf m = {0};

    ty__pb_uint(&m, MAPPING_ID, id);
    ty__pb_uint(&m, MAPPING_START, mp->start);
    ty__pb_uint(&m, MAPPING_LIMIT, mp->limit);
    ty__pb_uint(&m, MAPPING_OFFSET, mp->offset);
    ty__pb_int(&m, MAPPING_FILENAME, mp->file);
    ty__pb_int(&m, MAPPING_BUILD_ID, mp->build_id);
    ty__pb_bool(&m, MAPPING_HAS_FUNCTIONS, mp->has_functions);
    ty__pb_message(out, PROFILE_MAPPING, &m);
    ty__buf_release(&m);
}

int
ty__pprof_encode(struct ty__pprof *p, struct ty__buf *out)
{
    *out = (struct ty__buf){0};
    if (p->has_period) {
        struct ty__buf m = {0};

        ty__pb_int(&m, VALUETYPE_TYPE, p->period_type);
        ty__pb_int(&m, VALUETYPE_UNIT, p->period_unit);
        ty__pb_message(out, PROFILE_PERIOD_TYPE, &m);
        ty__buf_release(&m);
        ty__pb_int(out, PROFILE_PERIOD, p->period);
    }
    ty__pb_int(out, PROFILE_TIME_NANOS, p->time_ns);
    ty__buf_add(out, p->types.buf, p->types.len);
    ty__buf_add(out, p->body.buf, p->body.len);
    for (size_t i = 0; i < p->nmaps; i++)
        encode_mapping(out, i + 1, &p->maps[i]);
    for (size_t i = 0; i < p->nstrs; i++)
        ty__pb_bytes(out, PROFILE_STRING_TABLE, p->strs[i], strlen(p->strs[i]));
    if (out->oom || p->failed || p->body.oom || p->types.oom) {
        ty__buf_release(out);
        return -ENOMEM;
    }
    return 0;
}

int
ty__gzip(const void *data, size_t len, void **out, size_t *outlen)
{
    z_stream z = {0};
    size_t cap;
    void *buf;

    /* 15 + 16: a gzip wrapper. Go writes profiles at BestSpeed too. */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    cap = deflateBound(&z, (uLong)len) + 64;
    if ((buf = malloc(cap)) == NULL) {
        deflateEnd(&z);
        return -ENOMEM;
    }
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
        deflateEnd(&z);
        free(buf);
        return -EIO;
    }
    *outlen = z.total_out;
    *out = buf;
    deflateEnd(&z);
    return 0;
}
