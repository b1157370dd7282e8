/*
 * fuzz_report_sidecar.c — the report's reader of a heap snapshot's
 * sidecar, heap-<label>.json (runner/report/report_snap.c, with the JSON
 * helpers of runner/report/report_load.c): the input is the round-1 post-trim
 * sidecar of two instances of a group, next to a small real profile, so the
 * report takes its figures from the sidecar, averages them over the instances
 * and renders them (fuzz_report.h). The second instance was OOM-killed, so
 * the sidecar is also its last profile before the kill (report_oom.c).
 */
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A profile with one sample type (inuse_space, bytes) and no samples. */
static const uint8_t profile[] = "\x0a\x04\x08\x01\x10\x02\x32\x00\x32\x0b"
                                 "inuse_space\x32\x05"
                                 "bytes";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct report *r = fuzz_report_new();
    struct err err = {0};
    int rc = 0;

    r->start_ns = 1796126311000000000LL; /* 2026-12-01T11:58:31Z */
    for (int i = 0; i < 2; i++) {
        struct report_inst *in = report__inst_add(r, "g", i);
        char *dir = xasprintf("g/%d/heap-round-1-post-trim", i);
        char *json = xasprintf("%s.json", dir);
        char *pb = xasprintf("%s.pb.gz", dir);

        free(fuzz_file(json, data, size));
        free(fuzz_file(pb, profile, sizeof(profile) - 1));
        in->oom = i == 1;
        in->oom_t_ms = i == 1 ? 5000 : -1;
        if (rc == 0)
            rc = report__snaps_load(r, in, &err);
        free(dir);
        free(json);
        free(pb);
    }
    if (rc < 0 || fuzz_report_render(r, &err) < 0)
        fuzz_report_refusal(&err, "heap-round-1-post-trim.json");
    report_destroy(&r);
    return 0;
}
