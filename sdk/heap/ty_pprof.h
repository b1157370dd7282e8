/*
 * ty_pprof.h — pprof's profile.proto, written by hand, and gzip.
 *
 * Three layers, each usable alone (the unit tests use all three):
 *   ty__pb_*      a protocol buffer writer (varints, keys, packed fields,
 *                 nested messages) into a growable buffer;
 *   ty__pprof_*   a profile builder: a string table that starts with "",
 *                 deduplicated functions and locations, mappings, samples;
 *   ty__heap_*    a heap profile in Go's layout (alloc_objects/count,
 *                 alloc_space/bytes, inuse_objects/count, inuse_space/bytes,
 *                 period space/bytes), un-sampled with Go's estimator,
 *                 symbolized from this process's ELF files, gzipped
 *                 (ty_heap_profile.c).
 *
 * Ownership: buffers a function fills (struct ty__buf, *out) are the
 * caller's; strings passed in are copied.
 */
#ifndef TY_PPROF_H
#define TY_PPROF_H

#include "ty_buf.h"
#include "ty_heap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------
 * Protocol buffer writer into the shared buffer (ty_buf.h): a failed
 * allocation sets `oom`; later calls do nothing, and the caller checks
 * once at the end; ty__buf_release frees.
 */

void ty__pb_varint(struct ty__buf *b, uint64_t v);
/* Scalar fields; proto3 leaves out zero values, and so do these. */
void ty__pb_uint(struct ty__buf *b, int field, uint64_t v);
void ty__pb_int(struct ty__buf *b, int field, int64_t v);
void ty__pb_bool(struct ty__buf *b, int field, bool v);
/* Length-delimited: always written (an element of a repeated field). */
void ty__pb_bytes(struct ty__buf *b, int field, const void *data, size_t len);
void ty__pb_packed(struct ty__buf *b, int field, const uint64_t *v, size_t n);
void ty__pb_message(struct ty__buf *b, int field, const struct ty__buf *msg);

/* ------------------------------------------------------------------------
 * Profile builder
 */

struct ty__pprof;

struct ty__pprof *ty__pprof_new(void);
void ty__pprof_destroy(struct ty__pprof **p);

/* Index of s in the string table (added on first use; "" is 0). */
int64_t ty__pprof_str(struct ty__pprof *p, const char *s);
void ty__pprof_sample_type(struct ty__pprof *p, const char *type,
                           const char *unit);
void ty__pprof_period(struct ty__pprof *p, const char *type, const char *unit,
                      int64_t period);
void ty__pprof_time(struct ty__pprof *p, int64_t time_ns);
/* Returns the mapping's id (1, 2, ...). */
uint64_t ty__pprof_mapping(struct ty__pprof *p, uint64_t start, uint64_t limit,
                           uint64_t offset, const char *file,
                           const char *build_id);
void ty__pprof_mapping_has_functions(struct ty__pprof *p, uint64_t id,
                                     bool has);
/* A function, deduplicated on (name, file); system_name is the symbol as
 * the object file has it (NULL: same as name); file may be NULL. */
uint64_t ty__pprof_function(struct ty__pprof *p, const char *name,
                            const char *system_name, const char *file);
/* The location of an address, or 0 when it has none yet. */
uint64_t ty__pprof_location_of(struct ty__pprof *p, uint64_t address);
/* Add a location (mapping_id and function_id may be 0 for unknown). */
uint64_t ty__pprof_location(struct ty__pprof *p, uint64_t address,
                            uint64_t mapping_id, uint64_t function_id);
/* A sample; label_key NULL for none, else a numeric label. */
void ty__pprof_sample(struct ty__pprof *p, const uint64_t *locs, size_t n,
                      const int64_t *values, size_t nvalues,
                      const char *label_key, int64_t label_num);
/* The encoded profile.proto. Returns 0 or -ENOMEM. */
int ty__pprof_encode(struct ty__pprof *p, struct ty__buf *out);

/* gzip (RFC 1952) of data. *out is the caller's (free). 0 or -errno. */
int ty__gzip(const void *data, size_t len, void **out, size_t *outlen);

/* ------------------------------------------------------------------------
 * Heap profiles
 */

/* At most this many objects are named as holding unnamed frames. */
#define TY_HEAP_SYM_OBJECTS 8

/* An object file some of the profile's frames lie in without a name. */
struct ty__heap_symobj {
    char *path;        /* the caller's: ty__heap_totals_release */
    char build_id[81]; /* lowercase hex, "" when it has none */
    size_t frames;     /* its locations that have no function */
};

struct ty__heap_totals {
    int64_t alloc_objects, alloc_bytes; /* estimated, cumulative */
    int64_t inuse_objects, inuse_bytes; /* estimated, now */
    size_t samples;                     /* samples in the profile */
    size_t frames;       /* distinct locations the profile holds */
    size_t unsymbolized; /* of them, those without a function */
    /* the objects with most unnamed frames, most first (ty__heap_profile
     * only; frames outside any file mapping are in no object) */
    struct ty__heap_symobj objects[TY_HEAP_SYM_OBJECTS];
    size_t nobjects;
};

/* Free the object paths of *tot (which stays usable, with no objects). */
void ty__heap_totals_release(struct ty__heap_totals *tot);

/* Go's scaleHeapSample: count and bytes of one stack, divided by the
 * probability 1 - exp(-avg/rate) that an allocation of the stack's average
 * size was sampled. Rate 0 or 1: unchanged. */
void ty__heap_scale(uint64_t count, uint64_t bytes, uint64_t rate,
                    int64_t *est_count, int64_t *est_bytes);

/* The totals a snapshot's profile would have, without building it. */
void ty__heap_totals_of(const struct ty__heap_snap *s,
                        struct ty__heap_totals *tot);

/* The gzipped profile of a snapshot. *gz is the caller's (free), and so
 * are the object paths of *tot (ty__heap_totals_release), also on
 * failure. */
int ty__heap_profile(const struct ty__heap_snap *s, void **gz, size_t *len,
                     struct ty__heap_totals *tot);

#endif
