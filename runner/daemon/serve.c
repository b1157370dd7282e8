/*
 * serve.c — the daemon's life: one per data folder (a lock), the token,
 * the database, the budget, the tasks a killed daemon left, the HTTP API,
 * daemon.json once it listens, and the main loop (signals, the tasks'
 * output, their ends, the queue) until SIGTERM or SIGINT, which cancels
 * what runs and keeps the queue.
 */
#include "daemon/daemon_int.h"
#include "daemon/schedule_int.h"

#include "base/fsat.h"
#include "base/log.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define STOP_WAIT_NS (INT64_C(60) * 1000000000)
#define TICK_MS 1000

int
daemon_parse_listen(const char *s, char addr[16], unsigned *port,
                    struct err *err)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    struct in_addr in;
    char *end;
    unsigned long p;

    if (colon == NULL || (size_t)(colon - s) >= 16)
        return err_set(err, EINVAL, "expected 127.0.0.1:PORT, got \"%s\"",
                       s ? s : "");
    memcpy(addr, s, (size_t)(colon - s));
    addr[colon - s] = '\0';
    errno = 0;
    p = strtoul(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || p > 65535)
        return err_set(err, EINVAL, "expected a port 0..65535, got \"%s\"",
                       colon + 1);
    if (inet_pton(AF_INET, addr, &in) != 1)
        return err_set(err, EINVAL, "expected 127.0.0.1:PORT, got \"%s\"", s);
    if ((ntohl(in.s_addr) >> 24) != 127)
        return err_set(err, EINVAL,
                       "%s is not a loopback address: the daemon listens on "
                       "127.0.0.1 only",
                       addr);
    *port = (unsigned)p;
    return 0;
}

/* DATA/daemon.lock, held while the daemon lives (close-on-exec: its runs
 * do not keep it). */
static int
lock_data(const struct daemon *d, struct err *err)
{
    int fd = fsat_open(d->datafd, DAEMON_LOCK, O_RDWR | O_CREAT, 0600, err);
    cleanup_free char *json = NULL;

    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    close(fd);
    json = fsat_read(d->datafd, DAEMON_JSON, 4096, NULL, NULL);
    err_set(err, EBUSY, "a daemon already runs for %s%s%s", d->data,
            json ? ": " : "", json ? json : "");
    if (json != NULL && err->msg[strlen(err->msg) - 1] == '\n')
        err->msg[strlen(err->msg) - 1] = '\0';
    return err_status(err, 1);
}

static int
budget(struct daemon *d, struct err *err)
{
    if (admit__budget(d->o->memory_budget, d->o->cpu_budget, &d->budget, err) <
        0)
        return err_status(err, EXIT_USAGE);
    return 0;
}

static int
write_json(struct daemon *d, struct err *err)
{
    char started[40];
    cleanup_free char *path = path_join(d->data, DAEMON_JSON);
    cleanup_free char *text = NULL;

    time_rfc3339(now_wall_ns(), started, sizeof(started));
    text = xasprintf("{\"url\":\"%s\",\"pid\":%ld,\"started\":\"%s\"}\n",
                     d->url, (long)getpid(), started);
    return file_write_atomic(path, text, strlen(text), err);
}

static int
signals(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    signal(SIGPIPE, SIG_IGN);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* One turn: wait (TICK_MS at most) for a signal, a wake-up or a task's
 * output; copy output; reap. True when a stop was asked. */
static bool
turn(struct daemon *d, int sfd)
{
    struct pollfd *p = xcalloc(d->nruns + 2, sizeof(*p));
    struct signalfd_siginfo si;
    uint64_t n;
    bool stop = false;
    size_t nr = d->nruns;

    p[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
    p[1] = (struct pollfd){.fd = d->wakefd, .events = POLLIN};
    for (size_t i = 0; i < nr; i++)
        p[i + 2] = (struct pollfd){.fd = d->runs[i].outfd, .events = POLLIN};
    if (poll(p, nr + 2, TICK_MS) > 0) {
        while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
            stop |= si.ssi_signo != SIGCHLD;
        if (read(d->wakefd, &n, sizeof(n)) < 0 && errno != EAGAIN)
            log_warn("wake");
        for (size_t i = 0; i < nr; i++)
            if (p[i + 2].revents != 0)
                daemon__pump(d, i);
    }
    free(p);
    daemon__reap(d);
    return stop;
}

/* A second SIGTERM or SIGINT (sfd) ends the wait at once. */
void
daemon__stop_all(struct daemon *d, int sfd, int64_t deadline_ns)
{
    pthread_mutex_lock(&d->mu);
    for (size_t i = 0; i < d->nruns; i++) {
        d->runs[i].stopping = true;
        if (d->runs[i].sigint_ns == 0) {
            kill(d->runs[i].pid, SIGINT);
            d->runs[i].sigint_ns = now_mono_ns();
        }
    }
    pthread_mutex_unlock(&d->mu);
    while (d->nruns > 0 && now_mono_ns() < deadline_ns)
        if (turn(d, sfd))
            deadline_ns = 0;
    for (size_t i = 0; i < d->nruns; i++) {
        struct daemon_run *r = &d->runs[i];

        log_warnx("task %lld: its run did not stop in time: killing it",
                  (long long)r->id);
        kill(r->pid, SIGKILL);
        if (waitpid(r->pid, &r->status, 0) == r->pid)
            r->exited = true;
        daemon__clean_run(d, r->id);
    }
    daemon__reap(d);
}

/* The schedules, when one may be due; a change through the API (next
 * set to 0 meanwhile) is kept for the next turn. */
static void
fire_due(struct daemon *d)
{
    struct err err = {0};
    int64_t now_s = schedule__clock_now(&err), next;
    int64_t seen = __atomic_load_n(&d->next_fire_s, __ATOMIC_SEQ_CST);

    if (now_s >= 0 && now_s < seen)
        return;
    daemon__fire(d, &next);
    __atomic_compare_exchange_n(&d->next_fire_s, &seen, next, false,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void
loop(struct daemon *d, int sfd)
{
    bool stop = false;

    log_info("daemon listening on %s (data %s)", d->url, d->data);
    while (!stop) {
        fire_due(d);
        daemon__schedule(d);
        stop = turn(d, sfd);
    }
    daemon__fire_stop(d);
    log_info("daemon stopping: canceling %zu running task%s", d->nruns,
             d->nruns == 1 ? "" : "s");
    daemon__stop_all(d, sfd, now_mono_ns() + STOP_WAIT_NS);
}

/* "ok URL" or "STATUS MESSAGE" to whoever waits for the start. */
static void
tell(const struct daemon_opts *o, int status, const char *s)
{
    if (o->ready_fd < 0)
        return;
    if (status == 0)
        dprintf(o->ready_fd, "ok %s\n", s);
    else
        dprintf(o->ready_fd, "%d %s\n", status, s);
    close(o->ready_fd);
}

static int
make_dir(const struct daemon *d, const char *rel, mode_t mode, struct err *err)
{
    int fd = fsat_dir(d->datafd, rel, true, mode, err);

    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* Snapshots a daemon that died mid-submit left half-made. */
static void
prune_new(const struct daemon *d)
{
    cleanup_free char *tasks = path_join(d->data, "tasks");
    DIR *dir = opendir(tasks);
    struct dirent *e;

    while (dir != NULL && (e = readdir(dir)) != NULL) {
        cleanup_free char *p = NULL;

        if (strncmp(e->d_name, ".new-", 5) != 0)
            continue;
        p = path_join(tasks, e->d_name);
        rm_rf(p, NULL);
    }
    if (dir != NULL)
        closedir(dir);
}

/* Everything before the loop; the HTTP API in *mhd. */
static int
open_all(struct daemon *d, int *lockfd, struct MHD_Daemon **mhd,
         struct err *err)
{
    char addr[16] = "127.0.0.1";
    unsigned port = 0, bound = 0;

    if (d->o->listen && daemon_parse_listen(d->o->listen, addr, &port, err) < 0)
        return err_status(err, EXIT_USAGE);
    if (budget(d, err) < 0 || (d->datafd = fsat_root(d->data, err)) < 0)
        return -1;
    if ((*lockfd = lock_data(d, err)) < 0)
        return -1;
    if (make_dir(d, "tasks", 0700, err) < 0 ||
        make_dir(d, "runs", 0755, err) < 0)
        return -1;
    prune_new(d);
    if (daemon__token_load(d->datafd, true, d->token, err) < 0 ||
        daemon__random_token(d->csrf, err) < 0 ||
        daemon_db_open(d->data, true, &d->db, err) < 0)
        return -1;
    daemon__recover(d);
    if ((d->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return err_sys(err, errno, "eventfd");
    if ((*mhd = daemon__http_start(d, addr, port, &bound, err)) == NULL)
        return -1;
    snprintf(d->url, sizeof(d->url), "http://%s:%u", addr, bound);
    return write_json(d, err);
}

int
daemon_serve(const struct daemon_opts *o, struct err *err)
{
    struct daemon d = {.o = o, .datafd = -1, .wakefd = -1};
    struct MHD_Daemon *mhd = NULL;
    int lockfd = -1, sfd = signals(), rc;
    cleanup_free char *json = path_join(o->data_dir, DAEMON_JSON);

    d.data = xstrdup(o->data_dir);
    pthread_mutex_init(&d.mu, NULL);
    rc = sfd < 0 ? err_sys(err, errno, "signalfd")
                 : open_all(&d, &lockfd, &mhd, err);
    if (rc == 0) {
        tell(o, 0, d.url);
        loop(&d, sfd);
        unlink(json);
    } else {
        tell(o, err->status ? err->status : EXIT_SOFTWARE, err->msg);
    }
    daemon__http_stop(&mhd);
    sqlite3_close(d.db);
    for (int *fd = (int[]){sfd, lockfd, d.datafd, d.wakefd, -2}; *fd != -2;
         fd++)
        if (*fd >= 0)
            close(*fd);
    pthread_mutex_destroy(&d.mu);
    free(d.runs);
    free(d.data);
    return rc;
}
