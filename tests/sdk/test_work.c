/*
 * test_work.c — work.csv (sdk/ty_metrics_work.c): the header, a row per
 * changed counter at most once a second with totals that only rise,
 * tagged and quoted names as CSV fields, the rows of ty_metrics_flush and
 * the last row of every counter at the end, the cap, no second header in
 * a folder that has the file already, and rows that stay in the file when
 * the instance is killed (standalone, through the real sink).
 */
#include "metrics_cap.h"
#include "th.h"
#include "th_files.h"
#include "ty_int.h"
#include "ty_metrics.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXROWS 4096

struct row {
    long long time_ms, value;
    char name[128];
};

/* One CSV field at p into out (quotes undone); the character after it. */
static const char *
field(const char *p, char *out, size_t size)
{
    size_t n = 0;

    if (*p == '"') {
        for (p++; *p != '\0'; p++) {
            if (*p == '"' && p[1] != '"') {
                p++;
                break;
            }
            p += *p == '"';
            if (n + 1 < size)
                out[n++] = *p;
        }
    } else {
        for (; *p != '\0' && *p != ',' && *p != '\n'; p++)
            if (n + 1 < size)
                out[n++] = *p;
    }
    out[n] = '\0';
    return p;
}

/* The rows of a work.csv text after its header (which must be first when
 * header is true); returns how many, -1 on a malformed line. */
static int
parse(const char *text, bool header, struct row *rows, int max)
{
    const char *p = text ? text : "";
    int n = 0;

    if (header) {
        CHECK_MSG(strncmp(p, TY__WORK_HEADER, strlen(TY__WORK_HEADER)) == 0,
                  "no header: %.40s", p);
        p += strlen(TY__WORK_HEADER);
    }
    while (*p != '\0' && n < max) {
        char t[32], v[32];

        p = field(p, t, sizeof(t));
        if (*p++ != ',')
            return -1;
        p = field(p, rows[n].name, sizeof(rows[n].name));
        if (*p++ != ',')
            return -1;
        p = field(p, v, sizeof(v));
        if (*p++ != '\n')
            return -1;
        rows[n].time_ms = atoll(t);
        rows[n++].value = atoll(v);
    }
    return n;
}

/* Rows of name in order: totals and times never go down, and but for the
 * last, one a second at most. Returns how many; *last the final value. */
static int
check_series(const struct row *rows, int n, const char *name, long long *last)
{
    long long t = 0, v = 0;
    int k = 0, idx[MAXROWS];

    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0)
            idx[k++] = i;
    for (int j = 0; j < k; j++) {
        const struct row *r = &rows[idx[j]];

        CHECK_MSG(r->value >= v && r->time_ms >= t, "%s went back", name);
        if (j > 0 && j < k - 1)
            CHECK_MSG(r->time_ms - t >= 999, "%s: rows %lld ms apart", name,
                      r->time_ms - t);
        t = r->time_ms;
        v = r->value;
    }
    *last = v;
    return k;
}

/* A counter changing every 10 ms for 2.5 s, a tagged one, a name with a
 * quote: a few rows each, rising, quoted where needed, the totals last. */
static void
t_series(void)
{
    struct ty *ty = cap_handle("0");
    static struct row rows[MAXROWS];
    long long last;
    int n, k;

    for (int i = 0; i < 250; i++) {
        ty_counter_add(ty, "load.cycles", 1);
        ty_counter_add(ty, "load.cycles,stage=2", 2);
        usleep(10000);
    }
    ty_counter_add(ty, "say \"hi\"", 5);
    cap_handle_free(ty);
    n = parse(cap_work.buf, true, rows, MAXROWS);
    CHECK_MSG(n > 0, "%d rows:\n%s", n, cap_work.buf);
    k = check_series(rows, n, "load.cycles", &last);
    CHECK_MSG(k >= 2 && k <= 5, "%d rows", k);
    CHECK_EQ_INT(last, 250);
    k = check_series(rows, n, "load.cycles,stage=2", &last);
    CHECK_MSG(k >= 2 && k <= 5, "%d rows", k);
    CHECK_EQ_INT(last, 500);
    CHECK_EQ_INT(check_series(rows, n, "say \"hi\"", &last), 1);
    CHECK_EQ_INT(last, 5);
    CHECK_CONTAINS(cap_work.buf, ",\"load.cycles,stage=2\",500\n");
    CHECK_CONTAINS(cap_work.buf, ",\"say \"\"hi\"\"\",5\n");
    CHECK_CONTAINS(cap_work.buf, ",load.cycles,250\n");
    /* Only counters. */
    CHECK_EQ_INT(count_lines(cap_work.buf, "\n"), n + 1);
    cap_reset();
}

/* ty_metrics_flush: a row for each counter that changed, whenever; the
 * end: a row for every counter. Within a second, so no tick interferes
 * (a tick would only take rows from the flushes, not add any: nothing
 * changes between them). */
static void
t_flush_and_end(void)
{
    struct ty *ty = cap_handle("0");
    static struct row rows[16];
    static const struct {
        const char *name;
        long long value;
    } want[] = {{"a", 1}, {"b", 0}, {"a", 3}, {"a", 3}, {"b", 0}};
    int n;

    ty_counter_add(ty, "a", 1);
    ty_counter_add(ty, "b", 0);
    ty_gauge_set(ty, "g", 2);
    ty_histogram_observe(ty, "h", 2);
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    ty_counter_add(ty, "a", 2);
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    cap_handle_free(ty);
    n = parse(cap_work.buf, true, rows, 16);
    CHECK_MSG(n == 5, "%d rows:\n%s", n, cap_work.buf);
    for (int i = 0; i < n && i < 5; i++) {
        CHECK_EQ_STR(rows[i].name, want[i].name);
        CHECK_EQ_INT(rows[i].value, want[i].value);
    }
    cap_reset();
}

/* stderr to a file of the case's folder (returned, for reading back);
 * *saved keeps the old one for stderr_back. */
static char *
stderr_to_file(int *saved)
{
    char *path = NULL;
    int fd;

    *saved = -1;
    if (asprintf(&path, "%s/stderr", th_tmpdir()) < 0)
        return NULL;
    fflush(stderr);
    *saved = dup(STDERR_FILENO);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && *saved >= 0);
    dup2(fd, STDERR_FILENO);
    close(fd);
    return path;
}

static void
stderr_back(int saved)
{
    fflush(stderr);
    if (saved < 0)
        return;
    dup2(saved, STDERR_FILENO);
    close(saved);
}

/* A cap of 300 bytes: whole rows up to it, then nothing, said once. */
static void
t_cap(void)
{
    int saved = -1;
    char *err_path = stderr_to_file(&saved), *err;
    struct ty *ty;
    static struct row rows[64];
    char name[16];
    int n;

    ty__work_set_cap(300);
    ty = cap_handle("0");
    ty__work_set_cap(0);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "counter%02d", i);
        ty_counter_add(ty, name, i);
    }
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    ty_counter_add(ty, "counter00", 1);
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    cap_handle_free(ty);
    CHECK_MSG(cap_work.len > 200 && cap_work.len <= 300, "%zu bytes",
              cap_work.len);
    CHECK(cap_work.len > 0 && cap_work.buf[cap_work.len - 1] == '\n');
    n = parse(cap_work.buf, true, rows, 64);
    CHECK_MSG(n > 5 && n < 40, "%d rows", n);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(rows[i].value, i);
    stderr_back(saved);
    err = th_read(err_path, NULL);
    CHECK_EQ_INT(count_lines(err, "work.csv reached its cap of 300 bytes"), 1);
    free(err);
    free(err_path);
    cap_reset();
}

/* Started again in a folder whose work.csv has rows: no second header. */
static void
t_no_second_header(void)
{
    struct ty *ty;
    static struct row rows[4];

    th_write(th_tmpdir(), "work.csv", TY__WORK_HEADER "1,x,1\n");
    ty = cap_handle("0");
    ty_counter_add(ty, "x", 4);
    cap_handle_free(ty);
    CHECK(cap_work.buf != NULL && strstr(cap_work.buf, "time_ms") == NULL);
    CHECK_EQ_INT(parse(cap_work.buf, false, rows, 4), 1);
    CHECK_EQ_INT(rows[0].value, 4);
    cap_reset();
}

/* The real sink, standalone: rows appended under TEST_OUTPUTS_PATH while
 * the case runs stay there when the process is killed. */
static void
t_killed(void)
{
    static struct row rows[64];
    char path[600], *text;
    pid_t pid;
    long long last;
    int st, n;

    snprintf(path, sizeof(path), "%s/work.csv", th_tmpdir());
    pid = fork();
    if (pid == 0) {
        struct ty *ty = standalone_handle("0");

        if (ty == NULL)
            _exit(2);
        for (int i = 0; i < 230; i++) {
            ty_counter_add(ty, "done", 1);
            usleep(10000);
        }
        raise(SIGKILL);
        _exit(3);
    }
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    text = th_read(path, NULL);
    n = parse(text, true, rows, 64);
    CHECK_MSG(n >= 1, "%d rows: %s", n, text ? text : "(none)");
    CHECK(check_series(rows, n, "done", &last) >= 1);
    CHECK_MSG(last > 0 && last <= 230, "last %lld", last);
    free(text);
}

static const struct th_case cases[] = {
    {"series", t_series}, {"flush_and_end", t_flush_and_end},
    {"cap", t_cap},       {"no_second_header", t_no_second_header},
    {"killed", t_killed}, {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
