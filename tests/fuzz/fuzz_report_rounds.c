/*
 * fuzz_report_rounds.c — the report's reader of an instance's round
 * readings, memory-rounds.jsonl (runner/report/report_snap.c, with the
 * JSON-lines walker of runner/report/report_load.c): the input is the file
 * of two instances of a group, which have no heap snapshots, so every
 * round's figures come from it; they are averaged, fitted, judged and
 * rendered (fuzz_report.h).
 */
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct report *r = fuzz_report_new();
    struct err err = {0};
    int rc = 0;

    for (int i = 0; i < 2; i++) {
        struct report_inst *in = report__inst_add(r, "g", i);
        char *path = xasprintf("g/%d/memory-rounds.jsonl", i);

        free(fuzz_file(path, data, size));
        if (rc == 0)
            rc = report__snaps_load(r, in, &err);
        free(path);
    }
    if (rc < 0 || fuzz_report_render(r, &err) < 0)
        fuzz_report_refusal(&err, "memory-rounds.jsonl");
    report_destroy(&r);
    return 0;
}
