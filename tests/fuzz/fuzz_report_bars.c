/*
 * fuzz_report_bars.c — the report's reader of barriers.jsonl
 * (runner/report/report_bars.c, with the JSON helpers of
 * runner/report/report_load.c): the input is the run folder's barriers.jsonl
 * (fuzz_report.h).
 */
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct report *r = fuzz_report_new();
    char *path = fuzz_file("barriers.jsonl", data, size);
    struct err err = {0};

    (void)report__inst_add(r, "g", 0);
    if (report__bars_load(r, &err) < 0 || fuzz_report_render(r, &err) < 0)
        fuzz_report_refusal(&err, "barriers.jsonl");
    report_destroy(&r);
    free(path);
    return 0;
}
