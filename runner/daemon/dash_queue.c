/*
 * dash_queue.c — the dashboard's queue and a task's page.
 *
 * The queue: what the budgets hold now, the running tasks, the queued
 * ones in the order they will start with why each waits, the schedules
 * with their next firing, and the last tasks that ended. A task's page:
 * its fields, its report, its history, and the end of its build log and
 * log. Both reload themselves every few seconds while something is
 * queued or running (a meta refresh: the pages carry no script), and
 * every task not yet ended has a button that cancels it.
 */
#include "daemon/daemon_int.h"

#include "base/fsat.h"
#include "base/strbuf.h"
#include "base/util.h"

#include "ty_json.h"
#include "ty_units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REFRESH_S 3
#define ENDED_SHOWN 50
#define TAIL_BYTES ((off_t)48 << 10)

static const char *
state_class(const struct daemon_task *t)
{
    if (t->state == TASK_DONE)
        return t->outcome && strcmp(t->outcome, "success") == 0 ? "st-done"
                                                                : "st-bad";
    switch (t->state) {
    case TASK_QUEUED:
        return "st-queued";
    case TASK_RUNNING:
        return "st-running";
    case TASK_CANCELED:
        return "st-canceled";
    case TASK_INTERRUPTED:
        return "st-interrupted";
    default:
        return "st-refused";
    }
}

static void
badge(struct strbuf *sb, const struct daemon_task *t)
{
    strbuf_addf(sb, "<span class=\"badge %s\">%s</span>", state_class(t),
                daemon__state_name(t->state));
}

static void
fmt_need(const struct admit_need *n, char *buf, size_t size)
{
    char mem[32];

    if (n->unlimited_memory)
        snprintf(mem, sizeof(mem), "no limit");
    else
        ty__format_bytes(n->memory_bytes, mem, sizeof(mem));
    snprintf(buf, size, "%s, %.2f CPU", mem, (double)n->millicpu / 1000);
}

/* The name its history is recorded under. */
static const char *
history_name(const struct daemon_task *t)
{
    return t->schedule ? t->schedule : t->comp_name;
}

static void
history_link(struct strbuf *sb, const char *name, const char *text)
{
    strbuf_adds(sb, "<a href=\"/history?name=");
    daemon__dash_urlarg(sb, name);
    strbuf_adds(sb, "\">");
    strbuf_add_html(sb, text);
    strbuf_adds(sb, "</a>");
}

enum cols { COL_QUEUE, COL_RUNNING, COL_ENDED };

static void
task_row(const struct daemon *d, struct strbuf *sb, const struct daemon_task *t,
         enum cols cols)
{
    char need[64], when[32];

    fmt_need(&t->need, need, sizeof(need));
    strbuf_addf(sb,
                "<tr id=\"task-%lld\" data-state=\"%s\"><td><a "
                "href=\"/tasks/%lld\">%lld</a></td><td>",
                (long long)t->id, daemon__state_name(t->state),
                (long long)t->id, (long long)t->id);
    strbuf_add_html(sb, t->name);
    if (t->schedule) {
        strbuf_adds(sb, " <small class=\"note\">(schedule)</small>");
    }
    strbuf_adds(sb, "</td><td>");
    badge(sb, t);
    if (t->outcome && t->state != TASK_QUEUED) {
        strbuf_adds(sb, " ");
        strbuf_add_html(sb, t->outcome);
    }
    strbuf_addf(sb, "</td><td>%s</td>", need);
    daemon__dash_time(cols == COL_QUEUE     ? t->submitted_ns
                      : cols == COL_RUNNING ? t->started_ns
                                            : t->ended_ns,
                      when, sizeof(when));
    strbuf_addf(sb, "<td>%s</td><td class=\"why\">", when);
    strbuf_add_html(sb, t->reason ? t->reason : "");
    strbuf_adds(sb, "</td><td>");
    if (t->started_ns)
        strbuf_addf(sb, "<a href=\"/tasks/%lld/report\">report</a> ",
                    (long long)t->id);
    history_link(sb, history_name(t), "history");
    strbuf_adds(sb, "</td><td>");
    if (!daemon__state_ended(t->state))
        daemon__dash_cancel_form(d, sb, t->id, true);
    strbuf_adds(sb, "</td></tr>\n");
}

static void
task_table(const struct daemon *d, struct strbuf *sb, const char *id,
           const char *title, struct daemon_task *const *v, size_t n,
           enum cols cols)
{
    static const char *const when[] = {"submitted", "started", "ended"};

    strbuf_addf(sb, "<section id=\"%s\"><h2>%s (%zu)</h2>", id, title, n);
    if (n == 0) {
        strbuf_adds(sb, "<p class=\"note\">none</p></section>\n");
        return;
    }
    strbuf_addf(sb,
                "<table class=\"tasks\"><tr><th>task</th><th>name</th>"
                "<th>state</th><th>needs</th><th>%s</th><th>%s</th><th></th>"
                "<th></th></tr>\n",
                when[cols], cols == COL_QUEUE ? "waits because" : "reason");
    for (size_t i = 0; i < n; i++)
        task_row(d, sb, v[i], cols);
    strbuf_adds(sb, "</table></section>\n");
}

static void
meter(struct strbuf *sb, const char *what, const char *used, const char *of,
      double frac)
{
    if (frac > 1)
        frac = 1;
    strbuf_addf(sb,
                "<div>%s: <b>%s</b> of %s</div><div class=\"meter\"><span "
                "style=\"width:%.1f%%\"></span></div>",
                what, used, of, frac * 100);
}

static void
budget(const struct daemon *d, struct strbuf *sb, struct daemon_task *const *v,
       size_t n)
{
    struct admit_need used = {0};
    char a[64], b[32];

    for (size_t i = 0; i < n; i++)
        admit__need_add(&used, &v[i]->need);
    strbuf_adds(sb, "<section id=\"budget\"><h2>Budget in use</h2>");
    ty__format_bytes(used.memory_bytes, a, sizeof(a));
    ty__format_bytes(d->budget.memory_bytes, b, sizeof(b));
    if (used.unlimited_memory)
        snprintf(a, sizeof(a), "all (a task without a memory limit)");
    meter(sb, "memory", a, b,
          used.unlimited_memory || d->budget.memory_bytes == 0
              ? 1
              : (double)used.memory_bytes / (double)d->budget.memory_bytes);
    snprintf(a, sizeof(a), "%.2f CPU", (double)used.millicpu / 1000);
    snprintf(b, sizeof(b), "%.2f CPU", (double)d->budget.millicpu / 1000);
    meter(sb, "CPU", a, b,
          d->budget.millicpu > 0
              ? (double)used.millicpu / (double)d->budget.millicpu
              : 0);
    strbuf_adds(sb, "</section>\n");
}

static void
schedules(struct daemon *d, struct strbuf *sb)
{
    cJSON *arr = NULL, *s;
    struct err err = {0};

    strbuf_adds(sb, "<section id=\"schedules\"><h2>Schedules</h2>");
    if (daemon__schedules_json(d, &arr, &err) < 0) {
        strbuf_adds(sb, "<p class=\"note\">");
        strbuf_add_html(sb, err.msg);
        strbuf_adds(sb, "</p></section>\n");
        return;
    }
    if (cJSON_GetArraySize(arr) == 0) {
        strbuf_adds(sb, "<p class=\"note\">none: <code>testyard schedule add"
                        "</code> makes one</p></section>\n");
        cJSON_Delete(arr);
        return;
    }
    strbuf_adds(sb, "<table><tr><th>name</th><th>when</th><th>next</th>"
                    "<th>last task</th><th></th></tr>\n");
    cJSON_ArrayForEach (s, arr) {
        const cJSON *last = cJSON_GetObjectItemCaseSensitive(s, "last_task");
        const cJSON *paused = cJSON_GetObjectItemCaseSensitive(s, "paused");
        const char *name = ty__json_str(s, "name");

        strbuf_adds(sb, "<tr><td>");
        strbuf_add_html(sb, name);
        strbuf_adds(sb, "</td><td>");
        strbuf_add_html(sb, ty__json_str(s, "spec"));
        strbuf_adds(sb, " <small class=\"note\">");
        strbuf_add_html(sb, ty__json_str(s, "tz"));
        strbuf_adds(sb, "</small></td><td>");
        strbuf_add_html(sb, cJSON_IsTrue(paused)      ? "paused"
                            : ty__json_str(s, "next") ? ty__json_str(s, "next")
                                                      : "-");
        strbuf_adds(sb, "</td><td>");
        if (cJSON_IsObject(last)) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(last, "id");

            strbuf_addf(sb, "<a href=\"/tasks/%lld\">%lld</a> ",
                        (long long)cJSON_GetNumberValue(id),
                        (long long)cJSON_GetNumberValue(id));
            strbuf_add_html(sb, ty__json_str(last, "outcome")
                                    ? ty__json_str(last, "outcome")
                                    : ty__json_str(last, "state"));
        } else {
            strbuf_adds(sb, "-");
        }
        strbuf_adds(sb, "</td><td>");
        history_link(sb, name, "history");
        strbuf_adds(sb, "</td></tr>\n");
    }
    strbuf_adds(sb, "</table></section>\n");
    cJSON_Delete(arr);
}

unsigned
daemon__page_queue(struct daemon *d, struct strbuf *sb)
{
    static const char where[] =
        "state IN ('queued', 'running') OR id IN (SELECT id FROM tasks"
        " WHERE state NOT IN ('queued', 'running') ORDER BY id DESC LIMIT 50)";
    struct daemon_task *v = NULL, **run, **queued, **ended;
    size_t n = 0, nrun = 0, nq = 0, nend = 0;
    struct err err = {0};
    int rc;

    pthread_mutex_lock(&d->mu);
    rc = daemon__tasks_load(d->db, where, &v, &n, &err);
    pthread_mutex_unlock(&d->mu);
    if (rc < 0) {
        daemon__dash_error(sb, d, 500, err.msg);
        return 500;
    }
    run = xcalloc(n + 1, sizeof(*run));
    queued = xcalloc(n + 1, sizeof(*queued));
    ended = xcalloc(n + 1, sizeof(*ended));
    for (size_t i = n; i-- > 0;) {
        if (v[i].state == TASK_RUNNING)
            run[nrun++] = &v[i];
        else if (v[i].state == TASK_QUEUED)
            queued[nq++] = &v[i];
        else if (nend < ENDED_SHOWN)
            ended[nend++] = &v[i];
    }
    daemon__queue_sort(queued, nq);
    daemon__dash_head(sb, d, "Queue", nrun + nq > 0 ? REFRESH_S : 0);
    strbuf_addf(sb,
                "<h1>Queue <small class=\"note\">%zu running, %zu "
                "queued</small></h1>\n",
                nrun, nq);
    budget(d, sb, run, nrun);
    task_table(d, sb, "running", "Running", run, nrun, COL_RUNNING);
    task_table(d, sb, "queued", "Queued, in the order they start", queued, nq,
               COL_QUEUE);
    schedules(d, sb);
    task_table(d, sb, "ended", "Ended lately", ended, nend, COL_ENDED);
    daemon__dash_foot(sb);
    for (size_t i = 0; i < n; i++)
        daemon__task_release(&v[i]);
    free(v);
    free(run);
    free(queued);
    free(ended);
    return 200;
}

/* ---- a task -------------------------------------------------------- */

static void
kv(struct strbuf *sb, const char *key, const char *value)
{
    strbuf_addf(sb, "<dt>%s</dt><dd>", key);
    strbuf_add_html(sb, value && value[0] ? value : "-");
    strbuf_adds(sb, "</dd>");
}

/* The last TAIL_BYTES of DATA/rel (no link followed), escaped. */
static void
tail(struct daemon *d, struct strbuf *sb, const char *rel, const char *title)
{
    struct err err = {0};
    int fd = fsat_open(d->datafd, rel, O_RDONLY, 0, &err);
    struct stat st;
    char *buf;
    ssize_t got;
    off_t from;

    if (fd < 0)
        return;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }
    from = st.st_size > TAIL_BYTES ? st.st_size - TAIL_BYTES : 0;
    buf = xmalloc((size_t)TAIL_BYTES + 1);
    got = pread(fd, buf, (size_t)(st.st_size - from), from);
    close(fd);
    if (got < 0)
        got = 0;
    buf[got] = '\0';
    strbuf_addf(sb, "<section class=\"logs\"><h2>%s</h2>", title);
    if (from > 0)
        strbuf_addf(sb, "<p class=\"note\">its last %lld KiB</p>",
                    (long long)(TAIL_BYTES >> 10));
    strbuf_adds(sb, "<pre class=\"log\">");
    /* a NUL in the file ends what is shown, as it would in a terminal */
    strbuf_add_html(sb, buf);
    strbuf_adds(sb, "</pre></section>\n");
    free(buf);
}

unsigned
daemon__page_task(struct daemon *d, int64_t id, struct strbuf *sb)
{
    struct daemon_task t = {0};
    struct err err = {0};
    char buf[96], title[64];
    int rc;

    pthread_mutex_lock(&d->mu);
    rc = daemon__task_get(d->db, id, &t, &err);
    pthread_mutex_unlock(&d->mu);
    if (rc < 0) {
        unsigned status = err.code == ENOENT ? 404 : 500;

        daemon__dash_error(sb, d, status, err.msg);
        return status;
    }
    snprintf(title, sizeof(title), "Task %lld", (long long)id);
    daemon__dash_head(sb, d, title,
                      daemon__state_ended(t.state) ? 0 : REFRESH_S);
    strbuf_addf(sb, "<h1 id=\"task\" data-state=\"%s\">%s ",
                daemon__state_name(t.state), title);
    badge(sb, &t);
    strbuf_adds(sb, " ");
    if (!daemon__state_ended(t.state))
        daemon__dash_cancel_form(d, sb, t.id, false);
    strbuf_adds(sb, "</h1>\n<section><dl class=\"kv\">");
    kv(sb, "name", t.name);
    kv(sb, "composition", t.comp_name);
    kv(sb, "file", t.path);
    kv(sb, "outcome", t.outcome);
    kv(sb, daemon__state_ended(t.state) ? "reason" : "waits because", t.reason);
    snprintf(buf, sizeof(buf), "%lld", (long long)t.priority);
    kv(sb, "priority", buf);
    fmt_need(&t.need, buf, sizeof(buf));
    kv(sb, "needs", buf);
    daemon__dash_time(t.submitted_ns, buf, sizeof(buf));
    kv(sb, "submitted", buf);
    daemon__dash_time(t.started_ns, buf, sizeof(buf));
    kv(sb, "started", buf);
    daemon__dash_time(t.ended_ns, buf, sizeof(buf));
    kv(sb, "ended", buf);
    if (t.exit_status >= 0) {
        snprintf(buf, sizeof(buf), "%d", t.exit_status);
        kv(sb, "exit status", buf);
    }
    kv(sb, "schedule", t.schedule);
    kv(sb, "version", t.version);
    if (t.build_seconds >= 0) {
        snprintf(buf, sizeof(buf), "%.1f s", t.build_seconds);
        kv(sb, "build", buf);
    }
    strbuf_adds(sb, "</dl><p>");
    if (t.started_ns)
        strbuf_addf(sb,
                    "<a id=\"report\" href=\"/tasks/%lld/report\">the run's "
                    "report</a> &middot; <a href=\"/tasks/%lld/log\">the "
                    "whole log</a> &middot; ",
                    (long long)id, (long long)id);
    history_link(sb, history_name(&t), "its history");
    strbuf_adds(sb, "</p></section>\n");
    snprintf(buf, sizeof(buf), "tasks/%lld/build.log", (long long)id);
    tail(d, sb, buf, "Build log");
    snprintf(buf, sizeof(buf), "tasks/%lld/log", (long long)id);
    tail(d, sb, buf, "Log");
    daemon__dash_foot(sb);
    daemon__task_release(&t);
    return 200;
}
