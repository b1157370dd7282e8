/*
 * fuzz_pprof.c — the report's pprof reader (runner/pprof_read.c and the
 * allocation sites of runner/pprof_sites.c) on a profile as an instance
 * could leave it in its folder: gzipped or not, truncated, made up.
 * A profile that decodes is totalled and ranked as the report does.
 */
#include "fuzz.h"
#include "pprof_read.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
use_profile(const struct pprof_profile *p)
{
    int v = pprof_value_index(p, "inuse_space");
    struct pprof_site *sites = NULL;
    size_t n;

    (void)pprof_nsamples(p);
    (void)pprof_time_ns(p);
    for (int i = -1; i < 4; i++)
        (void)pprof_total(p, i);
    n = pprof_sites(p, v >= 0 ? v : 0, &sites);
    for (size_t i = 0; i < n; i++)
        if (sites[i].function == NULL)
            fuzz_fail("site %zu has no function name", i);
    free(sites);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = {0};
    /* in a buffer of its own size, so ASan sees any overread */
    void *buf = malloc(size ? size : 1);
    struct pprof_profile *p;

    memcpy(buf, data, size);
    p = pprof_parse(buf, size, "heap-fuzz.pb.gz", &err);
    if (p == NULL && err.msg[0] == '\0')
        fuzz_fail("a refusal without a message");
    if (p != NULL)
        use_profile(p);
    pprof_destroy(&p);
    free(buf);
    return 0;
}
