/*
 * test_heap_snapshot.c — the plan-facing memory calls end to end, without
 * a coordinator: ty_heap_snapshot, ty_memory_round_end and ty_memory_event
 * under each memory_snapshots mode, periodic snapshots, and bad input. The
 * files land in TEST_OUTPUTS_PATH (a fresh directory per case) through
 * ty__output_file. Runs in every build: without the interposer (sanitizer
 * build) the profiles are empty but must still be whole and valid.
 */
#include "heap_pb.h"
#include "th.h"
#include "th_files.h"
#include "ty_heap.h"
#include "ty_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct ty *
make_ty(const char *params)
{
    char why[256];
    struct ty *ty;

    setenv("TEST_OUTPUTS_PATH", th_tmpdir(), 1);
    unsetenv("SYNC_SERVICE_HOST");
    if (params != NULL)
        setenv("TESTYARD_PARAMS", params, 1);
    else
        unsetenv("TESTYARD_PARAMS");
    ty = ty__new_from_env(why, sizeof(why));
    CHECK_MSG(ty != NULL, "ty__new_from_env: %s", why);
    return ty;
}

static bool
exists(const char *name)
{
    char path[512];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", th_tmpdir(), name);
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* Both files of a snapshot exist, the profile decodes, and the sidecar
 * names the label. */
static void
check_snapshot(const char *label)
{
    char path[512], err[128], want[160];
    struct heap_pb p;
    size_t len = 0;
    void *data;

    snprintf(path, sizeof(path), "%s/heap-%s.pb.gz", th_tmpdir(), label);
    data = th_read(path, &len);
    CHECK_MSG(data != NULL, "%s missing", path);
    if (data != NULL) {
        CHECK_MSG(heap_pb_parse_gz(data, len, &p, err, sizeof(err)) == 0,
                  "%s: %s", path, err);
        CHECK_EQ_INT(p.ntypes, 4);
        heap_pb_free(&p);
        free(data);
    }
    snprintf(path, sizeof(path), "%s/heap-%s.json", th_tmpdir(), label);
    data = th_read(path, &len);
    CHECK_MSG(data != NULL, "%s missing", path);
    snprintf(want, sizeof(want), "\"%s\"", label);
    if (data != NULL) {
        CHECK_CONTAINS((char *)data, want);
        free(data);
    }
}

/* The sidecar of label says what took it. */
static void
check_trigger(const char *label, const char *want)
{
    char path[512];
    size_t len = 0;
    char *data;
    cJSON *j;

    snprintf(path, sizeof(path), "%s/heap-%s.json", th_tmpdir(), label);
    data = th_read(path, &len);
    j = data != NULL ? cJSON_ParseWithLength(data, len) : NULL;
    CHECK_MSG(j != NULL, "%s: missing or not JSON", path);
    if (j != NULL)
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "trigger")),
                     want);
    cJSON_Delete(j);
    free(data);
}

/* Line k (from 0) of memory-rounds.jsonl, parsed; NULL when there is none.
 * *lines says how many the file has. */
static cJSON *
round_reading(int k, int *lines)
{
    char path[512];
    char *data, *line, *save = NULL;
    cJSON *j = NULL;
    int n = 0;

    snprintf(path, sizeof(path), "%s/memory-rounds.jsonl", th_tmpdir());
    data = th_read(path, NULL);
    for (line = data ? strtok_r(data, "\n", &save) : NULL; line != NULL;
         line = strtok_r(NULL, "\n", &save), n++)
        if (n == k)
            j = cJSON_Parse(line);
    *lines = n;
    free(data);
    return j;
}

static double
jnum(const cJSON *j, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, a);

    if (b != NULL)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* A reading has what a user reads: its round, RSS, the profiler's memory
 * (resident within mapped), mallinfo and the cgroup's members. */
static void
check_reading(const cJSON *j, int round)
{
    const cJSON *cg = cJSON_GetObjectItemCaseSensitive(j, "cgroup");

    CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "time")));
    CHECK_EQ_INT(jnum(j, "round", NULL), round);
    CHECK(jnum(j, "rss_bytes", NULL) > 0);
    CHECK(jnum(j, "rss_anon_bytes", NULL) > 0);
    CHECK(jnum(j, "vm_hwm_bytes", NULL) >= jnum(j, "rss_bytes", NULL));
    CHECK(jnum(j, "mallinfo", "arena") >= 0);
    CHECK(jnum(j, "profile", "inuse_bytes") >= 0);
    CHECK(jnum(j, "profile", "inuse_objects") >= 0);
    CHECK(jnum(j, "profile", "profiler_resident_bytes") >= 0);
    CHECK(jnum(j, "profile", "profiler_resident_bytes") <=
          jnum(j, "profile", "profiler_bytes"));
    CHECK(cJSON_IsNull(cg) || jnum(j, "cgroup", "current_bytes") > 0);
}

/* The round's reading is the post-trim sidecar's figures, to the byte. */
static void
check_same_instant(const char *label, int round)
{
    static const char *const keys[][2] = {
        {"rss_bytes", NULL},
        {"rss_anon_bytes", NULL},
        {"vm_hwm_bytes", NULL},
        {"mallinfo", "uordblks"},
        {"profile", "inuse_bytes"},
        {"profile", "profiler_bytes"},
        {"profile", "profiler_resident_bytes"},
        {"cgroup", "current_bytes"}};
    char path[512], *data;
    cJSON *sc, *j;
    int lines;

    snprintf(path, sizeof(path), "%s/heap-%s.json", th_tmpdir(), label);
    data = th_read(path, NULL);
    sc = data != NULL ? cJSON_Parse(data) : NULL;
    j = round_reading(0, &lines);
    CHECK_EQ_INT(lines, 1);
    CHECK(sc != NULL && j != NULL);
    if (sc != NULL && j != NULL) {
        check_reading(j, round);
        CHECK_EQ_STR(
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "time")),
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sc, "time")));
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            CHECK_MSG(jnum(j, keys[i][0], keys[i][1]) ==
                          jnum(sc, keys[i][0], keys[i][1]),
                      "%s.%s: %.0f in the reading, %.0f in the sidecar",
                      keys[i][0], keys[i][1] ? keys[i][1] : "",
                      jnum(j, keys[i][0], keys[i][1]),
                      jnum(sc, keys[i][0], keys[i][1]));
    }
    cJSON_Delete(sc);
    cJSON_Delete(j);
    free(data);
}

static void
t_snapshot(void)
{
    struct ty *ty = make_ty(NULL);

    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_heap_snapshot(ty, "first"), 0);
    check_snapshot("first");
    check_trigger("first", "call");
    CHECK(!exists("heap-first.pb.gz.tmp"));
    ty__destroy(&ty);
}

static void
t_bad_label(void)
{
    struct ty *ty = make_ty(NULL);

    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_heap_snapshot(ty, "../up"), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), "../up");
    CHECK_EQ_INT(ty_heap_snapshot(ty, ""), -EINVAL);
    CHECK_EQ_INT(ty_heap_snapshot(ty, NULL), -EINVAL);
    ty__destroy(&ty);
}

static void
t_mode_unset_and_none(void)
{
    struct ty *ty = make_ty(NULL);

    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_memory_round_end(ty, 1), 0);
    CHECK_EQ_INT(ty_memory_event(ty), 0);
    ty__destroy(&ty);
    ty = make_ty("{\"memory_snapshots\":\"none\"}");
    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_memory_round_end(ty, 2), 0);
    CHECK_EQ_INT(ty_memory_round_end(ty, 3), 0);
    for (int i = 0; i < 20; i++)
        CHECK_EQ_INT(ty_memory_event(ty), 0);
    CHECK(!exists("heap-round-1-pre-trim.json"));
    CHECK(!exists("heap-round-2-post-trim.json"));
    CHECK(!exists("heap-event-10.json"));
    ty__destroy(&ty);
    /* a reading per call, unset and none alike, and no profile */
    for (int k = 0; k < 3; k++) {
        int lines;
        cJSON *j = round_reading(k, &lines);

        CHECK_EQ_INT(lines, 3);
        CHECK_MSG(j != NULL, "reading %d", k);
        if (j != NULL)
            check_reading(j, k + 1);
        cJSON_Delete(j);
    }
}

static void
t_mode_simple(void)
{
    struct ty *ty = make_ty("{\"memory_snapshots\":\"simple\"}");

    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_memory_round_end(ty, 4), 0);
    check_snapshot("round-4-pre-trim");
    check_snapshot("round-4-post-trim");
    check_trigger("round-4-pre-trim", "round");
    check_trigger("round-4-post-trim", "round");
    check_same_instant("round-4-post-trim", 4);
    for (int i = 0; i < 20; i++)
        CHECK_EQ_INT(ty_memory_event(ty), 0);
    CHECK(!exists("heap-event-10.json"));
    ty__destroy(&ty);
}

static void
t_mode_detailed(void)
{
    struct ty *ty = make_ty("{\"memory_snapshots\":\"detailed\","
                            "\"memory_snapshot_every\":3}");

    if (ty == NULL)
        return;
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(ty_memory_event(ty), 0);
    check_snapshot("event-3");
    check_snapshot("event-6");
    check_trigger("event-3", "event");
    CHECK(!exists("heap-event-7.json"));
    CHECK_EQ_INT(ty_memory_round_end(ty, 1), 0);
    check_snapshot("round-1-post-trim");
    ty__destroy(&ty);
}

static void
t_mode_errors(void)
{
    struct ty *ty = make_ty("{\"memory_snapshots\":\"lots\"}");

    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_memory_round_end(ty, 1), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), "none, simple or detailed");
    ty__destroy(&ty);
    ty = make_ty("{\"memory_snapshots\":\"detailed\","
                 "\"memory_snapshot_every\":0}");
    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty_memory_event(ty), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), "memory_snapshot_every");
    ty__destroy(&ty);
}

/* Wait up to 10 s for a file to appear. */
static bool
appears(const char *name)
{
    for (int i = 0; i < 1000 && !exists(name); i++)
        usleep(10 * 1000);
    return exists(name);
}

static void
t_periodic(void)
{
    struct ty *ty;
    char name[64];
    int last = 0;

    setenv("TESTYARD_HEAP_PROFILE_INTERVAL", "100ms", 1);
    ty = make_ty(NULL);
    if (ty == NULL)
        return;
    ty__heapctl_init(ty);
    CHECK(appears("heap-periodic-2.json"));
    ty__heapctl_fini(ty);
    check_snapshot("periodic-1");
    check_snapshot("periodic-2");
    check_trigger("periodic-2", "periodic");
    do
        snprintf(name, sizeof(name), "heap-periodic-%d.json", ++last);
    while (exists(name));
    usleep(300 * 1000);
    CHECK(!exists(name)); /* stopped by fini */
    ty__destroy(&ty);
}

static void
t_rate(void)
{
    ty_heap_set_rate(4096);
    CHECK_EQ_INT(ty_heap_rate(), 4096);
    ty_heap_set_rate(TY_HEAP_DEFAULT_RATE);
    CHECK_EQ_INT(ty_heap_rate(), TY_HEAP_DEFAULT_RATE);
    ty_heap_trim(NULL);
}

static const struct th_case cases[] = {
    {"snapshot", t_snapshot},
    {"bad_label", t_bad_label},
    {"mode_unset_and_none", t_mode_unset_and_none},
    {"mode_simple", t_mode_simple},
    {"mode_detailed", t_mode_detailed},
    {"mode_errors", t_mode_errors},
    {"periodic", t_periodic},
    {"rate", t_rate},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
