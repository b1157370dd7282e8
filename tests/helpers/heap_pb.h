/*
 * heap_pb.h — a small, independent reader of pprof profiles for tests:
 * gunzip, decode profile.proto, and check it the way pprof's
 * Profile.CheckValid and its decoder do (string table starting with "",
 * every string index in range, one value per sample type, non-zero unique
 * ids, every referenced mapping, location and function present).
 *
 * Written separately from sdk/heap/ty_pprof.c on purpose, so that the encoder's
 * tests do not trust the encoder. Everything decoded is owned by the
 * struct heap_pb; release with heap_pb_free.
 */
#ifndef TY_HEAP_PB_H
#define TY_HEAP_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_PB_MAX_LINES 8
#define HEAP_PB_MAX_TYPES 8

struct heap_pb_sample {
    uint64_t *locs;
    size_t nlocs;
    int64_t *values;
    size_t nvalues;
    int64_t label_key, label_num; /* the last numeric label, 0 if none */
};

struct heap_pb_loc {
    uint64_t id, mapping_id, address;
    uint64_t funcs[HEAP_PB_MAX_LINES]; /* function ids of its lines */
    size_t nlines;
};

struct heap_pb_func {
    uint64_t id;
    int64_t name, system_name, filename;
};

struct heap_pb_map {
    uint64_t id, start, limit, offset;
    int64_t file, build_id;
    bool has_functions;
};

struct heap_pb {
    char **strs;
    size_t nstrs;
    int64_t types[HEAP_PB_MAX_TYPES][2]; /* type, unit */
    size_t ntypes;
    int64_t period_type[2], period, time_nanos;
    struct heap_pb_sample *samples;
    size_t nsamples;
    struct heap_pb_loc *locs;
    size_t nlocs;
    struct heap_pb_func *funcs;
    size_t nfuncs;
    struct heap_pb_map *maps;
    size_t nmaps;
};

/* Inflate a gzip stream. *out is the caller's (free). 0 or -1. */
int heap_pb_gunzip(const void *gz, size_t len, uint8_t **out, size_t *outlen);
/* Decode and check. 0, or -1 with a reason in err. */
int heap_pb_decode(const uint8_t *buf, size_t len, struct heap_pb *p, char *err,
                   size_t errlen);
/* gunzip + decode. */
int heap_pb_parse_gz(const void *gz, size_t len, struct heap_pb *p, char *err,
                     size_t errlen);
void heap_pb_free(struct heap_pb *p);

/* The string at index i ("?" when out of range). */
const char *heap_pb_str(const struct heap_pb *p, int64_t i);
/* Index of the sample type named type, or -1. */
int heap_pb_type(const struct heap_pb *p, const char *type);
/* Sum of value v over all samples. */
int64_t heap_pb_total(const struct heap_pb *p, int v);
/* Sum of value v over samples with a frame in function func. */
int64_t heap_pb_sum_func(const struct heap_pb *p, const char *func, int v);
/* The same over samples with frames in both func and caller (so that one
 * test's allocations are told from another's at the same site). */
int64_t heap_pb_sum_path(const struct heap_pb *p, const char *func,
                         const char *caller, int v);
/* Whether function func appears in some sample's stack. */
bool heap_pb_has_func(const struct heap_pb *p, const char *func);

#endif
