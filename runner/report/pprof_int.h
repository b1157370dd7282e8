/*
 * report/pprof_int.h — a reader of pprof profiles (profile.proto, gzipped or
 * not) for the report: the sample types, the samples' values and stacks,
 * and the stacks turned into function names, so the report can total a
 * value and rank allocation sites.
 *
 * An allocation site is the first frame of a sample's stack, innermost
 * first, that is not an allocator or profiler wrapper (malloc, calloc,
 * strdup, operator new, xmalloc-style helpers, the SDK's ty__ internals):
 * the user function that asked for the memory. A site's "flat" value is
 * the sum over the samples it is the site of; its "cum" value the sum over
 * the samples with the function anywhere in the stack (counted once per
 * sample, so recursion does not count twice).
 *
 * A sample whose first frame past the allocator is testyard's own (a
 * function named ty_... or ty__..., or a static function of one of the
 * SDK's ty_*.c files: its sync buffers, its metrics, its profiler) is
 * testyard's: its site is the outermost of those frames (the SDK call
 * the plan made, or the SDK thread's entry), marked testyard, so the
 * plan's own sites are never confused with it.
 *
 * Ownership: a struct pprof_profile is the caller's (pprof__destroy); the
 * function names in a struct pprof_site are borrowed from the profile and
 * live as long as it does; the site arrays are the caller's (free).
 */
#ifndef TY_PPROF_READ_H
#define TY_PPROF_READ_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A profile decompresses to at most this many bytes. */
#define PPROF_MAX_BYTES ((size_t)512 << 20)

struct pprof_profile;

struct pprof_site {
    const char *function; /* borrowed from the profile */
    int64_t flat;
    int64_t cum;
    /* the sampled allocations behind flat: inuse_objects x (1 -
     * exp(-avg / period)) summed over its samples; -1 unknown */
    double samples;
    bool testyard;
};

/* Decode len bytes of a profile (gzip is recognised by its magic). name
 * is what error messages call it ("providers/0/heap-x.pb.gz"). NULL with
 * err (EINVAL, status 65) for a malformed profile. */
struct pprof_profile *pprof__parse(const void *data, size_t len,
                                   const char *name, struct err *err);
/* Read and decode a file. */
struct pprof_profile *pprof__read_file(const char *path, struct err *err);
void pprof__destroy(struct pprof_profile **p);

/* Index of the sample type called type ("inuse_space"), or -1. */
int pprof__value_index(const struct pprof_profile *p, const char *type);
size_t pprof__nsamples(const struct pprof_profile *p);
/* Sum of value index v over every sample (0 when v is out of range). */
int64_t pprof__total(const struct pprof_profile *p, int v);
/* time_nanos of the profile, 0 when it has none. */
int64_t pprof__time_ns(const struct pprof_profile *p);
/* The sampling period (mean bytes between samples), 0 when not given. */
int64_t pprof__period(const struct pprof_profile *p);

/* Frames the profile could not name (docs/heap-profiling.md, "Stripped
 * programs"): of its `frames` locations, `unsymbolized` have no function
 * name, and `objects` are the files they lie in, most such frames first
 * (strings borrowed from the profile; a frame outside any mapping is in
 * none). */
#define PPROF_SYM_OBJECTS 8
struct pprof_symobj {
    const char *path, *build_id; /* "" when the profile does not say */
    size_t frames;
};
struct pprof_symbols {
    size_t frames, unsymbolized;
    struct pprof_symobj objects[PPROF_SYM_OBJECTS];
    size_t nobjects;
};
void pprof__symbols(const struct pprof_profile *p, struct pprof_symbols *out);

/* Allocation sites by value v, largest flat first (then largest cum, then
 * name); sites whose flat and cum are both 0 are left out. Returns how
 * many; *out is the caller's (free; NULL when none). */
size_t pprof__sites(const struct pprof_profile *p, int v,
                    struct pprof_site **out);

/* Whether a frame of this name is an allocator wrapper, which allocation
 * sites look through. */
bool pprof__is_wrapper(const char *function);
/* Whether a frame is testyard's own code (file: its source file, "" when
 * unknown). */
bool pprof__is_testyard(const char *function, const char *file);

#endif
