/*
 * test_fuzz_found.c — what the fuzz targets in tests/fuzz/ found, one case
 * per finding, each the smallest input that showed it. Built with the
 * sanitizers like every unit test, so an undefined operation fails the
 * case as it failed the fuzzer.
 */
#include "base/fsat.h"
#include "config/config.h"
#include "report/pprof_int.h"
#include "report/report_int.h"
#include "th.h"
#include "th_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct report *
report_in_tmp(void)
{
    struct report *r = xcalloc(1, sizeof(*r));

    r->run_dir = xstrdup(th_tmpdir());
    r->run_fd = fsat_root(r->run_dir, NULL);
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
    struct report_inst *in = report__inst_add(r, "g", 0);
    struct err err = {0};

    th_write(th_tmpdir(), "g/0/memory.csv",
             "time,t_ms,usage_bytes\n"
             "6026-12-01T11:58:31.650Z,122,33386496\n");
    CHECK_MSG(report__csv_load(r, in, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(in->nsamples, 1);
    CHECK_EQ_INT(r->start_ns, 0);
    CHECK_EQ_INT(time_parse_rfc3339("2262-04-11T23:47:16Z"), 0);
    CHECK(time_parse_rfc3339("2262-04-11T23:47:15Z") > 0);
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
    CHECK_MSG(report__bars_load(r, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(r->nbars, 1);
    CHECK_EQ_INT(r->start_ns, time_parse_rfc3339("2026-12-01T11:58:31.549Z"));
    report_destroy(&r);
    r = report_in_tmp();
    th_write(th_tmpdir(), "barriers.jsonl",
             "{\"t_ns\":1e300,\"state\":\"x\",\"result\":\"released\"}\n");
    CHECK(report__bars_load(r, &err) < 0);
    CHECK_CONTAINS(err.msg, "barriers.jsonl:1: expected");
    report_destroy(&r);
}

/* A barrier's target of 1e300: beyond int64_t, so unknown (-1). */
static void
t_bars_target_out_of_range(void)
{
    struct report *r = report_in_tmp();
    struct err err = {0};

    th_write(th_tmpdir(), "barriers.jsonl",
             "{\"t_ns\":1796126303909239787,\"state\":\"next-1\","
             "\"target\":1e300,\"result\":\"released\"}\n");
    CHECK_MSG(report__bars_load(r, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(r->nbars, 1);
    CHECK_EQ_INT(r->bars[0].target, -1);
    report_destroy(&r);
}

/* len bytes (NULs too) to rel under th_tmpdir(). */
static void
put_bytes(const char *rel, const void *data, size_t len)
{
    cleanup_free char *path = path_join(th_tmpdir(), rel);
    cleanup_free char *dir = path_dirname(path);
    struct err err = {0};
    FILE *f;

    CHECK(mkdir_p(dir, &err) == 0);
    f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(data, 1, len, f) == len);
    if (f != NULL)
        fclose(f);
}

/* memory.csv with a t_ms of INT64_MAX next to a wall-clock time: the
 * run's start is not worked out from it. */
static void
t_csv_huge_t_ms(void)
{
    struct report *r = report_in_tmp();
    struct report_inst *in = report__inst_add(r, "g", 0);
    struct err err = {0};

    th_write(th_tmpdir(), "g/0/memory.csv",
             "time,t_ms,usage_bytes\n"
             "2026-12-01T11:58:23.898Z,9223372036854775807,5\n");
    CHECK_MSG(report__csv_load(r, in, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(in->nsamples, 1);
    CHECK_EQ_INT(r->start_ns, 0);
    report_destroy(&r);
}

/* A profile of two samples of INT64_MAX bytes each (54 bytes: one sample
 * type, inuse_space/bytes, and no stacks). */
static const char huge_profile[] =
    "\x0a\x04\x08\x01\x10\x02\x12\x0b\x12\x09\xff\xff\xff\xff\xff\xff"
    "\xff\xff\x7f\x12\x0b\x12\x09\xff\xff\xff\xff\xff\xff\xff\xff\x7f"
    "\x32\x00\x32\x0b"
    "inuse_space\x32\x05"
    "bytes";

/* Its totals are held at INT64_MAX, in the profile, in its sites and in
 * the report that adds two instances' sites together, averages their
 * round 1 and renders them. */
static void
t_pprof_sum_overflow(void)
{
    struct err err = {0};
    struct pprof_profile *p =
        pprof__parse(huge_profile, sizeof(huge_profile) - 1, "huge", &err);
    struct pprof_site *sites = NULL;
    struct report *r;
    char *html;

    CHECK_MSG(p != NULL, "%s", err.msg);
    if (p == NULL)
        return;
    r = report_in_tmp();
    CHECK_EQ_INT(pprof__total(p, 0), INT64_MAX);
    CHECK_EQ_INT(pprof__sites(p, 0, &sites), 1);
    CHECK_EQ_INT(sites[0].flat, INT64_MAX);
    free(sites);
    pprof__destroy(&p);
    for (int i = 0; i < 2; i++) {
        char rel[64];

        snprintf(rel, sizeof(rel), "g/%d/heap-round-1-post-trim.pb.gz", i);
        put_bytes(rel, huge_profile, sizeof(huge_profile) - 1);
        CHECK(report__snaps_load(r, report__inst_add(r, "g", i), &err) == 0);
    }
    report__analyse(r);
    CHECK_MSG(report__sites(r, &r->groups[0], &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(r->groups[0].sites.total, INT64_MAX);
    CHECK_EQ_INT(r->groups[0].sites.n, 1);
    CHECK_EQ_INT(r->groups[0].sites.v[0].flat, INT64_MAX);
    CHECK(r->groups[0].nrounds == 1 &&
          r->groups[0].rounds[0].heap_post == INT64_MAX / 2);
    html = report__html(r);
    CHECK(html != NULL && strstr(html, "</html>") != NULL);
    free(html);
    report_destroy(&r);
}

/* A manifest whose enum repeats a value with a line break in it: the
 * message names the value on one line. */
static void
t_manifest_value_line_break(void)
{
    cleanup_free char *path =
        th_write_tmp("p/manifest.yaml",
                     "name: p\n"
                     "build: {sources: [main.c]}\n"
                     "cases:\n"
                     "  - name: c\n"
                     "    instances: {min: 1, max: 2}\n"
                     "    params:\n"
                     "      mode: {type: enum, values: [\"a\\nb\", \"a\\nb\"],"
                     " default: \"a\\nb\"}\n");
    struct err err = {0};
    struct manifest *m = manifest_load(path, NULL, &err);

    CHECK(m == NULL);
    CHECK_CONTAINS(err.msg, "duplicate value \"a\\x0ab\"");
    CHECK(strchr(err.msg, '\n') == NULL);
    manifest_destroy(&m);
}

static const struct th_case cases[] = {
    {"csv_time_past_2262", t_csv_time_past_2262},
    {"csv_huge_t_ms", t_csv_huge_t_ms},
    {"bars_t_ns_out_of_range", t_bars_t_ns_out_of_range},
    {"bars_target_out_of_range", t_bars_target_out_of_range},
    {"pprof_sum_overflow", t_pprof_sum_overflow},
    {"manifest_value_line_break", t_manifest_value_line_break},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
