/*
 * fuzz_pprof.c — the report's pprof reader (runner/report/pprof_read.c,
 * runner/report/pprof_check.c and the allocation sites of
 * runner/report/pprof_sites.c) on a profile as an instance could leave it in
 * its folder: gzipped or not, truncated, made up. A profile that decodes is
 * totalled and ranked, then read by the report as the round-1 snapshot of two
 * instances of a group, without a sidecar (runner/report/report_snap.c): their
 * figures are averaged, their sites added together and rendered
 * (fuzz_report.h).
 */
#include "fuzz_report.h"
#include "report/pprof_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
use_profile(const struct pprof_profile *p)
{
    int v = pprof__value_index(p, "inuse_space");
    struct pprof_site *sites = NULL;
    size_t n;

    (void)pprof__nsamples(p);
    (void)pprof__time_ns(p);
    for (int i = -1; i < 4; i++)
        (void)pprof__total(p, i);
    n = pprof__sites(p, v >= 0 ? v : 0, &sites);
    for (size_t i = 0; i < n; i++)
        if (sites[i].function == NULL)
            fuzz_fail("site %zu has no function name", i);
    free(sites);
}

static void
in_report(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"g/0/heap-round-1-post-trim.pb.gz",
                                        "g/1/heap-round-1-post-trim.pb.gz"};
    struct report *r = fuzz_report_new();
    struct err err = {0};
    int rc = 0;

    for (size_t i = 0; i < 2; i++) {
        struct report_inst *in = report__inst_add(r, "g", (int)i);

        free(fuzz_file(files[i], data, size));
        if (rc == 0)
            rc = report__snaps_load(r, in, &err);
    }
    if (rc < 0 || fuzz_report_render(r, &err) < 0)
        fuzz_fail("a profile that decodes is refused by the report: %s",
                  err.msg);
    report_destroy(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = {0};
    /* in a buffer of its own size, so ASan sees any overread */
    void *buf = malloc(size ? size : 1);
    struct pprof_profile *p;

    memcpy(buf, data, size);
    p = pprof__parse(buf, size, "heap-fuzz.pb.gz", &err);
    if (p == NULL && err.msg[0] == '\0')
        fuzz_fail("a refusal without a message");
    if (p != NULL) {
        use_profile(p);
        in_report(data, size);
    }
    pprof__destroy(&p);
    free(buf);
    return 0;
}
