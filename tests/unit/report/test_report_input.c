/*
 * test_report_input.c — the report on run folders with pieces missing or
 * malformed (test_report_synth.h builds them): no result.json, no
 * barriers.jsonl, an instance that never started, no heap snapshots, a
 * memory.csv cut short or left .partial, an empty or absent folder — each
 * still gets a report that says what is missing (or a clear status 66) —
 * and malformed files, each an error naming the file and line with status
 * 65 and no report written.
 */
#include "test_report_synth.h"

static void
rm_heap_files(const char *idir)
{
    for (int r = 1; r <= 6; r++)
        for (int k = 0; k < 4; k++) {
            cleanup_free char *p =
                xasprintf("%s/heap-round-%d-%s-trim.%s", idir, r,
                          k & 1 ? "pre" : "post", k & 2 ? "json" : "pb.gz");

            unlink(p);
        }
}

/* Those of the three instances of a `leaky` run. */
static void
rm_all_heap_files(const char *dir)
{
    for (int i = 0; i < 3; i++) {
        cleanup_free char *idir = xasprintf(
            "%s/%s/%d", dir, i ? "requestors" : "providers", i ? i - 1 : 0);

        rm_heap_files(idir);
    }
}

/* No result.json and no barriers.jsonl: groups from composition.json,
 * instances from the folders, and notes saying what is missing. */
static void
t_missing_result(void)
{
    cleanup_free char *dir = make_run("nores", &leaky);
    cleanup_free char *table = NULL;
    cleanup_free char *p1 = path_join(dir, "result.json");
    cleanup_free char *p2 = path_join(dir, "barriers.jsonl");
    struct err err = {0};
    cJSON *s;

    unlink(p1);
    unlink(p2);
    put_text(dir, "composition.json",
             "{\"plan\": \"memory-stress\", \"case\": \"stress\", "
             "\"runner\": \"local:exec\", \"groups\": [{\"id\": "
             "\"providers\", \"instances\": 1, \"resources\": "
             "{\"memory_bytes\": 536870912}}]}");
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(cJSON_IsFalse(at(s, "finished")));
    CHECK_EQ_STR(at_str(s, "outcome"), "unknown");
    CHECK_EQ_STR(at_str(s, "plan"), "memory-stress");
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "instances")), 3);
    CHECK_EQ_STR(at_str(s, "instances.#requestors/1.outcome"), "unknown");
    CHECK_EQ_INT(at_num(s, "groups.#providers.memory_limit_bytes"), 512 * MiB);
    CHECK(at_num(s, "instances.#providers/0.peak_bytes") > 100 * MiB);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "growing");
    CHECK(has_note(s, "result.json is missing"));
    CHECK(has_note(s, "barriers.jsonl is missing"));
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "rounds")), 0);
    CHECK_CONTAINS(table, "missing or incomplete:");
    cJSON_Delete(s);
}

/* An instance that never started, one without heap files, one whose
 * series is a .partial file, and a memory.csv cut in the middle of its
 * last line. */
static void
t_missing_pieces(void)
{
    cleanup_free char *dir = make_run("holes", &oom);
    cleanup_free char *res = slurp(dir, "result.json");
    cleanup_free char *csv = path_join(dir, "providers/0/memory.csv");
    cleanup_free char *r0 = path_join(dir, "requestors/0");
    cleanup_free char *part = path_join(dir, "requestors/0/memory.csv.part"
                                             "ial");
    cleanup_free char *table = NULL;
    cleanup_free char *text = NULL;
    char *end = strstr(res, "\t}]\n}");
    struct err err = {0};
    size_t len;
    cJSON *s;

    CHECK(end != NULL);
    if (end == NULL)
        return;
    *end = '\0';
    text = xasprintf("%s\t}, {\"group\": \"requestors\", \"index\": 1, "
                     "\"outcome\": \"failure\", \"started\": null, \"error\":"
                     " \"failed to start: exec format error\", \"memory\": "
                     "null}]\n}\n",
                     res);
    put_text(dir, "result.json", text);
    free(text);
    rm_heap_files(r0);
    text = file_read(csv, 1 << 20, &len, NULL);
    put(dir, "providers/0/memory.csv", text, len - 20);
    free(text);
    text = path_join(r0, "memory.csv");
    CHECK_EQ_INT(rename(text, part), 0);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(has_note(s, "requestors/1 never started: failed to start: exec"));
    CHECK(has_note(s, "providers/0/memory.csv:36: the last line is cut "
                      "short"));
    CHECK(has_note(s, "requestors/0: only memory.csv.partial"));
    CHECK_EQ_STR(at_str(s, "instances.#requestors/0.series"),
                 "memory.csv.partial");
    CHECK(cJSON_IsFalse(at(s, "instances.#requestors/1.started")));
    CHECK(cJSON_IsNull(at(s, "instances.#requestors/1.peak_bytes")));
    CHECK_EQ_INT(at_num(s, "groups.#requestors.outcomes.failure"), 1);
    /* Round 3 ended when its barrier failed: the live requestor has
     * three rounds of cgroup usage. */
    CHECK_CONTAINS(at_str(s, "groups.#requestors.verdict.text"),
                   "(cgroup usage; no heap snapshots)");
    CHECK_EQ_INT(at_num(s, "groups.#requestors.growth.cgroup.rounds"), 3);
    CHECK(cJSON_IsTrue(at(s, "rounds.2.failed")));
    CHECK_EQ_INT(at_num(s, "groups.#requestors.top_sites.instances"), 0);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.outcome"), "oom");
    cJSON_Delete(s);
}

/* Instances can write their folders: a memory.csv or a heap sidecar that
 * is a link to a host file is noted and not read, so the host file never
 * reaches the report; the runner's unfinished series in .runner is. */
static void
t_planted_links(void)
{
    cleanup_free char *dir = make_run("links", &leaky);
    cleanup_free char *secret = path_join(dir, "../links-secret");
    cleanup_free char *csv = path_join(dir, "providers/0/memory.csv");
    cleanup_free char *side = NULL;
    cleanup_free char *runner = path_join(dir, ".runner/requestors/0");
    cleanup_free char *r0 = path_join(dir, "requestors/0/memory.csv");
    cleanup_free char *part = path_join(runner, "memory.csv.partial");
    cleanup_free char *html = NULL;
    cleanup_free char *table = NULL;
    struct err err = {0};
    cJSON *s;

    put_text(dir, "../links-secret", "root:SECRET-HASH:19000:0:99999:7:::\n");
    side = xasprintf("%s/providers/0/heap-round-1-post-trim.json", dir);
    CHECK(unlink(csv) == 0 && symlink(secret, csv) == 0);
    CHECK(unlink(side) == 0 && symlink(secret, side) == 0);
    CHECK(mkdir_p(runner, &err) == 0);
    CHECK(rename(r0, part) == 0);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(has_note(s, "providers/0/memory.csv: not read: a symbolic link"));
    CHECK(has_note(s, "providers/0/heap-round-1-post-trim.json: not read"));
    CHECK_EQ_STR(at_str(s, "instances.#requestors/0.series"),
                 "memory.csv.partial");
    html = slurp(dir, "report.html");
    CHECK(html != NULL && strstr(html, "SECRET-HASH") == NULL);
    CHECK(strstr(table, "SECRET-HASH") == NULL);
    cJSON_Delete(s);
}

/* No heap snapshots anywhere: the verdict rests on cgroup usage at the
 * rounds' ends, and the page says there are no profiles. */
static void
t_no_heap(void)
{
    cleanup_free char *dir = make_run("noheap", &leaky);
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    struct err err = {0};
    cJSON *s;

    rm_all_heap_files(dir);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "growing");
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.basis"), "cgroup");
    CHECK(fabs(at_num(s, "groups.#providers.verdict.bytes_per_round") -
               16.5 * MiB) < 0.5 * MiB);
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "cgroup usage; no heap snapshots");
    CHECK_EQ_STR(at_str(s, "groups.#requestors.verdict.kind"), "flat");
    CHECK_EQ_INT(at_num(s, "groups.#providers.growth.heap_inuse.rounds"), 0);
    CHECK_EQ_INT(at_num(s, "groups.#providers.growth.cgroup.rounds"), 5);
    CHECK(has_note(s, "no heap snapshots"));
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "No heap profiles");
    CHECK_CONTAINS(html, "class=\"rl cg\"");
    cJSON_Delete(s);
}

/* Sidecars of a profiler that never sampled (a plan without the malloc
 * interposer): their zero heap is unknown, not flat, and cgroup usage
 * decides. */
static void
t_empty_profiles(void)
{
    cleanup_free char *dir = make_run("empty-prof", &leaky);
    cleanup_free char *table = NULL;
    struct err err = {0};
    cJSON *s;

    for (int r = 1; r <= 5; r++)
        for (int k = 0; k < 2; k++) {
            cleanup_free char *rel =
                xasprintf("providers/0/heap-round-%d-%s-trim.json", r,
                          k ? "pre" : "post");
            cleanup_free char *json = xasprintf(
                "{\"round\": %d, \"rss_bytes\": %lld, \"profile\": "
                "{\"inuse_bytes\": 0, \"alloc_objects\": 0, \"samples\": "
                "0}}",
                r, (long long)(40 * MiB + r * 16 * MiB));

            put_text(dir, rel, json);
        }
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(has_note(s, "providers/0: 10 heap profiles sampled no allocation"));
    CHECK_EQ_INT(at_num(s, "groups.#providers.growth.heap_inuse.rounds"), 0);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.basis"), "cgroup");
    CHECK(fabs(at_num(s, "groups.#providers.verdict.bytes_per_round") -
               16.5 * MiB) < 0.5 * MiB);
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "growing: +16.");
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "(cgroup usage; the heap profiles are empty)");
    CHECK_EQ_STR(at_str(s, "groups.#requestors.verdict.basis"), "heap_inuse");
    cJSON_Delete(s);
}

/* Add "profiler_resident_bytes": r * per_round to every sidecar of
 * providers/0 (rounds 1..n). */
static void
add_profiler_resident(const char *dir, int n, int64_t per_round)
{
    for (int r = 1; r <= n; r++)
        for (int k = 0; k < 2; k++) {
            cleanup_free char *rel =
                xasprintf("providers/0/heap-round-%d-%s-trim.json", r,
                          k ? "pre" : "post");
            cleanup_free char *text = slurp(dir, rel);
            char *at = text ? strstr(text, "\"samples\": 3}") : NULL;
            cleanup_free char *json = NULL;

            CHECK(at != NULL);
            if (at == NULL)
                return;
            at[strlen("\"samples\": 3")] = '\0';
            json = xasprintf("%s, \"profiler_bytes\": %lld, "
                             "\"profiler_resident_bytes\": %lld}%s",
                             text, (long long)(r * per_round + 4 * MiB),
                             (long long)(r * per_round), at + 13);
            put_text(dir, rel, json);
        }
}

/* RSS is the process's own, the profiler's tables included; when only
 * they grow (the resident part, profiler_resident_bytes) RSS grows but
 * the plan does not: flat, and the verdict says whose it is. */
static void
t_profiler_resident(void)
{
    cleanup_free char *dir = make_run("own", &mmap_run);
    cleanup_free char *table = NULL;
    struct err err = {0};
    cJSON *s;

    add_profiler_resident(dir, 6, 8 * MiB);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_INT(at_num(s, "version"), 2);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "flat");
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "is the heap profiler's own tables");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.rss.trend"), "growing");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.outside.trend"), "flat");
    /* 40 MiB + 8 MiB in round 1: the real RSS, nothing taken out */
    CHECK(fabs(at_num(s, "groups.#providers.rounds.0.rss_post_bytes") -
               48 * MiB) < 1 * MiB);
    CHECK_EQ_INT(
        at_num(s, "groups.#providers.rounds.0.profiler_resident_bytes"),
        8 * MiB);
    CHECK_EQ_INT(
        at_num(s, "instances.#providers/0.rounds.2.profiler_resident_bytes"),
        24 * MiB);
    cJSON_Delete(s);
}

/* Without the profiler's tables the same run grows outside malloc, and
 * an RSS small enough to be less than the profiler's mapped tables still
 * reads as itself, never 0. */
static void
t_outside_malloc_run(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = report_of("mmap", &mmap_run, &dir, &table);

    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "outside_malloc");
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.basis"), "rss");
    CHECK(fabs(at_num(s, "groups.#providers.verdict.bytes_per_round") -
               8 * MiB) < 1.6 * MiB);
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "growing outside malloc: RSS +");
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "while heap in use and malloc's arena are flat (mmap, "
                   "thread stacks or another allocator)");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.malloc.trend"), "flat");
    CHECK_EQ_STR(at_str(s, "groups.#providers.growth.outside.trend"),
                 "growing");
    CHECK(at_num(s, "groups.#providers.rounds.5.outside_malloc_bytes") >
          at_num(s, "groups.#providers.rounds.0.outside_malloc_bytes") +
              30 * MiB);
    CHECK_CONTAINS(table, "growing outside malloc");
    cJSON_Delete(s);
}

/* One line of memory-rounds.jsonl: the instance's own readings at a
 * round's end (heap in use < 0: the profiler was not running). */
static void
reading(struct strbuf *sb, int round, int64_t heap, int64_t rss, int64_t arena,
        int64_t cgroup)
{
    strbuf_addf(sb,
                "{\"time\": \"2026-11-29T18:00:0%d.900Z\", \"round\": %d, "
                "\"rss_bytes\": %lld, \"rss_anon_bytes\": %lld, "
                "\"vm_hwm_bytes\": %lld, \"mallinfo\": {\"arena\": %lld, "
                "\"hblkhd\": 0, \"uordblks\": %lld, \"fordblks\": 65536, "
                "\"keepcost\": 0}, \"profile\": {\"inuse_bytes\": %lld, "
                "\"inuse_objects\": %d, \"profiler_bytes\": 4194304, "
                "\"profiler_resident_bytes\": 1048576}, \"cgroup\": "
                "{\"version\": 2, \"current_bytes\": %lld, "
                "\"peak_bytes\": null, \"limit_bytes\": null}}\n",
                round % 10, round, (long long)rss, (long long)(rss - MiB),
                (long long)rss, (long long)arena, (long long)arena,
                (long long)(heap < 0 ? 0 : heap), heap < 0 ? 0 : 100,
                (long long)cgroup);
}

/* Without heap snapshots (memory_snapshots: none) the rounds come from
 * memory-rounds.jsonl, read at each round's end by the instance itself:
 * a flat plan whose coordinator samples jump is flat, every round has
 * its figures (the last too), and the cgroup figure is the instance's
 * reading, not a memory.csv sample. A line cut short at the end is noted. */
static void
t_readings_none_mode(void)
{
    cleanup_free char *dir = make_run("readings", &leaky);
    cleanup_free char *table = NULL;
    struct err err = {0};
    struct strbuf sb;
    cJSON *s;

    rm_all_heap_files(dir);
    strbuf_init(&sb);
    for (int r = 1; r <= 5; r++)
        reading(&sb, r, -1, 60 * MiB + (r % 2) * MiB, 40 * MiB,
                70 * MiB + (r % 2) * 2 * MiB);
    strbuf_adds(&sb, "{\"round\": 6, \"rss_by");
    put_text(dir, "providers/0/memory-rounds.jsonl", sb.buf);
    strbuf_release(&sb);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "flat");
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.basis"), "cgroup");
    CHECK_EQ_INT(at_num(s, "groups.#providers.growth.heap_inuse.rounds"), 0);
    CHECK_EQ_INT(at_num(s, "groups.#providers.growth.rss.rounds"), 5);
    CHECK_EQ_INT(at_num(s, "groups.#providers.rounds.4.cgroup_bytes"),
                 72 * MiB);
    CHECK_EQ_INT(at_num(s, "groups.#providers.rounds.1.rss_post_bytes"),
                 60 * MiB);
    CHECK(at(s, "groups.#providers.rounds.1.heap_inuse_post_bytes") &&
          cJSON_IsNull(
              at(s, "groups.#providers.rounds.1.heap_inuse_post_bytes")));
    CHECK_EQ_INT(at_num(s, "groups.#providers.rounds.0.malloc_bytes"),
                 40 * MiB);
    CHECK_EQ_INT(
        at_num(s, "groups.#providers.rounds.0.profiler_resident_bytes"),
        1 * MiB);
    /* RssAnon 60 MiB (RSS 61) less malloc's 40 and the profiler's 1 */
    CHECK_EQ_INT(at_num(s, "groups.#providers.rounds.0.outside_malloc_bytes"),
                 19 * MiB);
    CHECK(has_note(s, "memory-rounds.jsonl:6: the last line is cut short"));
    /* requestors have no readings: their cgroup figures are samples */
    CHECK_EQ_STR(at_str(s, "groups.#requestors.verdict.basis"), "cgroup");
    cJSON_Delete(s);
}

/* Heap in use from the readings when the sidecars are gone: the leak is
 * found on them, and the post-trim sidecar wins where there is one. */
static void
t_readings_heap(void)
{
    cleanup_free char *dir = make_run("readings-heap", &fixed);
    cleanup_free char *table = NULL;
    cleanup_free char *idir = path_join(dir, "providers/0");
    struct err err = {0};
    struct strbuf sb;
    cJSON *s;

    rm_heap_files(idir);
    strbuf_init(&sb);
    for (int r = 1; r <= 5; r++)
        reading(&sb, r, 24 * MiB + r * 8 * MiB, 40 * MiB + r * 8 * MiB,
                26 * MiB + r * 8 * MiB, 48 * MiB + r * 8 * MiB);
    put_text(dir, "providers/0/memory-rounds.jsonl", sb.buf);
    put_text(dir, "requestors/0/memory-rounds.jsonl", sb.buf);
    strbuf_release(&sb);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.kind"), "growing");
    CHECK_EQ_STR(at_str(s, "groups.#providers.verdict.basis"), "heap_inuse");
    CHECK(fabs(at_num(s, "groups.#providers.verdict.bytes_per_round") -
               8 * MiB) < 1.6 * MiB);
    CHECK_CONTAINS(at_str(s, "groups.#providers.verdict.text"),
                   "growing: +8.0 MiB/round");
    /* requestors/0 has its sidecars, which come first: still flat */
    CHECK_EQ_STR(at_str(s, "instances.#requestors/0.verdict.kind"), "flat");
    CHECK(fabs(at_num(s, "instances.#requestors/0.rounds.4.rss_post_bytes") -
               48 * MiB) < 2 * MiB);
    cJSON_Delete(s);
}

/* An instance that writes more rounds than anyone runs does not make the
 * report take minutes: the first 10000 are read, and the rest noted. */
static void
t_readings_many(void)
{
    cleanup_free char *dir = make_run("readings-many", &fixed);
    cleanup_free char *table = NULL;
    struct err err = {0};
    struct strbuf sb;
    cJSON *s;

    strbuf_init(&sb);
    for (int r = 1; r <= 10010; r++)
        strbuf_addf(&sb, "{\"round\": %d, \"rss_bytes\": %d}\n", r, 40 << 20);
    put_text(dir, "providers/0/memory-rounds.jsonl", sb.buf);
    strbuf_release(&sb);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(has_note(s, "memory-rounds.jsonl: more than 10000 rounds; those "
                      "from line 10001 on are left out"));
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "instances.#providers/0.rounds")),
                 10000);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.growth.rss.trend"), "flat");
    cJSON_Delete(s);
}

static void
t_empty_and_absent(void)
{
    cleanup_free char *empty = path_join(th_tmpdir(), "empty");
    cleanup_free char *absent = path_join(th_tmpdir(), "absent");
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    struct err err = {0};
    cJSON *s;

    CHECK_EQ_INT(mkdir_p(empty, &err), 0);
    /* A folder that is not a run is refused and nothing is written in it. */
    CHECK_EQ_INT(generate(empty, &table, &err), -1);
    CHECK_EQ_INT(err.status, EXIT_NOINPUT);
    CHECK_CONTAINS(err.msg, "not a run folder");
    CHECK(slurp(empty, "report.html") == NULL);
    free(table);
    table = NULL;
    /* A run that has only started: composition.json and nothing else. */
    put_text(empty, "composition.json", "{}\n");
    CHECK_MSG(generate(empty, &table, &err) == 0, "%s", err.msg);
    s = summary(empty);
    CHECK(has_note(s, "no groups and no instance folders"));
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "groups")), 0);
    cJSON_Delete(s);
    html = slurp(empty, "report.html");
    CHECK_CONTAINS(html, "No memory samples");
    CHECK(strstr(html, "<svg") == NULL);
    free(table);
    CHECK_EQ_INT(generate(absent, &table, &err), -1);
    CHECK_EQ_INT(err.status, EXIT_NOINPUT);
    CHECK_CONTAINS(err.msg, "absent: no such run folder");
}

/* Each malformed file: an error naming the file (and line), status 65,
 * and no summary.json or report.html. */
static void
t_malformed(void)
{
    static const struct {
        const char *file, *text, *want;
    } cases[] = {
        {"result.json", "{\"run_id\": \"x\",\n \"plan\": }",
         "result.json:2:10: not valid JSON"},
        {"result.json",
         "{\"instances\": [{\"group\": \"providers\", "
         "\"index\": 0, \"memory\": {\"peak_bytes\": \"1\"}}]}",
         "result.json: instances[0].memory.peak_bytes: expected a number, "
         "got a string"},
        {"result.json",
         "{\"instances\": [{\"group\": \"../x\", \"index\": 0}]}",
         "result.json: instances[0]: expected a group id and an index"},
        {"providers/0/memory.csv", "time,t_ms\n1,2\n",
         "providers/0/memory.csv:1: expected a header with t_ms and "
         "usage_bytes"},
        {"providers/0/memory.csv", "t_ms,usage_bytes\n0,abc\n100,5\n",
         "providers/0/memory.csv:2: usage_bytes: expected a whole number of "
         "bytes, got \"abc\""},
        {"providers/0/memory.csv", "t_ms,usage_bytes\n0,1\n100\n200,3\n",
         "providers/0/memory.csv:3: expected 2 fields, got 1"},
        {"barriers.jsonl",
         "{\"state\":\"a\",\"result\":\"released\","
         "\"t_ns\":1}\n{nope\n",
         "barriers.jsonl:2: not valid JSON"},
        {"barriers.jsonl", "{\"state\": 5, \"result\": \"released\"}\n",
         "barriers.jsonl:1: state: expected a string, got a number"},
        {"barriers.jsonl", "{\"result\": \"released\", \"t_ns\": 9}\n",
         "barriers.jsonl:1: expected \"state\""},
        {"providers/0/heap-round-2-post-trim.json", "[1, 2",
         "heap-round-2-post-trim.json:1:5: not valid JSON"},
        {"providers/0/heap-round-2-post-trim.json", "{\"round\": \"two\"}",
         "heap-round-2-post-trim.json: round: expected a number"},
        {"providers/0/heap-round-5-post-trim.pb.gz", "\x1f\x8bjunk",
         "heap-round-5-post-trim.pb.gz: not valid gzip"},
        {"providers/0/memory-rounds.jsonl",
         "{\"round\": 1, \"rss_bytes\": 5}\n{\"round\": 2, \"rss\n",
         "memory-rounds.jsonl:2:"},
        {"providers/0/memory-rounds.jsonl",
         "{\"round\": 1, \"rss_bytes\": 5}\n{\"round\": 2, "
         "\"mallinfo\": {\"arena\": \"big\"}}\n",
         "memory-rounds.jsonl:2: mallinfo.arena: expected a number"},
        {"providers/0/memory-rounds.jsonl", "{\"rss_bytes\": 5}\n",
         "memory-rounds.jsonl:1: round: expected a round number"},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        cleanup_free char *name = xasprintf("bad%zu", i);
        cleanup_free char *dir = make_run(name, &leaky);
        cleanup_free char *table = NULL;
        cleanup_free char *sum = path_join(dir, "summary.json");
        cleanup_free char *html = path_join(dir, "report.html");
        struct err err = {0};

        put_text(dir, cases[i].file, cases[i].text);
        CHECK_MSG(generate(dir, &table, &err) == -1, "case %zu: no error", i);
        CHECK_MSG(strstr(err.msg, cases[i].want) != NULL,
                  "case %zu: \"%s\" does not say \"%s\"", i, err.msg,
                  cases[i].want);
        CHECK_MSG(err.status == EXIT_DATAERR, "case %zu: status %d", i,
                  err.status);
        CHECK_MSG(!path_exists(sum) && !path_exists(html),
                  "case %zu: a report was written", i);
    }
}

/* An instance the memory monitor lost (result.json's monitor_lost): the
 * report says so, in its notes and its table. */
static void
t_monitor_lost(void)
{
    cleanup_free char *dir = make_run("lost", &oom);
    cleanup_free char *res = slurp(dir, "result.json");
    cleanup_free char *table = NULL;
    cleanup_free char *text = NULL;
    cJSON *j = res ? cJSON_Parse(res) : NULL;
    cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "instances"), 0);
    struct err err = {0};
    cJSON *s;

    CHECK(in != NULL);
    if (in == NULL) {
        cJSON_Delete(j);
        return;
    }
    cJSON_AddStringToObject(in, "monitor_lost",
                            "the memory series stops at 500 ms: Too many "
                            "open files");
    text = cJSON_Print(j);
    cJSON_Delete(j);
    put_text(dir, "result.json", text);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(has_note(s, "the memory monitor lost this instance: the memory "
                      "series stops at 500 ms: Too many open files"));
    CHECK_CONTAINS(table, "the memory monitor lost this instance");
    cJSON_Delete(s);
}

/* Five daemons that ran their own program (one connected: 3) and a
 * plan's client that did not either. */
static const struct synth_group blackbox_groups[] = {
    {"daemons", 5, 256 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 0, 0.3 * MiB, 0, 0, 0},
    {"clients", 1, 256 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 0, 0.3 * MiB, 0, 0, 0},
};
static const struct synth blackbox_run = {3, blackbox_groups, 2};

/* result.json with the daemons' group marked as running a command and
 * `connected` set from conn (one per instance, in order). */
static void
mark_connected(const char *dir, const bool *conn)
{
    cleanup_free char *res = slurp(dir, "result.json");
    cleanup_free char *text = NULL;
    cJSON *j = res ? cJSON_Parse(res) : NULL;
    cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
    size_t i = 0;

    cJSON_DeleteItemFromObject(o, "program");
    cJSON_AddStringToObject(o, "program", "command");
    cJSON_ArrayForEach (o, cJSON_GetObjectItem(j, "instances")) {
        cJSON_DeleteItemFromObject(o, "connected");
        cJSON_AddBoolToObject(o, "connected", conn[i++]);
    }
    text = cJSON_Print(j);
    cJSON_Delete(j);
    put_text(dir, "result.json", text);
}

/* The instances that never connected, as ranges per group, in
 * summary.json, the table and the page; the reason given depends on
 * whether they all ran their own program; none from a result.json that
 * does not say. */
static void
t_never_connected(void)
{
    static const bool daemons_only[] = {false, false, false, true, false, true};
    static const bool with_client[] = {false, false, false, true, false, false};
    static const char line[] = "never connected to the sync service: daemons "
                               "0-2, 4 (they ran their own program: expected "
                               "for run.command/run.image groups)";
    cleanup_free char *dir = make_run("blackbox", &blackbox_run);
    cleanup_free char *table = NULL;
    cleanup_free char *html = NULL;
    struct err err = {0};
    cJSON *s;

    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "never_connected")), 0);
    CHECK(strstr(table, "never connected") == NULL);
    cJSON_Delete(s);
    free(table);
    mark_connected(dir, daemons_only);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "never_connected")), 4);
    CHECK_EQ_STR(at_str(s, "never_connected.3"), "daemons/4");
    CHECK_CONTAINS(table, line);
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, line);
    cJSON_Delete(s);
    free(table);
    mark_connected(dir, with_client);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    CHECK_CONTAINS(table, "daemons 0-2, 4, clients 0 (a plan's instance "
                          "connects as the SDK starts");
}

static const struct th_case cases[] = {
    {"never_connected", t_never_connected},
    {"missing_result", t_missing_result},
    {"missing_pieces", t_missing_pieces},
    {"planted_links", t_planted_links},
    {"no_heap", t_no_heap},
    {"empty_profiles", t_empty_profiles},
    {"profiler_resident", t_profiler_resident},
    {"readings_none_mode", t_readings_none_mode},
    {"readings_heap", t_readings_heap},
    {"readings_many", t_readings_many},
    {"outside_malloc_run", t_outside_malloc_run},
    {"empty_and_absent", t_empty_and_absent},
    {"malformed", t_malformed},
    {"monitor_lost", t_monitor_lost},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
