/*
 * test_report_restarts.c — long runs in stages (report_restarts.c) on
 * synthetic run folders: the flat memory-stress run of
 * test_report_synth.h, one group "node" of two instances, each of which
 * the runner restarted: every process counts its cycles from 0 again and
 * appends them to the same work.csv (with a last row as it stops), and
 * result.json lists each restart with its stop, its time to ready and,
 * for some runs, the stages and actions.
 *
 * The counter must add up across the processes (three counting 0..100
 * make 300, the header one of them writes again skipped) so that a disk
 * that keeps 16 KiB a cycle over the whole run gives 16 KiB a cycle;
 * restart time growing with cycles so far must be found growing with its
 * slope, flat times must not be; a drop that no listed restart explains
 * is taken as one with a note; malformed restarts are an error or left
 * out with a note.
 *
 * `test_report_restarts --write-run DIR` writes the run DIR/restarts
 * (five stages, four restarts growing with cycles) and exits.
 */
#include "test_report_synth.h"

#define START_MS (START_NS / 1000000)

static const struct synth_group node_groups[] = {
    {"node", 2, 512 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 0, 0.3 * MiB, 0, 0, 0},
};
static const struct synth node_run = {5, node_groups, 1};

/* One instance's processes: nproc of them, each counting `per` cycles
 * at 10 a second; restart k takes secs[k] seconds from stop to ready. */
struct proc_plan {
    int nproc;
    int per;
    double secs[8];
};

/* When process j starts and is stopped, on the run's clock (ms). */
struct span {
    int64_t start, stop;
};

static void
spans_of(const struct proc_plan *pp, struct span *sp)
{
    int64_t t = 0;

    for (int j = 0; j < pp->nproc; j++) {
        sp[j].start = t;
        sp[j].stop = t + (int64_t)(pp->per / 10) * 1000 + 500;
        /* it exits 200 ms after the stop, the next starts 100 ms later */
        t = sp[j].stop + 300;
    }
}

/* The instance's total cycles at t (ms), as the planted truth. */
static double
total_at_ms(const struct proc_plan *pp, const struct span *sp, double t)
{
    double c = 0;

    for (int j = 0; j < pp->nproc; j++) {
        double run = t - (double)sp[j].start;
        double n = run < 0 ? 0 : run / 100;

        c += n > pp->per ? pp->per : n;
    }
    return c;
}

static void
work_csv(const char *idir, const struct proc_plan *pp, const struct span *sp)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "time_ms,name,value\n");
    for (int j = 0; j < pp->nproc; j++) {
        /* the third process could not see the file: a header again */
        if (j == 2)
            strbuf_adds(&sb, "time_ms,name,value\r\n");
        for (int k = 0; k <= pp->per / 10; k++) {
            long long t = START_MS + sp[j].start + k * 1000LL;

            strbuf_addf(&sb, "%lld,cycles,%d\n%lld,errors,0\n", t, k * 10, t);
        }
        /* the last row, as the case ends on SIGTERM */
        strbuf_addf(&sb, "%lld,cycles,%d\n",
                    (long long)(START_MS + sp[j].stop + 100), pp->per);
    }
    put_text(idir, "work.csv", sb.buf);
    strbuf_release(&sb);
}

/* The state folder keeps 16 KiB per cycle across the processes. */
static void
disk_csv(const char *idir, const struct proc_plan *pp, const struct span *sp)
{
    struct strbuf sb;
    int64_t end = sp[pp->nproc - 1].stop;

    strbuf_init(&sb);
    strbuf_adds(&sb, "time,t_ms,path,allocated_bytes,apparent_bytes,files\n");
    for (int64_t t = 0; t <= end; t += 2000) {
        char ts[40];
        static const double e[] = {0.6, -0.9, 0.3, 1.0, -0.4, -0.7};

        time_rfc3339(START_NS + t * 1000000, ts, sizeof(ts));
        strbuf_addf(&sb, "%s,%lld,state,%lld,%lld,3\n", ts, (long long)t,
                    (long long)(MiB + 16384 * total_at_ms(pp, sp, (double)t) +
                                e[(t / 2000) % 6] * 2048),
                    (long long)(4 * MiB));
    }
    put_text(idir, "disk.csv", sb.buf);
    strbuf_release(&sb);
}

static cJSON *
restart_obj(const struct proc_plan *pp, const struct span *sp, int k)
{
    cJSON *o = cJSON_CreateObject();
    int64_t stop = sp[k].stop;
    char stage[32];

    snprintf(stage, sizeof(stage), "load-%d", k + 1);
    cJSON_AddStringToObject(o, "stage", stage);
    cJSON_AddNumberToObject(o, "action_index", 2 * k + 1);
    cJSON_AddNumberToObject(o, "stop_ms", (double)stop);
    cJSON_AddNumberToObject(o, "stop_unix_ms", (double)(START_MS + stop));
    cJSON_AddNumberToObject(o, "exit_ms", (double)(stop + 200));
    cJSON_AddNumberToObject(o, "start_ms", (double)(stop + 300));
    if (pp->secs[k] > 0) {
        cJSON_AddNumberToObject(o, "ready_ms", stop + pp->secs[k] * 1000);
        cJSON_AddNumberToObject(o, "ready_unix_ms",
                                START_MS + stop + pp->secs[k] * 1000);
        cJSON_AddNumberToObject(o, "seconds", pp->secs[k]);
    } else {
        cJSON_AddNullToObject(o, "ready_ms");
        cJSON_AddNullToObject(o, "ready_unix_ms");
        cJSON_AddNullToObject(o, "seconds");
    }
    cJSON_AddNumberToObject(o, "down_seconds", 0.2);
    cJSON_AddStringToObject(o, "ready_by", "tcp");
    cJSON_AddBoolToObject(o, "killed", k == 1);
    return o;
}

/* The stages: load-1, restart node, load-2, ... */
static cJSON *
stages_arr(const struct proc_plan *pp, const struct span *sp)
{
    cJSON *a = cJSON_CreateArray();

    for (int j = 0; j < pp->nproc; j++) {
        cJSON *s = cJSON_CreateObject();
        char name[32];

        snprintf(name, sizeof(name), "load-%d", j + 1);
        cJSON_AddStringToObject(s, "stage", name);
        cJSON_AddNumberToObject(s, "start_ms", (double)sp[j].start);
        cJSON_AddNumberToObject(s, "end_ms", (double)sp[j].stop);
        cJSON_AddStringToObject(s, "ended_by", "duration");
        cJSON_AddItemToArray(a, s);
        if (j + 1 == pp->nproc)
            break;
        s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "action", "restart");
        cJSON_AddStringToObject(s, "group", "node");
        cJSON_AddNumberToObject(s, "start_ms", (double)sp[j].stop);
        cJSON_AddNumberToObject(s, "end_ms",
                                sp[j].stop + 1000 * (pp->secs[j] + 0.5));
        cJSON_AddItemToArray(a, s);
    }
    return a;
}

static void
edit_result(const char *dir, void (*fn)(cJSON *res, void *arg), void *arg)
{
    cleanup_free char *text = slurp(dir, "result.json");
    cJSON *res = cJSON_Parse(text);
    char *out;

    CHECK(res != NULL);
    fn(res, arg);
    out = cJSON_Print(res);
    put_text(dir, "result.json", out);
    free(out);
    cJSON_Delete(res);
}

struct plan_edit {
    const struct proc_plan *pp; /* per instance */
    bool stages;
    int listed; /* restarts listed per instance; -1: all */
};

static void
add_restarts(cJSON *res, void *arg)
{
    const struct plan_edit *pe = arg;
    const cJSON *in;
    int i = 0;

    cJSON_ArrayForEach (in, cJSON_GetObjectItem(res, "instances")) {
        const struct proc_plan *pp = &pe->pp[i++];
        struct span sp[8];
        cJSON *a = cJSON_CreateArray();

        spans_of(pp, sp);
        for (int k = 0; k + 1 < pp->nproc && (pe->listed < 0 || k < pe->listed);
             k++)
            cJSON_AddItemToArray(a, restart_obj(pp, sp, k));
        cJSON_AddItemToObject((cJSON *)in, "restarts", a);
        cJSON_AddNumberToObject((cJSON *)in, "ready_ms", 350);
        cJSON_AddStringToObject((cJSON *)in, "ready_by", "tcp");
        if (i == 1 && pe->stages)
            cJSON_AddItemToObject(res, "stages", stages_arr(pp, sp));
        if (i == 1)
            cJSON_ReplaceItemInObject(
                res, "duration_s",
                cJSON_CreateNumber((double)sp[pp->nproc - 1].stop / 1000));
    }
}

/* The run in dir with pp[i] for instance i, its first `listed`
 * restarts in result.json (-1: all). */
static void
restart_write_at(const char *dir, const struct proc_plan *pp, bool stages,
                 int listed)
{
    struct plan_edit pe = {pp, stages, listed};

    synth_write(dir, &node_run);

    for (int i = 0; i < node_groups[0].ninst; i++) {
        cleanup_free char *idir = xasprintf("%s/node/%d", dir, i);
        struct span sp[8];

        spans_of(&pp[i], sp);
        work_csv(idir, &pp[i], sp);
        disk_csv(idir, &pp[i], sp);
    }
    edit_result(dir, add_restarts, &pe);
}

/* The same as the run `name` of the test's folder. */
static char *
restart_write(const char *name, const struct proc_plan *pp, bool stages,
              int listed)
{
    char *dir = path_join(th_tmpdir(), name);

    restart_write_at(dir, pp, stages, listed);
    return dir;
}

static cJSON *
restart_report(const char *name, const struct proc_plan *pp, bool stages,
               char **dir, char **table)
{
    struct err err = {0};

    *dir = restart_write(name, pp, stages, -1);
    CHECK_MSG(generate(*dir, table, &err) == 0, "%s", err.msg);
    return summary(*dir);
}

static const cJSON *
fit_of(const cJSON *s, const char *series, const char *x)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, at(s, "groups.#node.fits")) {
        if (strcmp(at_str(f, "series"), series) == 0 &&
            strcmp(at_str(f, "x"), x) == 0 &&
            cJSON_IsNull(cJSON_GetObjectItem(f, "stage")))
            return f;
    }
    th_fail(__FILE__, __LINE__, "no fit of %s against %s", series, x);
    return NULL;
}

static bool
near(double got, double want, double frac)
{
    return fabs(got - want) <= fabs(want) * frac;
}

/* The instance's counter after the report read it. */
static const struct report_points *
counter(const struct report *r, const char *label, const char *name)
{
    for (size_t i = 0; i < r->ninsts; i++)
        for (size_t c = 0; c < r->insts[i].work.ncounters; c++)
            if (strcmp(r->insts[i].label, label) == 0 &&
                strcmp(r->insts[i].work.counters[c].name, name) == 0)
                return &r->insts[i].work.counters[c];
    th_fail(__FILE__, __LINE__, "%s has no counter %s", label, name);
    return NULL;
}

static void
check_totals(const char *dir, double want)
{
    struct err err = {0};
    struct report *r = report_build(dir, NULL, &err);
    const struct report_points *p;

    CHECK_MSG(r != NULL, "%s", err.msg);
    p = counter(r, "node/0", "cycles");
    CHECK_MSG(p->v[p->n - 1] == want, "total %.0f", p->v[p->n - 1]);
    for (size_t i = 1; i < p->n; i++)
        CHECK_MSG(p->v[i] >= p->v[i - 1], "row %zu: %.0f after %.0f", i,
                  p->v[i], p->v[i - 1]);
    report_destroy(&r);
}

/* ---- cases --------------------------------------------------------------- */

static const struct proc_plan three[2] = {
    {3, 100, {0.4, 0.5}},
    {3, 100, {0.45, 0.5}},
};

/* 3 processes counting 0..100 make 300, and the disk's 16 KiB a cycle
 * over the whole run is found across the restarts. */
static void
t_totals(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = restart_report("totals", three, false, &dir, &table);
    const cJSON *f = fit_of(s, "disk:state:allocated", "cycles");

    check_totals(dir, 300);
    CHECK_MSG(near(at_num(f, "slope"), 16384, 0.10), "slope %.1f",
              at_num(f, "slope"));
    CHECK_EQ_STR(at_str(f, "verdict"), "growing");
    CHECK_EQ_INT(at_num(s, "instances.#node/0.restarts.0.cycles_so_far.cycles"),
                 100);
    CHECK_EQ_INT(at_num(s, "instances.#node/0.restarts.1.cycles_so_far.cycles"),
                 200);
    CHECK(!has_note(s, "went down"));
    cJSON_Delete(s);
}

/* The second restart is not in result.json: its drop is taken as one,
 * with a note; without any listed, both are. */
static void
t_drop_noted(void)
{
    cleanup_free char *dir = restart_write("drop", three, false, 1);
    cleanup_free char *table = NULL, *dir2 = NULL;
    struct err err = {0};
    cJSON *s;

    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    s = summary(dir);
    CHECK(has_note(s, "node/0/work.csv: cycles went down from 100 to 0 at "));
    CHECK(has_note(s, "with no restart listed in result.json there: taken "
                      "as a restart, counted on from 100"));
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "instances.#node/0.restarts")), 1);
    CHECK_CONTAINS(table, "went down from 100 to 0");
    check_totals(dir, 300);
    cJSON_Delete(s);
    free(table);
    dir2 = restart_write("drop-none", three, false, 0);
    CHECK_MSG(generate(dir2, &table, &err) == 0, "%s", err.msg);
    s = summary(dir2);
    CHECK(has_note(s, "(and 1 more such drops)"));
    check_totals(dir2, 300);
    CHECK(strstr(table, "restarts (stop to ready)") == NULL);
    cJSON_Delete(s);
}

/* Restart time grows 0.2 ms per cycle so far (0.2 s per restart of
 * 1000 cycles), with a little noise. */
static const struct proc_plan growing[2] = {
    {5, 1000, {0.41, 0.59, 0.80, 1.02}},
    {5, 1000, {0.39, 0.61, 0.79, 0.99}},
};

static void
t_growing(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = restart_report("growing", growing, true, &dir, &table);
    const cJSON *f = fit_of(s, "restart:seconds", "cycles");

    CHECK_MSG(near(at_num(f, "slope"), 0.0002, 0.10), "slope %g",
              at_num(f, "slope"));
    CHECK(at_num(f, "r2") > 0.95);
    CHECK_EQ_STR(at_str(f, "verdict"), "growing");
    CHECK_EQ_INT(at_num(f, "instances"), 2);
    CHECK_EQ_INT(at_num(f, "points"), 4);
    f = fit_of(s, "restart:seconds", "restarts");
    CHECK_MSG(near(at_num(f, "slope"), 0.2, 0.10), "slope %g",
              at_num(f, "slope"));
    CHECK_EQ_STR(at_str(f, "verdict"), "growing");
    /* errors never moved: nothing to fit against */
    cJSON_ArrayForEach (f, at(s, "groups.#node.fits")) {
        CHECK(strcmp(at_str(f, "x"), "errors") != 0);
    }
    CHECK_CONTAINS(table, "restarts (stop to ready):");
    CHECK_CONTAINS(table, "node           8 restarts, 700 ms median (max "
                          "1.0 s), 2 killed after their grace; growing +2");
    CHECK_CONTAINS(table, " ms per 1000 cycles against cycles (R\u00b2 1.00)");
    /* not again among the growing fits per unit of work */
    CHECK(strstr(table, "restart:seconds") == NULL);
    CHECK_CONTAINS(table, "stages: load-1 (100.5 s), restart node, load-2");
    cJSON_Delete(s);
}

/* Flat restart times are not growing, against cycles or restarts. */
static void
t_flat(void)
{
    static const struct proc_plan flat[2] = {
        {5, 1000, {0.52, 0.48, 0.51, 0.49}},
        {5, 1000, {0.50, 0.53, 0.47, 0.50}},
    };
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = restart_report("flat", flat, true, &dir, &table);

    CHECK_EQ_STR(at_str(fit_of(s, "restart:seconds", "cycles"), "verdict"),
                 "flat");
    CHECK_EQ_STR(at_str(fit_of(s, "restart:seconds", "restarts"), "verdict"),
                 "flat");
    CHECK_CONTAINS(table, "8 restarts, 500 ms median (max 530 ms)");
    CHECK_CONTAINS(table, "; flat ");
    cJSON_Delete(s);
}

/* summary.json's restarts and stages. */
static void
t_summary(void)
{
    static const struct proc_plan some[2] = {
        {3, 100, {0.4, 0}}, /* the second restart never got ready */
        {3, 100, {0.6, 0.8}},
    };
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = restart_report("summary", some, true, &dir, &table);
    const cJSON *g = at(s, "groups.#node.restarts");
    const cJSON *x = at(s, "instances.#node/0.restarts.1");

    CHECK_EQ_INT(at_num(g, "count"), 4);
    CHECK_EQ_INT(cJSON_GetArraySize(at(g, "seconds")), 3);
    CHECK(near(at_num(g, "median_s"), 0.6, 1e-9));
    CHECK(near(at_num(g, "max_s"), 0.8, 1e-9));
    CHECK_EQ_INT(at_num(g, "never_ready"), 1);
    CHECK_EQ_INT(at_num(g, "killed"), 2);
    CHECK(cJSON_IsNull(at(x, "seconds")));
    CHECK_EQ_STR(at_str(x, "stage"), "load-2");
    CHECK_EQ_STR(at_str(x, "ready_by"), "tcp");
    CHECK(cJSON_IsTrue(at(x, "killed")));
    CHECK_EQ_INT(at_num(x, "number"), 2);
    CHECK_EQ_INT(at_num(x, "stop_ms"), 21300);
    CHECK_EQ_INT(at_num(s, "instances.#node/0.ready_ms"), 350);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "stages")), 5);
    CHECK_EQ_STR(at_str(s, "stages.1.action"), "restart");
    CHECK_EQ_STR(at_str(s, "stages.1.group"), "node");
    CHECK_EQ_STR(at_str(s, "stages.2.stage"), "load-2");
    CHECK_EQ_STR(at_str(s, "stages.2.ended_by"), "duration");
    /* node/0 has one timed restart: no fit of its own; node/1's two give
     * a line without a verdict */
    CHECK_EQ_STR(at_str(fit_of(s, "restart:seconds", "cycles"), "verdict"),
                 "not enough points");
    CHECK_EQ_INT(at_num(fit_of(s, "restart:seconds", "cycles"), "instances"),
                 1);
    CHECK_CONTAINS(table, "4 restarts, 600 ms median (max 800 ms), 1 never "
                          "ready");
    /* stages from result.json are the fits' windows */
    CHECK(at(s, "groups.#node.fits.0.stage") != NULL &&
          cJSON_IsString(at(s, "groups.#node.fits.0.stage")));
    cJSON_Delete(s);
}

static void
t_html(void)
{
    cleanup_free char *dir = NULL, *table = NULL, *html = NULL;
    cJSON *s = restart_report("page", growing, true, &dir, &table);

    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "<h2>Stages and restarts</h2>");
    CHECK_CONTAINS(html, "<td class=\"act\">restart node</td>");
    CHECK_CONTAINS(html, "node/0 410 ms, node/1 390 ms");
    CHECK_CONTAINS(html, " ms per 1000 cycles</td>");
    CHECK_CONTAINS(html, "<td class=\"fn\">restart number</td>");
    CHECK_CONTAINS(html, "cycles 1000, errors 0");
    CHECK_CONTAINS(html, "<rect class=\"stage0\"");
    CHECK_CONTAINS(html, "<line class=\"act\"");
    cJSON_Delete(s);
}

/* A run without stages or restarts reads as before. */
static void
t_none(void)
{
    cleanup_free char *dir = NULL, *table = NULL, *html = NULL;
    cJSON *s = report_of("plain", &node_run, &dir, &table);

    CHECK_EQ_INT(at_num(s, "groups.#node.restarts.count"), 0);
    CHECK(cJSON_IsNull(at(s, "groups.#node.restarts.median_s")));
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "stages")), 0);
    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "instances.#node/0.restarts")), 0);
    html = slurp(dir, "report.html");
    CHECK(strstr(html, "Stages and restarts") == NULL);
    CHECK(strstr(table, "restarts") == NULL);
    CHECK(strstr(table, "stages:") == NULL);
    cJSON_Delete(s);
}

struct bad {
    const char *what, *value;
};

static void
set_bad(cJSON *res, void *arg)
{
    const struct bad *b = arg;
    cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "instances"), 0);
    cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(in, "restarts"), 1);
    cJSON *v = cJSON_Parse(b->value);

    if (strcmp(b->what, "restarts") == 0)
        cJSON_ReplaceItemInObject(in, "restarts", v);
    else if (strcmp(b->what, "stages") == 0)
        cJSON_AddItemToObject(res, "stages", v);
    else
        cJSON_ReplaceItemInObject(x, b->what, v);
}

static void
t_malformed(void)
{
    static const struct {
        struct bad bad;
        const char *msg;
    } cases[] = {
        {{"seconds", "\"slow\""},
         "result.json: instances[0].restarts[1].seconds: expected a number, "
         "got a string"},
        {{"killed", "3"},
         "result.json: instances[0].restarts[1].killed: expected true or "
         "false, got a number"},
        {{"restarts", "{}"},
         "result.json: instances[0].restarts: expected an array, got an "
         "object"},
        {{"restarts", "[1]"},
         "result.json: instances[0].restarts[0]: expected an object"},
        {{"stages", "[{\"start_ms\": 0}]"},
         "result.json: stages[0]: expected a stage (\"stage\") or an action "
         "(\"action\" and \"group\")"},
        {{"stages", "[{\"action\": \"restart\", \"start_ms\": 0}]"},
         "result.json: stages[0]: expected a stage"},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        cleanup_free char *name = xasprintf("bad%zu", i);
        cleanup_free char *dir = restart_write(name, three, false, -1);
        struct err err = {0};
        struct report_opts o = {0};

        edit_result(dir, set_bad, (void *)&cases[i].bad);
        CHECK_EQ_INT(report_generate(dir, &o, &err), -1);
        CHECK_CONTAINS(err.msg, cases[i].msg);
        CHECK_EQ_INT(err.status, EXIT_DATAERR);
    }
}

/* A restart without its stop's time, or with negative seconds, is left
 * out with a note; the rest of the report stands. */
static void
t_left_out(void)
{
    static const struct bad nostop = {"stop_unix_ms", "null"};
    static const struct bad neg = {"seconds", "-0.5"};
    const struct bad *bads[] = {&nostop, &neg};
    const char *notes[] = {"node/0: restart 2 in result.json has no stop_ms "
                           "or stop_unix_ms: left out",
                           "node/0: restart 2 in result.json has negative "
                           "seconds: left out"};

    for (size_t i = 0; i < 2; i++) {
        cleanup_free char *name = xasprintf("out%zu", i);
        cleanup_free char *dir = restart_write(name, three, false, -1);
        cleanup_free char *table = NULL;
        struct err err = {0};
        cJSON *s;

        edit_result(dir, set_bad, (void *)bads[i]);
        CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
        s = summary(dir);
        CHECK(has_note(s, notes[i]));
        CHECK_EQ_INT(cJSON_GetArraySize(at(s, "instances.#node/0.restarts")),
                     1);
        CHECK_EQ_INT(at_num(s, "instances.#node/0.restarts.0.number"), 1);
        /* its drop is then one no listed restart explains */
        CHECK(has_note(s, "node/0/work.csv: cycles went down"));
        check_totals(dir, 300);
        cJSON_Delete(s);
    }
}

/* Rows by hand through report__counter_totals: the old process's last
 * row after the stop stays its own; the new one's first row goes on
 * from it, whether it drops (2 after 12) or not (20 after 12, a counter
 * the listed restart still restarts); a later drop no restart explains
 * goes on from the value before it, with a note. */
static void
t_rows(void)
{
    static const int64_t wall[] = {1000, 2000, 3000, 3600, 4000, 5000, 6000};
    static const double dropping[] = {0, 5, 10, 12, 2, 7, 3};
    static const double want_d[] = {0, 5, 10, 12, 14, 19, 22};
    static const double rising[] = {0, 5, 10, 12, 20, 25, 30};
    static const double want_r[] = {0, 5, 10, 12, 32, 37, 42};
    const double *v[] = {dropping, rising}, *want[] = {want_d, want_r};

    for (size_t c = 0; c < 2; c++) {
        struct report r = {0};
        struct report_inst in = {0};
        struct report_restart x = {0};
        struct report_points p = {0};

        in.label = (char *)"x/0";
        x.stop_unix = 3500;
        x.start_unix = 4000;
        in.restarts = &x;
        in.nrestarts = 1;
        for (size_t i = 0; i < ARRAY_LEN(wall); i++)
            report__points_add(&p, wall[i], -1, v[c][i]);
        p.name = xstrdup("cycles");
        in.work.counters = &p;
        in.work.ncounters = 1;
        report__counter_totals(&r, &in);
        for (size_t i = 0; i < p.n; i++)
            CHECK_MSG(p.v[i] == want[c][i], "case %zu row %zu: %.0f, not %.0f",
                      c, i, p.v[i], want[c][i]);
        CHECK_EQ_INT(r.notes.n, c == 0 ? 1 : 0);
        if (c == 0)
            CHECK_CONTAINS(r.notes.v[0], "x/0/work.csv: cycles went down "
                                         "from 7 to 3 at unix ms 6000");
        strvec_release(&r.notes);
        report__points_release(&p);
    }
}

static const struct th_case cases[] = {
    {"rows", t_rows},
    {"totals", t_totals},
    {"drop_noted", t_drop_noted},
    {"growing", t_growing},
    {"flat", t_flat},
    {"summary", t_summary},
    {"html", t_html},
    {"none", t_none},
    {"malformed", t_malformed},
    {"left_out", t_left_out},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-run") == 0) {
        cleanup_free char *d = path_join(argv[2], "restarts");

        restart_write_at(d, growing, true, -1);
        return th_failures() ? 1 : 0;
    }
    return th_main(argc, argv, cases);
}
