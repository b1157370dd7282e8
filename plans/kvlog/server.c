/*
 * server.c — the kvlog server: its state folder replayed into the table
 * (replay.c), then puts, each appended to the log (fsync'd once a batch)
 * and kept in the table. Every compact_every puts, or when the log has
 * reached max_log bytes, the log is renamed log.old and a fresh one
 * begun, and the worker process (compact.c) is asked, by a byte on a
 * pipe, to fold log.old into the snapshot; its answer comes back on
 * another pipe, read without blocking after each put. One compaction
 * at a time: while one is under way the log just grows.
 *
 * The worker is this program run again (fork, then exec of its own path
 * with the argument "compact"), so it is a process of its
 * own with its own command name, and it dies with the server
 * (PR_SET_PDEATHSIG), so that a restarted server never races a worker
 * of the last one (and compact.lock covers the moment in between).
 */
#define _GNU_SOURCE
#include "kv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKER_WAIT_MS 5000 /* for the last compaction at close */

struct kv_server {
    struct ty *ty;
    struct kv_config c;
    char *dir;
    int dirfd, log_fd;
    off_t log_size;
    struct kv_table t;
    struct kv_replay replayed;
    uint64_t seq, rng;
    int64_t since_sync, since_compact, compactions;
    bool compacting;
    pid_t worker;
    int to_worker, from_worker;
    char reply[512];
    size_t reply_len;
    char *rec, *check; /* one record; a value read back */
    char err[KV_ERR_LEN];
};

static int fail(struct kv_server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail(struct kv_server *s, const char *fmt, ...)
{
    va_list ap;

    if (s->err[0] != '\0')
        return -1; /* the first failure is the one to tell */
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof(s->err), fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the worker ------------------------------------------------------- */

static int
spawn_worker(struct kv_server *s)
{
    char vs[16], ks[16], exe[4096] = "/proc/self/exe";
    char *argv[] = {KV_COMPACT_COMM, KV_COMPACT_ARG, s->dir, vs, ks, NULL};
    pid_t parent = getpid();
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    int req[2], rep[2];

    /* the program's own path where it can be read (under valgrind
     * /proc/self/exe is valgrind) */
    if (n > 0 && (size_t)n < sizeof(exe) - 1)
        exe[n] = '\0';
    else
        snprintf(exe, sizeof(exe), "/proc/self/exe");
    snprintf(vs, sizeof(vs), "%u", s->c.g.value_size);
    snprintf(ks, sizeof(ks), "%u", s->c.g.keys);
    if (pipe2(req, O_CLOEXEC) < 0)
        return fail(s, "pipe: %s", strerror(errno));
    if (pipe2(rep, O_CLOEXEC) < 0) {
        close(req[0]);
        close(req[1]);
        return fail(s, "pipe: %s", strerror(errno));
    }
    s->worker = fork();
    if (s->worker == 0) { /* only async-signal-safe calls until exec */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent || dup2(req[0], STDIN_FILENO) < 0 ||
            dup2(rep[1], STDOUT_FILENO) < 0)
            _exit(1);
        execv(exe, argv);
        _exit(127);
    }
    close(req[0]);
    close(rep[1]);
    s->to_worker = req[1];
    s->from_worker = rep[0];
    if (s->worker < 0)
        return fail(s, "fork: %s", strerror(errno));
    fcntl(s->from_worker, F_SETFL, O_NONBLOCK);
    return 0;
}

/* One line of the worker's: "done RECORDS ALLOCATED" or "fail WHY". */
static int
worker_said(struct kv_server *s, const char *line)
{
    long long records, allocated;

    if (sscanf(line, "done %lld %lld", &records, &allocated) == 2) {
        s->compacting = false;
        s->compactions++;
        ty_counter_add(s->ty, "compactions", 1);
        ty_gauge_set(s->ty, "snapshot_allocated_bytes", (double)allocated);
        return 0;
    }
    return fail(s, "compaction: %s",
                strncmp(line, "fail ", 5) == 0 ? line + 5 : line);
}

/* Read what the worker has said so far, without blocking: 0, 1 when its
 * output has closed (it ended), -1 on an error. */
static int
read_worker(struct kv_server *s)
{
    for (;;) {
        char *nl;
        ssize_t n = read(s->from_worker, s->reply + s->reply_len,
                         sizeof(s->reply) - 1 - s->reply_len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n < 0)
            return fail(s, "the compaction worker's pipe: %s", strerror(errno));
        if (n == 0)
            return 1;
        s->reply_len += (size_t)n;
        s->reply[s->reply_len] = '\0';
        while ((nl = strchr(s->reply, '\n')) != NULL) {
            *nl = '\0';
            if (worker_said(s, s->reply) < 0)
                return -1;
            s->reply_len -= (size_t)(nl + 1 - s->reply);
            memmove(s->reply, nl + 1, s->reply_len + 1);
        }
        if (s->reply_len == sizeof(s->reply) - 1)
            return fail(s, "compaction: a line too long from the worker");
    }
}

static int
poll_worker(struct kv_server *s)
{
    int rc = read_worker(s);

    if (rc > 0)
        return fail(s, "the compaction worker (pid %d) ended", (int)s->worker);
    return rc;
}

static int
ask_worker(struct kv_server *s)
{
    char b = 'c';

    s->compacting = true;
    if (kv_write_full(s->to_worker, &b, 1, -1) < 0)
        return fail(s, "the compaction worker (pid %d) is gone",
                    (int)s->worker);
    return 0;
}

/* Close its input, so that it ends once its compaction (if any) is
 * done, and wait for it; SIGKILL after WORKER_WAIT_MS. */
static void
end_worker(struct kv_server *s)
{
    struct pollfd p = {.fd = s->from_worker, .events = POLLIN};
    int64_t left = WORKER_WAIT_MS;
    int rc = 0;

    close(s->to_worker);
    s->to_worker = -1;
    while (rc == 0 && left > 0) {
        if (poll(&p, 1, 100) < 0 && errno != EINTR)
            break;
        rc = read_worker(s);
        left -= 100;
    }
    if (rc != 1)
        kill(s->worker, SIGKILL);
    while (waitpid(s->worker, NULL, 0) < 0 && errno == EINTR)
        ;
    close(s->from_worker);
}

/* ---- the log ---------------------------------------------------------- */

static int
open_log(struct kv_server *s, int flags)
{
    s->log_fd = openat(
        s->dirfd, "log",
        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | flags, 0644);
    if (s->log_fd < 0)
        return fail(s, "state/log: %s", strerror(errno));
    s->log_size = lseek(s->log_fd, 0, SEEK_END);
    return 0;
}

/* The log, synced, becomes log.old; a new one begins; the worker is asked
 * to fold log.old in. */
static int
rotate(struct kv_server *s)
{
    if (fdatasync(s->log_fd) < 0)
        return fail(s, "state/log: fsync: %s", strerror(errno));
    if (renameat(s->dirfd, "log", s->dirfd, "log.old") < 0)
        return fail(s, "state/log: rename to log.old: %s", strerror(errno));
    close(s->log_fd);
    if (open_log(s, O_TRUNC) < 0)
        return -1;
    if (kv_sync_dir(s->dirfd) < 0)
        return fail(s, "state: fsync: %s", strerror(errno));
    s->since_compact = 0;
    s->since_sync = 0;
    return ask_worker(s);
}

static bool
compaction_due(const struct kv_server *s)
{
    return !s->compacting &&
           ((s->c.compact_every > 0 &&
             s->since_compact >= s->c.compact_every) ||
            (s->c.max_log > 0 && s->log_size >= s->c.max_log));
}

/* ---- open, put, close ------------------------------------------------- */

static int
open_state(struct kv_server *s)
{
    if (mkdir(s->dir, 0755) < 0 && errno != EEXIST)
        return fail(s, "%s: %s", s->dir, strerror(errno));
    s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dirfd < 0)
        return fail(s, "%s: %s", s->dir, strerror(errno));
    if (kv_replay(s->dirfd, &s->c.g, &s->t, &s->replayed, s->err,
                  sizeof(s->err)) < 0)
        return -1;
    s->seq = s->replayed.seq;
    s->rng = (s->seq + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() ^
             (uint64_t)time(NULL);
    if (open_log(s, 0) < 0 || spawn_worker(s) < 0)
        return -1;
    return s->replayed.old_log ? ask_worker(s) : 0;
}

struct kv_server *
kv_server_open(struct ty *ty, const char *dir, const struct kv_config *c,
               char *err, size_t errlen)
{
    size_t rs = kv_rec_size(&c->g);
    struct kv_server *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    signal(SIGPIPE, SIG_IGN); /* a dead worker is an error, not a kill */
    s->ty = ty;
    s->c = *c;
    s->dirfd = s->log_fd = s->to_worker = s->from_worker = -1;
    s->worker = -1;
    kv_table_init(&s->t, c->g.value_size);
    s->dir = strdup(dir);
    s->rec = malloc(rs);
    s->check = malloc(c->g.value_size);
    if (s->dir == NULL || s->rec == NULL || s->check == NULL)
        fail(s, "out of memory");
    else
        open_state(s);
    if (s->err[0] != '\0') {
        snprintf(err, errlen, "%s", s->err);
        kv_server_close(&s, NULL, 0);
        return NULL;
    }
    return s;
}

uint32_t
kv_server_random_key(struct kv_server *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return (uint32_t)(s->rng % s->c.g.keys);
}

/* A get of a random key, its value checked against its put's. */
static int
get_one(struct kv_server *s)
{
    uint32_t key = kv_server_random_key(s);
    const struct kv_entry *e = kv_table_get(&s->t, key);

    if (e == NULL)
        return 0;
    kv_value_fill(s->check, s->c.g.value_size, e->seq);
    if (memcmp(s->check, e->value, s->c.g.value_size) != 0)
        return fail(s, "key %u: the value of put %llu does not read back", key,
                    (unsigned long long)e->seq);
    return 0;
}

static int
append(struct kv_server *s, uint32_t key)
{
    int rc;

    kv_rec_make(s->rec, &s->c.g, key, ++s->seq);
    rc = kv_write_full(s->log_fd, s->rec, kv_rec_size(&s->c.g), -1);
    if (rc < 0)
        return fail(s, "state/log: write: %s", strerror(-rc));
    s->log_size += (off_t)kv_rec_size(&s->c.g);
    s->since_compact++;
    if (++s->since_sync >= s->c.batch) {
        if (fdatasync(s->log_fd) < 0)
            return fail(s, "state/log: fsync: %s", strerror(errno));
        s->since_sync = 0;
    }
    return 0;
}

int
kv_server_put(struct kv_server *s, uint32_t key)
{
    if (s->err[0] != '\0' || append(s, key) < 0)
        return -1;
    if (kv_table_put(&s->t, key, s->seq, s->rec + sizeof(struct kv_rec)) < 0)
        return fail(s, "out of memory with %zu keys", s->t.n);
    for (int64_t i = 0; i < s->c.gets; i++)
        if (get_one(s) < 0)
            return -1;
    if (poll_worker(s) < 0)
        return -1;
    return compaction_due(s) ? rotate(s) : 0;
}

int
kv_server_settle(struct kv_server *s, int64_t timeout_ms)
{
    struct pollfd p = {.fd = s->from_worker, .events = POLLIN};

    while (s->compacting && s->err[0] == '\0' && timeout_ms > 0) {
        if (poll(&p, 1, 50) < 0 && errno != EINTR)
            return fail(s, "poll: %s", strerror(errno));
        if (poll_worker(s) < 0)
            return -1;
        timeout_ms -= 50;
    }
    if (s->compacting && s->err[0] == '\0')
        return fail(s, "the compaction did not end in time");
    return s->err[0] != '\0' ? -1 : 0;
}

int
kv_server_close(struct kv_server **sp, char *err, size_t errlen)
{
    struct kv_server *s = *sp;
    int rc;

    if (s == NULL)
        return 0;
    *sp = NULL;
    if (s->log_fd >= 0 && fdatasync(s->log_fd) < 0)
        fail(s, "state/log: fsync: %s", strerror(errno));
    if (s->log_fd >= 0)
        close(s->log_fd);
    if (s->worker > 0)
        end_worker(s);
    if (s->dirfd >= 0)
        close(s->dirfd);
    rc = s->err[0] != '\0' ? -1 : 0;
    if (rc < 0 && err != NULL)
        snprintf(err, errlen, "%s", s->err);
    kv_table_release(&s->t);
    free(s->rec);
    free(s->check);
    free(s->dir);
    free(s);
    return rc;
}

const struct kv_replay *
kv_server_replayed(const struct kv_server *s)
{
    return &s->replayed;
}

const struct kv_table *
kv_server_table(const struct kv_server *s)
{
    return &s->t;
}

uint64_t
kv_server_seq(const struct kv_server *s)
{
    return s->seq;
}

const char *
kv_server_error(const struct kv_server *s)
{
    return s->err;
}

int64_t
kv_server_compactions(const struct kv_server *s)
{
    return s->compactions;
}
