/*
 * test_fuzz_found.c — what the fuzz targets in tests/fuzz/ found, one case
 * per finding, each the smallest input that showed it. Built with the
 * sanitizers like every unit test, so an undefined operation fails the
 * case as it failed the fuzzer.
 */
#include "report_int.h"
#include "th.h"
#include "th_files.h"

#include <stdlib.h>
#include <string.h>

static struct report *
report_in_tmp(void)
{
    struct report *r = xcalloc(1, sizeof(*r));

    r->run_dir = xstrdup(th_tmpdir());
    r->top = REPORT_TOP_DEFAULT;
    r->duration_s = -1;
    return r;
}

/* memory.csv with a wall-clock time in the year 6026: more nanoseconds
 * than int64_t holds. The time is unknown, the row is kept. */
static void
t_csv_time_past_2262(void)
{
    struct report *r = report_in_tmp();
    struct report_inst *in = report_inst_add(r, "g", 0);
    struct err err = {0};

    th_write(th_tmpdir(), "g/0/memory.csv",
             "time,t_ms,usage_bytes\n"
             "6026-12-01T11:58:31.650Z,122,33386496\n");
    CHECK_MSG(report_csv_load(r, in, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(in->nsamples, 1);
    CHECK_EQ_INT(r->start_ns, 0);
    CHECK_EQ_INT(report_parse_time_ns("2262-04-11T23:47:16Z"), 0);
    CHECK(report_parse_time_ns("2262-04-11T23:47:15Z") > 0);
    report_destroy(&r);
}

/* barriers.jsonl with a t_ns of 1.8e22: no time, so the line's "time"
 * is used, and without one the line is an error naming it. */
static void
t_bars_t_ns_out_of_range(void)
{
    struct report *r = report_in_tmp();
    struct err err = {0};

    th_write(th_tmpdir(), "barriers.jsonl",
             "{\"time\":\"2026-12-01T11:58:31.549Z\",\"t_ns\":"
             "17961266126311606292957,\"state\":\"ready-1\",\"target\":2,"
             "\"result\":\"released\"}\n");
    CHECK_MSG(report_bars_load(r, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(r->nbars, 1);
    CHECK_EQ_INT(r->start_ns, report_parse_time_ns("2026-12-01T11:58:31.549Z"));
    report_destroy(&r);
    r = report_in_tmp();
    th_write(th_tmpdir(), "barriers.jsonl",
             "{\"t_ns\":1e300,\"state\":\"x\",\"result\":\"released\"}\n");
    CHECK(report_bars_load(r, &err) < 0);
    CHECK_CONTAINS(err.msg, "barriers.jsonl:1: expected");
    report_destroy(&r);
}

static const struct th_case cases[] = {
    {"csv_time_past_2262", t_csv_time_past_2262},
    {"bars_t_ns_out_of_range", t_bars_t_ns_out_of_range},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
