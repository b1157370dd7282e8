/*
 * test_report.c — `testyard report` and `testyard compare` on synthetic run
 * folders (test_report_synth.h): a group leaking 16 MiB per round must be
 * called growing at that rate with the leaking function first among its
 * allocation sites, and a flat one flat; an OOM kill must show in the
 * figures, the table and the page; RSS retained over a flat heap is
 * retention; a comparison with the fixed run shows what changed.
 *
 * `test_report --write-run DIR` writes the synthetic runs DIR/leaky and
 * DIR/oom and exits (the browser test renders their reports).
 */
#include "test_report_synth.h"

/* ---- cases --------------------------------------------------------------- */

static void
t_leaky_run(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cJSON *s = report_of("leaky", &leaky, &dir, &table);

    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "growing");
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.basis"), "heap_inuse");
    CHECK(fabs(at_num(s, "groups.#providers.verdict.bytes_per_round") -
               16 * MiB) < 0.5 * MiB);
    CHECK(at_num(s, "groups.#providers.growth.heap_inuse.r2") > 0.99);
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"), "growing: +1");
    CHECK_EQ_STR(at_str(s, "groups.#requestors.verdict.kind"), "flat");
    CHECK_EQ_INT(at_num(s, "groups.#requestors.instances"), 2);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "rounds")), 5);
    CHECK_EQ_INT(at_num(s, "rounds.0.start_ms"), 1000);
    CHECK_EQ_INT(at_num(s, "rounds.0.end_ms"), 1800);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "groups.#providers.rounds")), 5);
    CHECK(fabs(at_num(s, "groups.#providers.rounds.4.heap_inuse_post_bytes") -
               104 * MiB) < 1 * MiB);
    CHECK(at_num(s, "groups.#providers.rounds.4.heap_inuse_pre_bytes") >
          at_num(s, "groups.#providers.rounds.4.heap_inuse_post_bytes"));
    CHECK_EQ_INT(at_num(s, "groups.#providers.memory_limit_bytes"), 512 * MiB);
    CHECK_EQ_INT(at_num(s, "groups.#providers.oom_kills"), 0);
    CHECK_EQ_INT(at_num(s, "groups.#requestors.outcomes.success"), 2);
    CHECK_EQ_STR(at_str(s, "instances.#requestors/1.series"), "memory.csv");
    CHECK_EQ_INT(at_num(s, "instances.#requestors/1.snapshots"), 10);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "missing")), 0);
    CHECK_CONTAINS(table, "providers      growing: +1");
    CHECK_CONTAINS(table, "requestors     flat: ");
    CHECK_CONTAINS(table, "test_leak_round");
    CHECK_CONTAINS(table, "report.html");
    cJSON_Delete(s);
}

static void
t_leaky_sites(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cJSON *s = report_of("leaky", &leaky, &dir, &table);

    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.sites.0.function"),
                 "test_leak_round");
    CHECK_EQ_INT(at_num(s, "groups.#providers.top_sites.sites.0.inuse_bytes"),
                 80 * MiB);
    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.sites.1.function"),
                 "test_working_set");
    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.snapshot"),
                 "round-5-post-trim");
    CHECK(at_num(s, "groups.#providers.top_sites.sites.0.share") > 0.7);
    CHECK_EQ_STR(at_str(s, "groups.#requestors.top_sites.sites.0.function"),
                 "test_working_set");
    CHECK_EQ_INT(at_num(s, "groups.#requestors.top_sites.instances"), 2);
    CHECK(strstr(table, "xmalloc") == NULL);
    cJSON_Delete(s);
}

/* Growth by function: the leak is first, at its rate, between the first
 * and the last post-trim profiles, and the verdict names it. */
static void
t_leaky_growing_sites(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    cJSON *s = report_of("leaky", &leaky, &dir, &table);
    const char *gs = "groups.#providers.growing_sites";
    char key[128];

    snprintf(key, sizeof(key), "%s.sites.0.function", gs);
    CHECK_EQ_STR(at_str(s, key), "test_leak_round");
    snprintf(key, sizeof(key), "%s.sites.0.bytes_per_round", gs);
    CHECK(fabs(at_num(s, key) - 16 * MiB) < 0.5 * MiB);
    snprintf(key, sizeof(key), "%s.sites.0.growth_bytes", gs);
    CHECK(fabs(at_num(s, key) - 64 * MiB) < 2 * MiB);
    snprintf(key, sizeof(key), "%s.sites.0.inuse_bytes", gs);
    CHECK_EQ_INT(at_num(s, key), 80 * MiB);
    snprintf(key, sizeof(key), "%s.sites.0.single_sample", gs);
    CHECK(cJSON_IsFalse(at(s, key)));
    snprintf(key, sizeof(key), "%s.sites.0.testyard", gs);
    CHECK(cJSON_IsFalse(at(s, key)));
    snprintf(key, sizeof(key), "%s.from", gs);
    CHECK_EQ_STR(at_str(s, key), "round-1-post-trim");
    snprintf(key, sizeof(key), "%s.to", gs);
    CHECK_EQ_STR(at_str(s, key), "round-5-post-trim");
    snprintf(key, sizeof(key), "%s.rounds", gs);
    CHECK_EQ_INT(at_num(s, key), 4);
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "(heap in use: live objects accumulate; most in "
                   "test_leak_round)");
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.growing_sites.sites.0."
                           "function"),
                 "test_leak_round");
    CHECK_CONTAINS(table, "growing sites (growth of heap in use):");
    CHECK_CONTAINS(table, "providers (round-1-post-trim -> "
                          "round-5-post-trim, 4 rounds):");
    CHECK_CONTAINS(table, "+16.0 MiB/round  +64.0 MiB");
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "<h2>Growing sites</h2>");
    cJSON_Delete(s);
}

/* The SDK's sync buffer is the largest site of the flat group, but it is
 * testyard's: marked, resting on one sample, never first; the other
 * group's 8 MiB a round leak is found within 20%. */
static void
t_testyard_sites(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    cJSON *s = report_of("sync", &sync_run, &dir, &table);
    const cJSON *sites = at(s, "groups.#providers.top_sites.sites");
    const cJSON *last =
        cJSON_GetArrayItem(sites, cJSON_GetArraySize(sites) - 1);

    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.sites.0.function"),
                 "test_working_set");
    CHECK_EQ_STR(at_str(last, "function"), "ty_test_barrier");
    CHECK(cJSON_IsTrue(at(last, "testyard")));
    CHECK(cJSON_IsTrue(at(last, "single_sample")));
    CHECK_EQ_INT(at_num(last, "samples"), 1);
    CHECK_EQ_INT(at_num(last, "inuse_bytes"), 64 * MiB);
    CHECK(cJSON_IsFalse(at(s, "groups.#providers.top_sites.sites.0.testyard")));
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "flat");
    CHECK_EQ_STR(at_str(s, "groups.#requestors.verdict.kind"), "growing");
    CHECK(fabs(at_num(s, "groups.#requestors.verdict.bytes_per_round") -
               8 * MiB) < 1.6 * MiB);
    /* two instances leaking 8 MiB a round each: 16 MiB a round together */
    CHECK(fabs(at_num(s, "groups.#requestors.growing_sites.sites.0."
                         "bytes_per_round") -
               16 * MiB) < 1 * MiB);
    CHECK_EQ_INT(at_num(s, "groups.#requestors.growing_sites.instances"), 2);
    CHECK_CONTAINS(table, "ty_test_barrier (testyard) (1 sample)");
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "ty_test_barrier <small class=\"note\">(testyard)"
                         "</small>");
    CHECK_CONTAINS(html, "(1 sample)</small>");
    cJSON_Delete(s);
}

/* A group whose last profile holds only testyard's own allocations: its
 * top site is testyard's, and no function that holds nothing itself (the
 * plan's callers on the way) is listed. */
static void
t_testyard_only_sites(void)
{
    cleanup_free char *dir = make_run("idle", &fixed);
    cleanup_free char *idir = path_join(dir, "providers/0");
    cleanup_free char *table = NULL;
    struct err err = {0};
    const cJSON *sites;
    cJSON *s;

    profile(idir, "heap-round-5-post-trim.pb.gz", 0, 0, 0, 64 * MiB);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    sites = at(s, "groups.#providers.top_sites.sites");
    CHECK_EQ_INT(cJSON_GetArraySize(sites), 1);
    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.sites.0.function"),
                 "ty_test_barrier");
    CHECK(cJSON_IsTrue(at(s, "groups.#providers.top_sites.sites.0.testyard")));
    CHECK_CONTAINS(table, "ty_test_barrier (testyard)");
    cJSON_Delete(s);
}

/* A profile sampled every 512 KiB, as plans are by default: leak is the
 * bytes test_leak_round holds, noise whether test_round_scratch holds one
 * sampled 1000-byte block (scaled to about 512 KiB). */
static void
sampled_profile(const char *idir, const char *rel, int64_t leak, bool noise)
{
    static uintptr_t w[] = {PC(test_working_set)};
    static uintptr_t l[] = {PC(xmalloc), PC(test_leak_round)};
    static uintptr_t sc[] = {PC(test_round_scratch)};
    struct ty__heap_rec recs[3] = {
        {w, 1, 524288, 100, 24 * MiB, 0, 0},
        {l, 2, 524288, 64, (uint64_t)leak, 0, 0},
        {sc, 1, 524288, 1, 1000, 0, 0},
    };
    struct ty__heap_snap snap = {recs, noise ? 3 : 2, 3, 524288, START_NS};
    struct ty__heap_totals tot;
    void *gz = NULL;
    size_t len = 0;

    CHECK_EQ_INT(ty__heap_profile(&snap, &gz, &len, &tot), 0);
    put(idir, rel, gz, len);
    free(gz);
}

/* Growing sites leave out growth within one sampling period: a block
 * sampled once that came along between two profiles is noise, a leak of
 * 16 MiB is not. */
static void
t_growing_sites_noise(void)
{
    cleanup_free char *dir = make_run("noise", &fixed);
    cleanup_free char *idir = path_join(dir, "providers/0");
    cleanup_free char *table = NULL;
    struct err err = {0};
    const cJSON *sites;
    cJSON *s;

    sampled_profile(idir, "heap-round-1-post-trim.pb.gz", 4 * MiB, false);
    sampled_profile(idir, "heap-round-5-post-trim.pb.gz", 20 * MiB, true);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    sites = at(s, "groups.#providers.growing_sites.sites");
    CHECK_EQ_INT(cJSON_GetArraySize(sites), 1);
    CHECK_EQ_STR(at_str(s, "groups.#providers.growing_sites.sites.0.function"),
                 "test_leak_round");
    CHECK_CONTAINS(table, "growing sites");
    CHECK(strstr(strstr(table, "growing sites") ?: "", "test_round_scratch") ==
          NULL);
    cJSON_Delete(s);
}

/* The peak sites come from each instance's snapshot with the most heap in
 * use; a round-N-peak snapshot is one of those, never the round's
 * post-trim reading. */
static void
t_peak_sites(void)
{
    cleanup_free char *dir = make_run("peaky", &fixed);
    cleanup_free char *idir = path_join(dir, "providers/0");
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    struct err err = {0};
    cJSON *s;

    snapshot(&fixed_groups[0], idir, "round-3-peak", 3, 300 * MiB, 320 * MiB,
             24 * MiB, 276 * MiB, 0);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_STR(at_str(s, "groups.#providers.peak_sites.snapshot"),
                 "round-3-peak");
    CHECK_EQ_STR(at_str(s, "groups.#providers.peak_sites.sites.0.function"),
                 "test_round_scratch");
    CHECK_EQ_INT(at_num(s, "groups.#providers.peak_sites.sites.0.inuse_bytes"),
                 276 * MiB);
    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.sites.0.function"),
                 "test_working_set");
    CHECK(fabs(at_num(s, "groups.#providers.rounds.2.heap_inuse_post_bytes") -
               24 * MiB) < 2 * MiB);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "flat");
    CHECK_EQ_INT(at_num(s, "groups.#requestors.peak_sites.instances"), 2);
    CHECK_EQ_STR(at_str(s, "groups.#requestors.peak_sites.sites.0.function"),
                 "test_working_set");
    CHECK_CONTAINS(table, "at the peak (the snapshot with the most heap");
    CHECK_CONTAINS(table, "providers (round-3-peak):");
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "<h3>At the peak</h3>");
    cJSON_Delete(s);
}

static void
t_leaky_html(void)
{
    cleanup_free char *dir = make_run("leaky", &leaky);
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    struct err err = {0};

    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    html = slurp(dir, "report.html");
    CHECK(html != NULL);
    CHECK_CONTAINS(html, "<!DOCTYPE html>");
    CHECK_CONTAINS(html, "<svg class=\"chart\"");
    CHECK_CONTAINS(html, "aria-label=\"memory usage of every instance");
    CHECK_CONTAINS(html, "aria-label=\"heap in use and RSS per round");
    CHECK_CONTAINS(html, "<polyline stroke=\"#2563eb\" points=\"");
    CHECK_CONTAINS(html, "<polyline stroke=\"#ea580c\" points=\"");
    CHECK_CONTAINS(html, ">R1</text>");
    CHECK_CONTAINS(html, ">R5</text>");
    CHECK_CONTAINS(html, "providers limit 512.0 MiB");
    CHECK_CONTAINS(html, "test_leak_round");
    CHECK_CONTAINS(html, "least-squares line");
    CHECK_CONTAINS(html, "barrier ready released");
    CHECK(strstr(html, "<script") == NULL);
    CHECK(strstr(html, "http://") == NULL || strstr(html, "http://www.w3.org"));
    CHECK(strstr(html, "https://") == NULL);
}

static void
t_oom_run(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    cJSON *s = report_of("oom", &oom, &dir, &table);

    CHECK_EQ_STR(at_str(s, "outcome"), "failure");
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.outcome"), "oom");
    CHECK(cJSON_IsTrue(at(s, "instances.#providers/0.oom_kill")));
    CHECK_EQ_INT(at_num(s, "instances.#providers/0.oom_at_ms"), 3400);
    CHECK(at_num(s, "instances.#providers/0.usage_before_oom_bytes") >
          80 * MiB);
    CHECK_EQ_INT(at_num(s, "groups.#providers.oom_kills"), 1);
    CHECK_EQ_INT(at_num(s, "groups.#providers.peak_bytes"), 96 * MiB);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"),
                 "not enough rounds");
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "(2 rounds; needs 3)");
    CHECK_EQ_STR(at_str(s, "barriers.6.result"), "failed");
    CHECK_EQ_STR(at_str(s, "groups.#providers.top_sites.snapshot"),
                 "round-2-post-trim");
    CHECK_CONTAINS(table, "OOM kills:");
    CHECK_CONTAINS(table, "providers/0      killed at 3.4 s");
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "OOM providers/0</text>");
    CHECK_CONTAINS(html, "barrier finish-3 failed");
    cJSON_Delete(s);
}

static void
t_retention_run(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cJSON *s = report_of("retain", &retain, &dir, &table);

    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "retention");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.heap_inuse.trend"),
                 "flat");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.rss.trend"), "growing");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.malloc_free.trend"),
                 "growing");
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "retention or fragmentation: RSS +");
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "while heap in use is flat (malloc keeps freed memory, "
                   "not leaked)");
    CHECK_CONTAINS(table, "retention or fragmentation");
    CHECK(fabs(at_num(s, "groups.#providers.rounds.0.malloc_free_bytes") -
               9 * MiB) < 0.1 * MiB);
    cJSON_Delete(s);
}

/* Reports are replaced whole: a second run gives the same summary. */
static void
t_regenerate(void)
{
    cleanup_free char *dir = make_run("again", &leaky);
    cleanup_free char *t1 = NULL, *t2 = NULL, *a = NULL, *b = NULL;
    struct err err = {0};

    CHECK_EQ_INT(generate(dir, &t1, &err), 0);
    a = slurp(dir, "summary.json");
    CHECK_EQ_INT(generate(dir, &t2, &err), 0);
    b = slurp(dir, "summary.json");
    CHECK(a && b && strcmp(a, b) == 0);
    CHECK_EQ_STR(t1, t2);
}

static void
t_compare(void)
{
    cleanup_free char *da = make_run("before", &leaky);
    cleanup_free char *db = make_run("after", &fixed);
    struct err err = {0};
    struct report *a = report_build(da, NULL, &err);
    struct report *b = report_build(db, NULL, &err);
    cleanup_free char *json = NULL, *html = NULL, *text = NULL;
    FILE *f = tmpfile();
    cJSON *j;
    long n;

    CHECK_MSG(a && b, "%s", err.msg);
    if (a == NULL || b == NULL)
        goto out;
    json = report_compare_json(a, b);
    j = cJSON_Parse(json);
    CHECK_EQ_STR(at_str(j, "groups.#providers.verdict_a"), "growing");
    CHECK_EQ_STR(at_str(j, "groups.#providers.verdict_b"), "flat");
    CHECK(fabs(at_num(j, "groups.#providers.heap_bytes_per_round.diff") +
               16 * MiB) < 0.6 * MiB);
    CHECK(at_num(j, "groups.#providers.peak_bytes.diff") < -60 * MiB);
    CHECK_EQ_STR(at_str(j, "groups.#providers.sites.0.function"),
                 "test_leak_round");
    CHECK_EQ_INT(at_num(j, "groups.#providers.sites.0.a_bytes"), 80 * MiB);
    CHECK_EQ_INT(at_num(j, "groups.#providers.sites.0.b_bytes"), 0);
    CHECK_EQ_STR(at_str(j, "groups.#providers.growing_sites.0.function"),
                 "test_leak_round");
    CHECK(fabs(at_num(j, "groups.#providers.growing_sites.0."
                         "a_bytes_per_round") -
               16 * MiB) < 0.5 * MiB);
    CHECK(cJSON_IsTrue(at(j, "groups.#requestors.in_b")));
    cJSON_Delete(j);
    html = report_compare_html(a, b);
    CHECK_CONTAINS(html, "Comparison of two runs");
    CHECK_CONTAINS(html, "class=\"n down\">-80.0 MiB");
    report_compare_print(a, b, f);
    n = ftell(f);
    rewind(f);
    text = xcalloc(1, (size_t)n + 1);
    CHECK_EQ_INT(fread(text, 1, (size_t)n, f), n);
    CHECK_CONTAINS(text, "B - A");
    CHECK_CONTAINS(text, "heap in use growth");
    CHECK_CONTAINS(text, "verdict                       growing");
    CHECK_CONTAINS(text, "growing sites (bytes per round):");
    CHECK_CONTAINS(html, "Growing sites, bytes per round");
out:
    fclose(f);
    report_destroy(&a);
    report_destroy(&b);
    CHECK(a == NULL && b == NULL);
}

static const struct th_case cases[] = {
    {"leaky_run", t_leaky_run},
    {"leaky_sites", t_leaky_sites},
    {"leaky_growing_sites", t_leaky_growing_sites},
    {"testyard_sites", t_testyard_sites},
    {"leaky_html", t_leaky_html},
    {"peak_sites", t_peak_sites},
    {"testyard_only_sites", t_testyard_only_sites},
    {"growing_sites_noise", t_growing_sites_noise},
    {"oom_run", t_oom_run},
    {"retention_run", t_retention_run},
    {"regenerate", t_regenerate},
    {"compare", t_compare},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-run") == 0) {
        cleanup_free char *a = path_join(argv[2], "leaky");
        cleanup_free char *b = path_join(argv[2], "oom");

        synth_write(a, &leaky);
        synth_write(b, &oom);
        return th_failures() ? 1 : 0;
    }
    return th_main(argc, argv, cases);
}
