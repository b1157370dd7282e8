/*
 * planbuild.h — compiling a test plan into a binary the backends can run.
 *
 * Plans are C sources listed in their manifest's `build` section. The
 * runner compiles them against the SDK (libtestyard.a, linked statically so
 * the heap profiler's allocator wrappers are in the binary) into a cache
 * folder named by a content hash of everything that goes into the build, so
 * an unchanged plan is not compiled again.
 */
#ifndef TY_PLANBUILD_H
#define TY_PLANBUILD_H

#include "err.h"

#include <stddef.h>

struct planbuild_spec {
    const char *name;     /* plan name */
    const char *dir;      /* plan folder */
    char *const *sources; /* relative to dir */
    size_t nsources;
    char *const *cflags;
    size_t ncflags;
    char *const *pkg_config; /* extra pkg-config packages */
    size_t npkg_config;
    char *const *ldlibs;
    size_t nldlibs;
};

/* Compile the plan (or find it in the cache) and return the binary's path
 * (caller frees). The compiler's command and output are kept as build.log
 * next to the binary, and a failed build's message names that file.
 * *cached is set to 1 when nothing had to be compiled. */
char *planbuild(const struct planbuild_spec *spec, int *cached,
                struct err *err);

/* Where plan binaries are cached: $TESTYARD_CACHE, else
 * $XDG_CACHE_HOME/testyard, else $HOME/.cache/testyard. Caller frees. */
char *planbuild_cache_dir(void);

#endif
