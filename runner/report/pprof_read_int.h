/*
 * report/pprof_read_int.h — the decoded profile, shared by the decoder
 * (pprof_read.c), its checks (pprof_check.c) and the site ranking
 * (pprof_sites.c). Nothing outside those files uses it.
 *
 * Everything is owned by the struct pprof_profile and freed by
 * pprof__destroy.
 */
#ifndef TY_PPROF_READ_INT_H
#define TY_PPROF_READ_INT_H

#include "report/pprof_int.h"

struct pp_sample {
    size_t loc0, nlocs; /* into slocs */
    size_t val0, nvals; /* into svals */
    int64_t lkey, lnum; /* its numeric label: key (a string), value */
    int64_t bytes;      /* that value when the key is "bytes", else -1 */
};

struct pp_loc {
    uint64_t id, mapping_id, address;
    size_t line0, nlines; /* into lines / lnames */
    const char *synth;    /* the name of a location without lines */
};

struct pp_func {
    uint64_t id;
    int64_t name, system_name, file;
};

struct pp_map {
    uint64_t id;
    uint64_t start, limit, offset; /* memory_start, memory_limit,
                                      file_offset */
    int64_t file, build_id;
    bool has_functions;
};

struct pprof_profile {
    char **strs;
    size_t nstrs, capstrs;
    int64_t *types; /* type string index per sample type */
    size_t ntypes, captypes;
    struct pp_sample *samples;
    size_t nsamples, capsamples;
    uint64_t *slocs;
    size_t nslocs, capslocs;
    int64_t *svals;
    size_t nsvals, capsvals;
    struct pp_loc *locs;
    size_t nlocs, caplocs;
    uint64_t *lines; /* function id per line */
    size_t nlines, caplines;
    const char **lnames; /* function name per line, after checking */
    const char **lfiles; /* its function's source file, "" unknown */
    struct pp_func *funcs;
    size_t nfuncs, capfuncs;
    struct pp_map *maps;
    size_t nmaps, capmaps;
    char **synth; /* names made up for frames without a function */
    size_t nsynth, capsynth;
    int64_t time_ns;
    int64_t period; /* the sampling period; 0 when not given */
};

/* Decoding state: the buffer offsets are counted from base, and errors
 * name the profile as name. */
struct dec {
    const uint8_t *base;
    const char *name;
    struct err *err;
    struct pprof_profile *prof;
};

/* Check references, turn sample location ids into indexes and name every
 * frame (pprof_check.c). 0, or -1 with d->err filled. */
int pprof__check(struct dec *d);

#endif
