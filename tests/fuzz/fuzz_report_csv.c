/*
 * fuzz_report_csv.c — the report's reader of an instance's memory.csv
 * (runner/report/report_csv.c): the input is g/0/memory.csv of a run folder
 * (fuzz_report.h).
 */
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct report *r = fuzz_report_new();
    struct report_inst *in = report__inst_add(r, "g", 0);
    char *path = fuzz_file("g/0/memory.csv", data, size);
    struct err err = {0};

    if (report__csv_load(r, in, &err) < 0 || fuzz_report_render(r, &err) < 0)
        fuzz_report_refusal(&err, "memory.csv");
    report_destroy(&r);
    free(path);
    return 0;
}
