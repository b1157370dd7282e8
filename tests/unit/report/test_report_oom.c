/*
 * test_report_oom.c — how the report presents heap snapshots and OOM
 * kills, on synthetic run folders (test_report_synth.h) with snapshots
 * added the way the SDK, the LD_PRELOAD profiler and the coordinator
 * leave them: each snapshot's kind (from the sidecar's trigger, or from
 * its label in older runs) and its time on the run's clock; per
 * OOM-killed instance the last profile before the kill, how old it was,
 * the usage against the limit then and its top site, in the terminal
 * table, report.html and summary.json, or the words saying there was
 * none; snapshot markers on the memory chart; and profiles that all hold
 * 0 B told from no profiles at all.
 */
#include "test_report_synth.h"

#include <dirent.h>

/* The provider leaks into a 128 MiB limit and is killed in round 3, at
 * 3.4 s; the requestors stay flat. */
static const struct synth_group kill_groups[] = {
    {"providers", 1, 128 * MiB, 24.0 * MiB, 20.0 * MiB, 40.0 * MiB, 20.0 * MiB,
     0.2 * MiB, 3, 0, 0},
    {"requestors", 2, 256 * MiB, 30.0 * MiB, 0, 48.0 * MiB, 0, 0.5 * MiB, 0, 0,
     0},
};
static const struct synth killed = {5, kill_groups, 2};

#define KILL_MS 3400

/* One snapshot as the profiler writes it: the sidecar (trigger and
 * cgroup left out when NULL / < 0) and a profile holding `leak` bytes at
 * test_leak_round and `work` at test_working_set, or, when `freed`,
 * holding nothing of what it allocated. */
struct snap_spec {
    const char *label;
    const char *trigger; /* NULL: an older sidecar without one */
    int64_t t_ms;
    int round; /* -1: none */
    int64_t leak, work;
    int64_t cgroup, limit; /* -1: null */
    bool freed;
};

static void
snap_profile(const char *idir, const struct snap_spec *s)
{
    static uintptr_t l[] = {PC(xmalloc), PC(test_leak_round)};
    static uintptr_t w[] = {PC(test_working_set)};
    uint64_t lb = (uint64_t)s->leak, wb = (uint64_t)s->work;
    struct ty__heap_rec recs[2] = {
        {l, 2, 1, 100, lb, s->freed ? 100 : 0, s->freed ? lb : 0},
        {w, 1, 1, 100, wb, s->freed ? 100 : 0, s->freed ? wb : 0},
    };
    struct ty__heap_snap snap = {recs, 2, 2, 1, START_NS + s->t_ms * 1000000};
    struct ty__heap_totals tot;
    void *gz = NULL;
    size_t len = 0;
    char rel[160];

    CHECK_EQ_INT(ty__heap_profile(&snap, &gz, &len, &tot), 0);
    snprintf(rel, sizeof(rel), "heap-%s.pb.gz", s->label);
    put(idir, rel, gz, len);
    free(gz);
}

static char *
json_or_null(int64_t v)
{
    return v < 0 ? xstrdup("null") : xasprintf("%lld", (long long)v);
}

static void
snap_write(const char *idir, const struct snap_spec *s)
{
    char ts[40], rel[160];
    int64_t inuse = s->freed ? 0 : s->leak + s->work;
    cleanup_free char *trig =
        s->trigger ? xasprintf("\"trigger\": \"%s\", ", s->trigger)
                   : xstrdup("");
    cleanup_free char *round =
        s->round >= 0 ? xasprintf("\"round\": %d, ", s->round) : xstrdup("");
    cleanup_free char *cur = json_or_null(s->cgroup);
    cleanup_free char *lim = json_or_null(s->limit);
    cleanup_free char *cg =
        s->cgroup < 0 && s->limit < 0
            ? xstrdup("null")
            : xasprintf("{\"version\": 2, \"current_bytes\": %s, "
                        "\"peak_bytes\": null, \"limit_bytes\": %s}",
                        cur, lim);
    cleanup_free char *json = NULL;

    time_rfc3339(START_NS + s->t_ms * 1000000, ts, sizeof(ts));
    json = xasprintf(
        "{\"time\": \"%s\", \"label\": \"%s\", %s%s\"pid\": 7, \"rate\": 1, "
        "\"rss_bytes\": %lld, \"vm_hwm_bytes\": %lld, \"rss_anon_bytes\": "
        "%lld, \"profile\": {\"inuse_bytes\": %lld, \"inuse_objects\": 1, "
        "\"alloc_bytes\": %lld, \"alloc_objects\": 200, \"samples\": 2, "
        "\"profiler_bytes\": 0}, \"cgroup\": %s}\n",
        ts, s->label, trig, round, (long long)(inuse + 8 * MiB),
        (long long)(inuse + 8 * MiB), (long long)(inuse + 4 * MiB),
        (long long)inuse, (long long)(s->leak + s->work), cg);
    snprintf(rel, sizeof(rel), "heap-%s.json", s->label);
    put_text(idir, rel, json);
    snap_profile(idir, s);
}

/* Remove every heap snapshot of an instance folder. */
static void
drop_snapshots(const char *idir)
{
    DIR *d = opendir(idir);
    struct dirent *e;

    CHECK(d != NULL);
    while (d != NULL && (e = readdir(d)) != NULL) {
        cleanup_free char *p = path_join(idir, e->d_name);

        if (strncmp(e->d_name, "heap-", 5) == 0)
            CHECK_EQ_INT(unlink(p), 0);
    }
    if (d != NULL)
        closedir(d);
}

/* result.json's memory.pre_oom for instance `label`, as the coordinator
 * writes it when it asked for a pre-OOM snapshot (requests 0: null, it
 * never asked). */
static void
set_preoom(const char *dir, const char *label, int requests, int64_t first,
           int64_t last, int64_t usage, int64_t limit)
{
    cleanup_free char *text = slurp(dir, "result.json");
    cJSON *j = cJSON_Parse(text), *mem, *p;
    char *out;

    mem = cJSON_GetObjectItem(
        at(at(j, "instances"), label[0] == 'p' ? "0" : "1"), "memory");
    if (requests == 0) {
        cJSON_AddNullToObject(mem, "pre_oom");
    } else {
        p = cJSON_AddObjectToObject(mem, "pre_oom");
        cJSON_AddNumberToObject(p, "requests", requests);
        cJSON_AddNumberToObject(p, "first_ms", (double)first);
        cJSON_AddNumberToObject(p, "last_ms", (double)last);
        cJSON_AddNumberToObject(p, "usage_bytes", (double)usage);
        cJSON_AddNumberToObject(p, "limit_bytes", (double)limit);
        cJSON_AddStringToObject(p, "via", "sync");
    }
    out = cJSON_Print(j);
    put_text(dir, "result.json", out);
    free(out);
    cJSON_Delete(j);
}

/* 115.2 MiB, as the report prints it. */
#define AT_PREOOM ((int64_t)(115.2 * MiB))

/* The killed run with the provider's pre-OOM snapshot 300 ms before the
 * kill (after its round-2 snapshots, 500 ms before; the coordinator
 * asked at 3090 ms); *idir is providers/0. */
static char *
killed_with_preoom(const char *name, char **idir)
{
    char *dir = make_run(name, &killed);
    const struct snap_spec pre = {"pre-oom", "pre-oom", KILL_MS - 300,
                                  -1,        96 * MiB,  12 * MiB,
                                  AT_PREOOM, 128 * MiB, false};

    *idir = path_join(dir, "providers/0");
    snap_write(*idir, &pre);
    set_preoom(dir, "providers/0", 1, 3090, 3090, 116 * MiB, 128 * MiB);
    return dir;
}

/* ---- cases --------------------------------------------------------------- */

static void
t_oom_preoom_profile(void)
{
    cleanup_free char *idir = NULL;
    cleanup_free char *dir = killed_with_preoom("kill-pre", &idir);
    cleanup_free char *table = NULL, *html = NULL;
    const char *words = "last profile 300 ms before the kill (pre-oom), at "
                        "115.2 MiB of 128.0 MiB limit";
    struct err err = {0};
    const char *p;
    cJSON *s;

    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_INT(at_num(s, "instances.#providers/0.oom.at_ms"), KILL_MS);
    CHECK(at_num(s, "instances.#providers/0.oom.usage_before_bytes") >
          100 * MiB);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.oom.last_profile.label"),
                 "pre-oom");
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.oom.last_profile.trigger"),
                 "pre-oom");
    CHECK_EQ_INT(
        at_num(s, "instances.#providers/0.oom.last_profile.before_kill_ms"),
        300);
    CHECK_EQ_INT(at_num(s, "instances.#providers/0.oom.last_profile.at_ms"),
                 KILL_MS - 300);
    CHECK_EQ_INT(
        at_num(s, "instances.#providers/0.oom.last_profile.usage_bytes"),
        AT_PREOOM);
    CHECK_EQ_INT(
        at_num(s, "instances.#providers/0.oom.last_profile.limit_bytes"),
        128 * MiB);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.oom.sites.0.function"),
                 "test_leak_round");
    CHECK_EQ_INT(at_num(s, "instances.#providers/0.oom.sites.0.inuse_bytes"),
                 96 * MiB);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.oom.text"), words);
    CHECK_EQ_INT(at_num(s, "instances.#providers/0.pre_oom.requests"), 1);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.pre_oom.via"), "sync");
    CHECK(cJSON_IsNull(at(s, "instances.#requestors/0.oom")));
    CHECK(cJSON_IsNull(at(s, "instances.#requestors/0.pre_oom")));
    /* the terminal: the words, then the profile's top site */
    p = strstr(table, words);
    CHECK_MSG(p != NULL, "table: %s", table);
    CHECK_CONTAINS(p ? p : "", "96.0 MiB  88.9%  test_leak_round");
    CHECK_CONTAINS(table, "pre-OOM snapshot asked for at 3.1 s over the sync "
                          "connection, at 116.0 MiB of 128.0 MiB limit\n");
    /* the page: an OOM section with the same words and the site */
    html = slurp(dir, "report.html");
    p = html ? strstr(html, "<section id=\"oom\">") : NULL;
    CHECK(p != NULL);
    CHECK_CONTAINS(p ? p : "", words);
    CHECK_CONTAINS(p ? p : "", "test_leak_round");
    CHECK(p == NULL || strstr(p, words) < strstr(p, "</section>"));
    cJSON_Delete(s);
}

/* Without the sidecar's cgroup, the usage at the profile comes from the
 * memory.csv sample nearest its time. */
static void
t_oom_usage_from_series(void)
{
    cleanup_free char *dir = make_run("kill-csv", &killed);
    cleanup_free char *idir = path_join(dir, "providers/0");
    cleanup_free char *csv = slurp(idir, "memory.csv");
    cleanup_free char *table = NULL, *want = NULL;
    const struct snap_spec pre = {"pre-oom", "pre-oom", KILL_MS - 170,
                                  -1,        96 * MiB,  12 * MiB,
                                  -1,        -1,        false};
    const char *row = csv ? strstr(csv, ",3200,") : NULL;
    struct err err = {0};
    char b[32];
    cJSON *s;

    CHECK(row != NULL);
    snap_write(idir, &pre);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    report__fmt_bytes(strtoll(row ? row + 6 : "0", NULL, 10), b, sizeof(b));
    want = xasprintf("last profile 170 ms before the kill (pre-oom), at %s "
                     "of 128.0 MiB limit",
                     b);
    CHECK_EQ_STR(at_str(s, "instances.#providers/0.oom.text"), want);
    CHECK_CONTAINS(table, want);
    cJSON_Delete(s);
}

static void
t_oom_no_profile(void)
{
    cleanup_free char *dir = make_run("kill-none", &killed);
    cleanup_free char *idir = path_join(dir, "providers/0");
    cleanup_free char *table = NULL, *html = NULL;
    struct err err = {0};
    cJSON *s;

    drop_snapshots(idir);
    set_preoom(dir, "providers/0", 0, 0, 0, 0, 0);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(cJSON_IsNull(at(s, "instances.#providers/0.pre_oom")));
    CHECK_CONTAINS(table, "  no pre-OOM snapshot was asked for (usage was "
                          "not seen past run_config.pre_oom_snapshot of the "
                          "limit, it is off, or no process of the instance "
                          "could be asked: neither the SDK nor the LD_PRELOAD "
                          "profiler)\n");
    CHECK(cJSON_IsNull(at(s, "instances.#providers/0.oom.last_profile")));
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "instances.#providers/0.oom.sites")),
                 0);
    CHECK_CONTAINS(at_str(s, "instances.#providers/0.oom.text"),
                   "no heap profile before the kill");
    CHECK_CONTAINS(table, "no heap profile before the kill, so nothing shows "
                          "what filled the memory: set run.profiles.heap or "
                          "keep run_config.pre_oom_snapshot on");
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "<li class=\"none\">no heap profile before the kill");
    /* the providers have no profile left, the requestors have theirs */
    CHECK_CONTAINS(table, "  providers: no heap profiles (heap-<label>.pb.gz) "
                          "to read\n");
    CHECK_CONTAINS(table, "  requestors (round-5-post-trim):\n");
    cJSON_Delete(s);
}

/* The coordinator asked, nothing came: the words say so. */
static void
t_oom_asked_none_came(void)
{
    cleanup_free char *dir = make_run("kill-asked", &killed);
    cleanup_free char *idir = path_join(dir, "providers/0");
    cleanup_free char *table = NULL;
    struct err err = {0};

    drop_snapshots(idir);
    set_preoom(dir, "providers/0", 3, 3050, 3350, 116 * MiB, 128 * MiB);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    CHECK_CONTAINS(table, "pre-OOM snapshot asked for at 3.0 s over the sync "
                          "connection, at 116.0 MiB of 128.0 MiB limit; 3 "
                          "requests, the last at 3.4 s\n");
    CHECK_CONTAINS(table, "no heap profile before the kill, so nothing shows "
                          "what filled the memory: the coordinator asked for "
                          "one at 3.0 s but none came");
}

/* The <title> that starts at or after p contains needle. */
static bool
within_title(const char *p, const char *needle)
{
    const char *a = strstr(p, "<title>"), *b = a ? strstr(a, "</title>") : NULL;
    const char *n = a ? strstr(a, needle) : NULL;

    return n != NULL && n < b;
}

/* Markers on the memory chart: a square per round-end snapshot, a
 * triangle for the peak, a diamond for the pre-OOM one, a dot for the
 * rest, each with its label and its age before the kill on hover. */
static void
t_markers(void)
{
    cleanup_free char *idir = NULL;
    cleanup_free char *dir = killed_with_preoom("kill-marks", &idir);
    cleanup_free char *table = NULL, *html = NULL;
    const struct snap_spec peak = {"peak",    NULL,     KILL_MS - 1500,
                                   -1,        70 * MiB, 12 * MiB,
                                   100 * MiB, -1,       false};
    const struct snap_spec per = {"periodic-1", "periodic", 1300,
                                  -1,           20 * MiB,   10 * MiB,
                                  60 * MiB,     -1,         false};
    struct err err = {0};
    const char *svg, *end, *p;

    snap_write(idir, &peak);
    snap_write(idir, &per);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    html = slurp(dir, "report.html");
    svg = html ? strstr(html, "aria-label=\"memory usage of every") : NULL;
    end = svg ? strstr(svg, "</svg>") : NULL;
    CHECK(svg != NULL && end != NULL);
    if (svg == NULL || end == NULL)
        return;
    p = strstr(svg, "<g class=\"snap preoom\" fill=\"#2563eb\"><title>"
                    "providers/0 heap-pre-oom (pre-oom) at 3.1 s: 115.2 MiB "
                    "in the cgroup, 108.0 MiB heap in use; 300 ms before the "
                    "kill</title><path d=\"M");
    CHECK_MSG(p != NULL && p < end, "no pre-OOM diamond in the chart");
    CHECK(p == NULL || strstr(p, "l6.5 6.5 l-6.5 6.5 l-6.5 -6.5 z\"/></g>"));
    p = strstr(svg, "<g class=\"snap peak\" fill=\"#2563eb\"><title>"
                    "providers/0 heap-peak (peak) at 1.9 s: 100.0 MiB in the "
                    "cgroup, 82.0 MiB heap in use; 1.5 s before the kill"
                    "</title><path d=\"M");
    CHECK_MSG(p != NULL && p < end, "no peak triangle in the chart");
    p = strstr(svg, "<g class=\"snap round\" fill=\"#2563eb\"><title>"
                    "providers/0 heap-round-2-post-trim (round) at 2.9 s");
    CHECK_MSG(p != NULL && p < end, "no round-end square in the chart");
    CHECK(p == NULL ||
          strncmp(strstr(p, "</title>"), "</title><rect ", 14) == 0);
    p = strstr(svg, "<g class=\"snap round\" fill=\"#ea580c\"><title>"
                    "requestors/1 heap-round-5-post-trim (round) at 5.9 s: ");
    CHECK_MSG(p != NULL && p < end, "no requestor's square");
    /* an instance that was not killed has no age before a kill */
    CHECK(p == NULL || !within_title(p, "before the kill"));
    p = strstr(svg, "<g class=\"snap other\" fill=\"#2563eb\"><title>"
                    "providers/0 heap-periodic-1 (periodic) at 1.3 s");
    CHECK_MSG(p != NULL && p < end, "no dot for the periodic snapshot");
    CHECK(p == NULL ||
          strncmp(strstr(p, "</title>"), "</title><circle ", 16) == 0);
    CHECK_CONTAINS(svg, "OOM providers/0</text>");
    CHECK_CONTAINS(html, "</svg>round-end snapshot</li>");
    CHECK_CONTAINS(html, "</svg>peak snapshot</li>");
    CHECK_CONTAINS(html, "</svg>pre-OOM snapshot</li>");
    CHECK_CONTAINS(html, "</svg>other snapshot (periodic");
    /* and the instances' table counts them by kind */
    CHECK_CONTAINS(html, "<td>7: 4 round, 1 periodic, 1 peak, 1 pre-oom</td>");
}

/* Kinds from the sidecar's trigger, else from the label (older runs,
 * the LD_PRELOAD profiler's <program>-<pid>-<what>); times on the run's
 * clock. */
static void
t_kinds(void)
{
    static const struct {
        const char *label, *trigger, *want;
    } cases[] = {
        {"round-7-pre-trim", NULL, "round"},
        {"round-7", NULL, "round"},
        {"peak", NULL, "peak"},
        {"pre-oom", NULL, "pre-oom"},
        {"periodic-4", NULL, "periodic"},
        {"event-2", NULL, "event"},
        {"signal-1", NULL, "signal"},
        {"exit", NULL, "exit"},
        {"heap_prog-4242-exit", NULL, "exit"},
        {"heap_prog-4242-pre-oom", NULL, "pre-oom"},
        {"my-prog-2-77-peak", NULL, "peak"},
        {"my-prog-77-periodic-3", NULL, "periodic"},
        {"warmup", NULL, "call"},
        {"periodic-x", NULL, "call"},
        {"checkpoint", "peak", "peak"},
        {"round-9-post-trim", "bogus", "round"},
    };
    cleanup_free char *dir = make_run("kinds", &leaky);
    cleanup_free char *idir = path_join(dir, "requestors/1");
    cleanup_free char *table = NULL;
    struct err err = {0};
    cJSON *s;

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct snap_spec sp = {cases[i].label,
                               cases[i].trigger,
                               6000 + (int64_t)i * 10,
                               -1,
                               MiB,
                               MiB,
                               -1,
                               -1,
                               false};

        snap_write(idir, &sp);
    }
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const cJSON *e, *found = NULL;

        cJSON_ArrayForEach (e, at(s, "instances.#requestors/1.heap_snapshots"))
            if (strcmp(at_str(e, "label"), cases[i].label) == 0)
                found = e;
        CHECK_MSG(found != NULL, "%s not listed", cases[i].label);
        if (found == NULL)
            continue;
        CHECK_MSG(strcmp(at_str(found, "trigger"), cases[i].want) == 0,
                  "%s: trigger %s, want %s", cases[i].label,
                  at_str(found, "trigger"), cases[i].want);
        CHECK_EQ_INT(at_num(found, "at_ms"), 6000 + (int64_t)i * 10);
    }
    CHECK_EQ_INT(at_num(s, "instances.#requestors/1.heap_snapshots.0.at_ms"),
                 1900);
    cJSON_Delete(s);
}

/* Replace the requestors' snapshots: every round's pre-trim profile holds
 * `pre` bytes at test_working_set (0: nothing), and its post-trim one
 * nothing; a plan that frees a round's memory before its snapshots. */
static void
freed_requestors(const char *dir, int64_t pre)
{
    for (int i = 0; i < 2; i++) {
        cleanup_free char *idir = xasprintf("%s/requestors/%d", dir, i);

        drop_snapshots(idir);
        for (int r = 1; r <= 4; r++) {
            char a[40], b[40];
            struct snap_spec sp = {a,  "round", r * 1000 + 900,
                                   r,  0,       pre > 0 ? pre : 4 * MiB,
                                   -1, -1,      pre == 0};

            snprintf(a, sizeof(a), "round-%d-pre-trim", r);
            snap_write(idir, &sp);
            snprintf(b, sizeof(b), "round-%d-post-trim", r);
            sp.label = b;
            sp.freed = true;
            snap_write(idir, &sp);
        }
    }
}

static void
t_zero_profiles(void)
{
    cleanup_free char *dir = make_run("zero", &leaky);
    cleanup_free char *table = NULL, *html = NULL;
    struct err err = {0};
    cJSON *s;

    freed_requestors(dir, 0);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_INT(at_num(s, "groups.#requestors.top_sites.profiles"), 16);
    CHECK_EQ_INT(at_num(s, "groups.#requestors.top_sites.profiles_zero"), 16);
    CHECK_EQ_INT(
        cJSON_GetArraySize(at(s, "groups.#requestors.top_sites.sites")), 0);
    html = slurp(dir, "report.html");
    CHECK(html != NULL && strstr(html, "No heap profiles") == NULL);
    CHECK(strstr(table, "No heap profiles") == NULL);
    CHECK(strstr(table, "no heap profiles") == NULL);
    CHECK_CONTAINS(html, "16 heap profiles, all with 0 B in use at the "
                         "snapshot: the plan freed its memory before taking "
                         "them");
    CHECK_CONTAINS(table, "requestors: 16 heap profiles, all with 0 B in use");
    /* the providers' sites are still there */
    CHECK_CONTAINS(table, "test_leak_round");
    cJSON_Delete(s);
}

/* The last profiles hold 0 B but the pre-trim ones do not: their sites
 * are shown, and the page says where they come from. */
static void
t_sites_from_older_profile(void)
{
    cleanup_free char *dir = make_run("older", &leaky);
    cleanup_free char *table = NULL, *html = NULL;
    struct err err = {0};
    cJSON *s;

    freed_requestors(dir, 6 * MiB);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK_EQ_STR(at_str(s, "groups.#requestors.top_sites.sites.0.function"),
                 "test_working_set");
    CHECK_EQ_INT(at_num(s, "groups.#requestors.top_sites.sites.0.inuse_bytes"),
                 12 * MiB);
    CHECK_EQ_STR(at_str(s, "groups.#requestors.top_sites.snapshot"),
                 "round-4-pre-trim");
    CHECK_EQ_INT(at_num(s, "groups.#requestors.top_sites.older_instances"), 2);
    CHECK_EQ_INT(at_num(s, "groups.#providers.top_sites.older_instances"), 0);
    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "The last profile of 2 instances held 0 B in use; "
                         "their sites are from the latest profile that held "
                         "any.");
    CHECK_CONTAINS(table, "  requestors (round-4-pre-trim):\n");
    cJSON_Delete(s);
}

/* The per-round table on the terminal has heap, RSS and cgroup for every
 * group (docs/report.md, "On the terminal"). */
static void
t_table_cgroup_column(void)
{
    cleanup_free char *dir = NULL;
    cleanup_free char *table = NULL;
    cJSON *s = report_of("cgcol", &leaky, &dir, &table);
    static const char *const keys[] = {"heap_inuse_post_bytes",
                                       "rss_post_bytes", "cgroup_bytes"};
    struct strbuf want;
    char b[32], path[96];

    CHECK_CONTAINS(table, "       "
                          "        heap        RSS     cgroup"
                          "        heap        RSS     cgroup\n");
    strbuf_init(&want);
    strbuf_adds(&want, "\n      1");
    for (int g = 0; g < 2; g++) {
        strbuf_adds(&want, " ");
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof(path), "groups.%d.rounds.0.%s", g, keys[k]);
            report__fmt_bytes((int64_t)at_num(s, path), b, sizeof(b));
            strbuf_addf(&want, " %10s", b);
        }
    }
    strbuf_adds(&want, "\n");
    CHECK(at_num(s, "groups.1.rounds.0.cgroup_bytes") > 50 * MiB);
    CHECK_CONTAINS(table, want.buf);
    strbuf_release(&want);
    report__fmt_ms(0, b, sizeof(b));
    CHECK_EQ_STR(b, "0 ms");
    cJSON_Delete(s);
}

static const struct th_case cases[] = {
    {"oom_preoom_profile", t_oom_preoom_profile},
    {"oom_usage_from_series", t_oom_usage_from_series},
    {"oom_no_profile", t_oom_no_profile},
    {"oom_asked_none_came", t_oom_asked_none_came},
    {"markers", t_markers},
    {"kinds", t_kinds},
    {"zero_profiles", t_zero_profiles},
    {"sites_from_older_profile", t_sites_from_older_profile},
    {"table_cgroup_column", t_table_cgroup_column},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
