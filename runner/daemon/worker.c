/*
 * worker.c — the queue's side of the main thread: start the tasks that
 * fit (queue.c says which), copy each running task's output into its log
 * (capped), notice its end and write its outcome from the exit status and
 * the run's result.json; at start, tasks a killed daemon left running are
 * marked interrupted and cleaned.
 */
#include "daemon/daemon_int.h"

#include "history/history.h"

#include "base/log.h"
#include "base/run_lock.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RECOVER_WAIT_NS (INT64_C(30) * 1000000000)
#define WHY_LEN 256

static const char truncated_line[] = "[log truncated]\n";

/* The outcome history records for t when its run folder has no
 * result.json: build-failed, canceled, interrupted, error. */
static const char *
outcome_without_run(const struct daemon_task *t)
{
    if (t->outcome != NULL && strcmp(t->outcome, "build-failed") == 0)
        return t->outcome;
    if (t->state == TASK_CANCELED || t->state == TASK_INTERRUPTED)
        return daemon__state_name(t->state);
    return t->outcome ? t->outcome : "error";
}

/* The run of t into the history (a task that never started, refused or
 * canceled while queued, has none); a failure is the daemon's log's. */
static void
record_history(struct daemon *d, const struct daemon_task *t)
{
    cleanup_free char *run =
        xasprintf("%s/runs/task-%lld", d->data, (long long)t->id);
    cleanup_free char *result = path_join(run, "result.json");
    bool has_run = path_exists(result);
    struct history_meta m = {
        .name = t->schedule ? t->schedule : t->comp_name,
        .schedule = t->schedule,
        .task_id = t->id,
        .version = t->version,
        .build_seconds = t->build_seconds,
        .outcome = has_run ? NULL : outcome_without_run(t),
    };
    struct err err = {0};
    bool built = t->outcome && strcmp(t->outcome, "build-failed") == 0;

    if (!has_run && !built && t->started_ns == 0)
        return;
    if (history_record(d->db, &m, has_run ? run : NULL, &err) < 0)
        log_warnx("task %lld: the history: %s", (long long)t->id, err.msg);
}

void
daemon__task_ended(struct daemon *d, const struct daemon_task *t)
{
    log_info("task %lld %s%s%s", (long long)t->id, daemon__state_name(t->state),
             t->outcome ? ": " : "", t->outcome ? t->outcome : "");
    record_history(d, t);
}

/* Write t (its end, when ended) and tell the hook; under d->mu. */
static void
save(struct daemon *d, struct daemon_task *t)
{
    struct err err = {0};

    if (daemon__state_ended(t->state) && t->ended_ns == 0)
        t->ended_ns = now_wall_ns();
    if (daemon__task_update(d->db, t, &err) < 0)
        log_warnx("task %lld: %s", (long long)t->id, err.msg);
    else if (daemon__state_ended(t->state))
        daemon__task_ended(d, t);
}

static void
set_str(char **p, const char *s)
{
    free(*p);
    *p = s && s[0] ? xstrdup(s) : NULL;
}

static void
start(struct daemon *d, struct daemon_task *t)
{
    struct daemon_run r;
    struct run_identity id;
    struct err err = {0};

    if (daemon__spawn(d, t, &r, &err) < 0) {
        t->state = TASK_DONE;
        set_str(&t->outcome, "error");
        set_str(&t->reason, err.msg);
        save(d, t);
        return;
    }
    xgrow(&d->runs, &d->capruns, d->nruns + 1, sizeof(*d->runs));
    d->runs[d->nruns++] = r;
    t->state = TASK_RUNNING;
    t->started_ns = now_wall_ns();
    t->pid = r.pid;
    t->pid_start = run_identity_of(r.pid, &id, NULL) == 0 ? id.start : 0;
    set_str(&t->reason, NULL);
    save(d, t);
}

static void
act(struct daemon *d, struct daemon_task *t, enum pick a, const char *why)
{
    if (a == PICK_START) {
        start(d, t);
    } else if (a == PICK_REFUSE) {
        t->state = TASK_REFUSED;
        set_str(&t->reason, why);
        save(d, t);
    } else if (t->reason == NULL || strcmp(t->reason, why) != 0) {
        set_str(&t->reason, why);
        save(d, t);
    }
}

void
daemon__schedule(struct daemon *d)
{
    struct daemon_task *v = NULL, **p;
    struct admit_need used = {0};
    struct err err = {0};
    size_t n = 0;
    enum pick *a;
    char *why;

    pthread_mutex_lock(&d->mu);
    if (daemon__tasks_load(d->db, "state = 'queued'", &v, &n, &err) < 0)
        log_warnx("the queue: %s", err.msg);
    p = xcalloc(n + 1, sizeof(*p));
    a = xcalloc(n + 1, sizeof(*a));
    why = xcalloc(n + 1, WHY_LEN);
    for (size_t i = 0; i < n; i++)
        p[i] = &v[i];
    for (size_t i = 0; i < d->nruns; i++)
        admit__need_add(&used, &d->runs[i].need);
    daemon__queue_sort(p, n);
    daemon__queue_pick(p, n, &used, &d->budget, a, why, WHY_LEN);
    for (size_t i = 0; i < n; i++)
        act(d, p[i], a[i], why + i * WHY_LEN);
    pthread_mutex_unlock(&d->mu);
    for (size_t i = 0; i < n; i++)
        daemon__task_release(&v[i]);
    free(v);
    free(p);
    free(a);
    free(why);
}

static void
log_fault(struct daemon_run *r, int e)
{
    bool running = !r->exited && r->sigint_ns == 0;

    snprintf(r->fail, sizeof(r->fail),
             "the task's log could not be written (%s)%s", strerror(e),
             running ? "; the run was canceled" : "");
    r->truncated = true;
    if (running) {
        kill(r->pid, SIGINT);
        r->sigint_ns = now_mono_ns();
    }
}

static void
keep(struct daemon_run *r, const char *buf, size_t n)
{
    uint64_t room = DAEMON_LOG_CAP - r->logged;

    if (r->truncated)
        return;
    if (n > room)
        n = (size_t)room;
    if (fd_write_all(r->logfd, buf, n) < 0)
        return log_fault(r, errno);
    r->logged += n;
    if (r->logged < DAEMON_LOG_CAP)
        return;
    r->truncated = true;
    if (fd_write_all(r->logfd, truncated_line, sizeof(truncated_line) - 1) < 0)
        log_fault(r, errno);
}

void
daemon__pump(struct daemon *d, size_t i)
{
    struct daemon_run *r = &d->runs[i];
    char buf[65536];
    ssize_t n;

    while (r->outfd >= 0) {
        n = read(r->outfd, buf, sizeof(buf));
        if (n > 0) {
            keep(r, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        close(r->outfd);
        r->outfd = -1;
    }
}

void
daemon__last_line(const char *path, const char *skip, char *out, size_t size)
{
    char buf[1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    off_t end = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
    off_t from =
        end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
    ssize_t n = end < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, from);
    char *nl;

    out[0] = '\0';
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    for (;;) {
        while (n > 0 && buf[n - 1] == '\n')
            buf[--n] = '\0';
        nl = strrchr(buf, '\n');
        if (n == 0 || nl == NULL || skip == NULL ||
            strncmp(nl + 1, skip, strlen(skip)) != 0)
            break;
        *nl = '\0';
        n = nl - buf;
    }
    snprintf(out, size, "%s", nl ? nl + 1 : buf);
}

static int
exit_status_of(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

static void
conclude(struct daemon *d, struct daemon_task *t, const struct daemon_run *r)
{
    char why[ERR_MSG_MAX];

    t->exit_status = exit_status_of(r->status);
    daemon__read_result(d, t);
    t->state = r->cancel || r->stopping ? TASK_CANCELED : TASK_DONE;
    set_str(&t->reason, NULL);
    if (r->fail[0] != '\0') {
        set_str(&t->reason, r->fail);
        set_str(&t->outcome, "error");
    } else if (r->stopping) {
        set_str(&t->reason, "canceled: the daemon was stopped");
    } else if (t->outcome == NULL && t->exit_status != 0) {
        cleanup_free char *log =
            xasprintf("%s/tasks/%lld/log", d->data, (long long)t->id);

        daemon__last_line(log, NULL, why, sizeof(why));
        set_str(&t->reason, why);
        set_str(&t->outcome, "error");
    }
}

/* The run i ended: its row, then out of the list; under d->mu. */
static void
finish(struct daemon *d, size_t i)
{
    struct daemon_run r;
    struct daemon_task t;
    struct err err = {0};

    daemon__pump(d, i);
    r = d->runs[i];
    if (r.outfd >= 0)
        close(r.outfd); /* a process it left holds the pipe */
    close(r.logfd);
    d->runs[i] = d->runs[--d->nruns];
    if (daemon__task_get(d->db, r.id, &t, &err) < 0) {
        log_warnx("task %lld: %s", (long long)r.id, err.msg);
    } else {
        conclude(d, &t, &r);
        save(d, &t);
        daemon__task_release(&t);
    }
}

void
daemon__reap(struct daemon *d)
{
    pthread_mutex_lock(&d->mu);
    for (size_t i = 0; i < d->nruns;) {
        struct daemon_run *r = &d->runs[i];

        if (!r->exited && waitpid(r->pid, &r->status, WNOHANG) == r->pid)
            r->exited = true;
        if (r->exited)
            finish(d, i);
        else
            i++;
    }
    pthread_mutex_unlock(&d->mu);
}

/* Until the old run is gone (it cancels itself when its daemon dies),
 * bounded; then SIGKILL. */
static void
wait_gone(const struct daemon_task *t)
{
    int64_t until = now_mono_ns() + RECOVER_WAIT_NS;
    struct timespec tick = {0, 100 * 1000000};

    while (daemon__pid_alive(t->pid, t->pid_start) && now_mono_ns() < until)
        nanosleep(&tick, NULL);
    if (!daemon__pid_alive(t->pid, t->pid_start))
        return;
    log_warnx("task %lld: its run (pid %ld) is still there after 30 s: "
              "killing it",
              (long long)t->id, t->pid);
    kill((pid_t)t->pid, SIGKILL);
    until = now_mono_ns() + RECOVER_WAIT_NS;
    while (daemon__pid_alive(t->pid, t->pid_start) && now_mono_ns() < until)
        nanosleep(&tick, NULL);
}

void
daemon__recover(struct daemon *d)
{
    struct daemon_task *v = NULL;
    struct err err = {0};
    size_t n = 0;

    if (daemon__tasks_load(d->db, "state = 'running'", &v, &n, &err) < 0)
        log_warnx("recovering tasks: %s", err.msg);
    for (size_t i = 0; i < n; i++) {
        struct daemon_task *t = &v[i];

        wait_gone(t);
        daemon__clean_run(d, t->id);
        daemon__read_result(d, t);
        t->state = TASK_INTERRUPTED;
        set_str(&t->reason,
                "the daemon stopped while it ran; what the run left was "
                "cleaned (clean --run)");
        save(d, t);
        daemon__task_release(t);
    }
    free(v);
}
