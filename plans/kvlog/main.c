/*
 * kvlog — a small key-value daemon under a steady load, the plan that
 * shows a long run (docs/long-runs.md): a server that keeps an
 * append-only log and a compacted snapshot in a state folder under its
 * outputs (kept across a restart), with a worker process that does the
 * compactions. kv.h describes the state folder.
 *
 * Case "serve": replay the state folder the last process left (nothing
 * on a first start), say ready (ty_ready: the runner times a restart up
 * to it), then put random keys at `rate` a second through the SDK's load
 * driver (the load "put": put.cycles, put.latency) until the coordinator
 * stops the instance or `duration` has passed. The counter "puts" is
 * every put the state folder has had, this process's and its
 * predecessors' (put.cycles counts this process's only). Memory grows with the
 * keys held, the log with the puts, the snapshot with the keys written;
 * the replay, and so the restart, with all of them.
 *
 * Case "replay": the server's state folder read back as a restart would
 * find it, within one process, in a scratch folder: puts with
 * compactions, a compaction cut short (log.old left in place), a torn
 * last record; each time the table read back must hold every key at its
 * last put, and the snapshot must be sparse.
 *
 * Run as `kvlog compact ...`, the program is the compaction worker
 * (compact.c).
 */
#define _GNU_SOURCE
#include "kv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define SETTLE_MS 10000
#define MAX_GETS 16

static int
param_int(struct ty *ty, const char *name, int64_t min, int64_t max,
          int64_t *out)
{
    if (ty_param_int(ty, name, out) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (*out < min || *out > max)
        return ty_fail(ty, "%s: expected %lld to %lld, got %lld", name,
                       (long long)min, (long long)max, (long long)*out);
    return 0;
}

static int
get_config(struct ty *ty, struct kv_config *c)
{
    uint64_t vs, max_log;
    int64_t keys;

    memset(c, 0, sizeof(*c));
    if (ty_param_size(ty, "value_size", &vs) < 0 ||
        ty_param_size(ty, "max_log", &max_log) < 0 ||
        ty_param_float(ty, "rate", &c->rate) < 0 ||
        ty_param_duration(ty, "duration", &c->duration_ns) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (vs == 0 || vs > KV_MAX_VALUE)
        return ty_fail(ty, "value_size: expected 1 to 1Mi bytes, got %llu",
                       (unsigned long long)vs);
    if (param_int(ty, "keys", 1, KV_MAX_KEYS, &keys) < 0 ||
        param_int(ty, "compact_every", 0, INT64_MAX, &c->compact_every) < 0 ||
        param_int(ty, "batch", 1, 1000000, &c->batch) < 0 ||
        param_int(ty, "gets", 0, MAX_GETS, &c->gets) < 0)
        return -1;
    c->g.value_size = (uint32_t)vs;
    c->g.keys = (uint32_t)keys;
    c->max_log = max_log > INT64_MAX ? INT64_MAX : (int64_t)max_log;
    return 0;
}

/* ---- serve ------------------------------------------------------------ */

struct serve {
    struct kv_server *s;
    int stop; /* the load's stop: a put failed */
};

static int
put_task(struct ty *ty, void *arg, int64_t cycle)
{
    struct serve *sv = arg;

    (void)cycle;
    if (kv_server_put(sv->s, kv_server_random_key(sv->s)) < 0) {
        __atomic_store_n(&sv->stop, 1, __ATOMIC_RELAXED);
        return -1;
    }
    ty_counter_add(ty, "puts", 1);
    return 0;
}

static void
tell_replay(struct ty *ty, const struct kv_server *s)
{
    const struct kv_replay *r = kv_server_replayed(s);

    ty_message(ty,
               "replayed %zu keys in %.3f s (%.3f s waiting for the last "
               "worker): %lld snapshot slots, %lld records of log.old, %lld "
               "of log%s, %lld torn bytes cut off; puts so far %llu",
               kv_server_table(s)->n, r->seconds, r->lock_seconds,
               (long long)r->snap_slots, (long long)r->old_records,
               (long long)r->log_records,
               r->old_log ? " (a compaction to finish)" : "",
               (long long)r->torn_bytes, (unsigned long long)r->seq);
    ty_point(ty, "replay.seconds", r->seconds);
    ty_gauge_set(ty, "replay.keys", (double)kv_server_table(s)->n);
}

static int
load(struct ty *ty, struct serve *sv, const struct kv_config *c)
{
    struct ty_load o = {.name = "put",
                        .rate = c->rate,
                        .duration_ns = c->duration_ns,
                        .stop = &sv->stop};
    struct ty_load_result r;

    if (ty_load_run(ty, &o, put_task, sv, &r) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    ty_message(
        ty,
        "put: %lld cycles, %lld errors, %lld missed in %.2f s (%.1f "
        "a second, late by %.3f s at most), %lld compactions, %zu "
        "keys held; %s",
        (long long)r.cycles, (long long)r.errors, (long long)r.missed,
        r.elapsed_s, r.rate, r.max_late_s,
        (long long)kv_server_compactions(sv->s), kv_server_table(sv->s)->n,
        ty_stopping(ty) ? "stopped by the coordinator" : "the load is over");
    ty_gauge_set(ty, "keys", (double)kv_server_table(sv->s)->n);
    return 0;
}

static int
run_serve(struct ty *ty)
{
    struct kv_config c;
    struct serve sv = {0};
    char dir[4096], err[KV_ERR_LEN];
    int rc;

    prctl(PR_SET_NAME, KV_COMM, 0, 0, 0);
    if (get_config(ty, &c) < 0)
        return -1;
    snprintf(dir, sizeof(dir), "%s/state", ty_outputs_path(ty));
    sv.s = kv_server_open(ty, dir, &c, err, sizeof(err));
    if (sv.s == NULL)
        return ty_fail(ty, "%s", err);
    tell_replay(ty, sv.s);
    /* "puts" counts on across lives (put.cycles starts again from 0 in
     * each process), so restarts can be set against the work done so
     * far */
    ty_counter_add(ty, "puts", (int64_t)kv_server_seq(sv.s));
    ty_ready(ty);
    rc = load(ty, &sv, &c);
    if (kv_server_close(&sv.s, err, sizeof(err)) < 0 && rc == 0)
        rc = ty_fail(ty, "%s", err);
    return rc;
}

/* ---- replay ----------------------------------------------------------- */

/* What the state folder must give back: each key's last put. */
struct expect {
    uint64_t *seq; /* per key, 0 = never put */
    size_t n;      /* keys put */
};

static int
session_puts(struct ty *ty, struct kv_server *s, struct expect *x, int64_t puts)
{
    for (int64_t i = 0; i < puts; i++) {
        uint32_t key = kv_server_random_key(s);

        if (kv_server_put(s, key) < 0)
            return ty_fail(ty, "put: %s", kv_server_error(s));
        if (x->seq[key] == 0)
            x->n++;
        x->seq[key] = kv_server_seq(s);
    }
    return 0;
}

static int
check_table(struct ty *ty, const char *when, const struct kv_server *s,
            const struct expect *x, const struct kv_geom *g)
{
    const struct kv_table *t = kv_server_table(s);
    char *v = malloc(g->value_size);
    int rc = 0;

    if (v == NULL)
        return ty_fail(ty, "out of memory");
    if (t->n != x->n)
        rc = ty_fail(ty, "%s: %zu keys read back, %zu were put", when, t->n,
                     x->n);
    for (uint32_t k = 0; rc == 0 && k < g->keys; k++) {
        const struct kv_entry *e = kv_table_get(t, k);

        if (x->seq[k] == 0)
            continue;
        if (e != NULL)
            kv_value_fill(v, g->value_size, e->seq);
        if (e == NULL || e->seq != x->seq[k] ||
            memcmp(v, e->value, g->value_size) != 0)
            rc = ty_fail(ty, "%s: key %u: read back put %llu, want %llu", when,
                         k, e ? (unsigned long long)e->seq : 0ULL,
                         (unsigned long long)x->seq[k]);
    }
    free(v);
    return rc;
}

/* Open the state folder and check what it gave back. */
static struct kv_server *
session_open(struct ty *ty, const char *dir, const struct kv_config *c,
             const struct expect *x, const char *when)
{
    char err[KV_ERR_LEN];
    struct kv_server *s = kv_server_open(ty, dir, c, err, sizeof(err));

    if (s == NULL) {
        ty_fail(ty, "%s: %s", when, err);
        return NULL;
    }
    tell_replay(ty, s);
    if (check_table(ty, when, s, x, &c->g) < 0)
        kv_server_close(&s, NULL, 0);
    return s;
}

static int
session_close(struct ty *ty, struct kv_server **s, bool settle)
{
    char err[KV_ERR_LEN];

    if (settle && kv_server_settle(*s, SETTLE_MS) < 0)
        ty_fail(ty, "settle: %s", kv_server_error(*s));
    if (kv_server_close(s, err, sizeof(err)) < 0)
        return ty_fail(ty, "close: %s", err);
    return 0;
}

/* Half a record at the log's end, as a crash in the middle of a write. */
static int
tear_log(struct ty *ty, const char *dir, const struct kv_geom *g)
{
    char path[4200], *rec = malloc(kv_rec_size(g));
    int fd, rc = -1;

    snprintf(path, sizeof(path), "%s/log", dir);
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (rec != NULL && fd >= 0) {
        kv_rec_make(rec, g, 0, UINT64_MAX / 2);
        rc = kv_write_full(fd, rec, kv_rec_size(g) / 2, -1);
    }
    if (fd >= 0)
        close(fd);
    free(rec);
    return rc < 0 ? ty_fail(ty, "%s: cannot tear it", path) : 0;
}

/* log renamed log.old, as a compaction cut short leaves it. */
static int
cut_compaction(struct ty *ty, const char *dir)
{
    char from[4200], to[4200];

    snprintf(from, sizeof(from), "%s/log", dir);
    snprintf(to, sizeof(to), "%s/log.old", dir);
    if (access(to, F_OK) == 0)
        return ty_fail(ty, "%s is there after the compactions settled", to);
    if (rename(from, to) < 0)
        return ty_fail(ty, "rename %s: %s", from, strerror(errno));
    return 0;
}

static int
check_sparse(struct ty *ty, const char *dir)
{
    char path[4200];
    struct stat st;

    snprintf(path, sizeof(path), "%s/snapshot", dir);
    if (stat(path, &st) < 0)
        return ty_fail(ty, "%s: %s", path, strerror(errno));
    ty_message(ty, "snapshot: %lld bytes apparent, %lld allocated",
               (long long)st.st_size, (long long)st.st_blocks * 512);
    if ((long long)st.st_blocks * 512 >= (long long)st.st_size / 2)
        return ty_fail(ty, "%s: %lld bytes allocated of %lld: not sparse", path,
                       (long long)st.st_blocks * 512, (long long)st.st_size);
    return 0;
}

static int
check_torn(struct ty *ty, const struct kv_server *s, const struct kv_config *c,
           int64_t puts)
{
    long long cut = (long long)kv_server_replayed(s)->torn_bytes,
              want = (long long)kv_rec_size(&c->g) / 2;

    if (cut != want)
        return ty_fail(ty, "torn write: %lld bytes cut off, want %lld", cut,
                       want);
    if (kv_server_seq(s) != (uint64_t)(2 * puts))
        return ty_fail(ty, "torn write: puts so far %llu, want %lld",
                       (unsigned long long)kv_server_seq(s),
                       (long long)(2 * puts));
    return 0;
}

/* Three lives of a server in one process, each opening what the last
 * left: puts with their compactions, then a compaction cut short; puts
 * again, then a torn write; the last one only reads back. */
static int
replay_sessions(struct ty *ty, const char *dir, const struct kv_config *c,
                struct expect *x, int64_t puts)
{
    struct kv_server *s = session_open(ty, dir, c, x, "empty");
    int rc = -1;

    if (s == NULL || session_puts(ty, s, x, puts) < 0 ||
        session_close(ty, &s, true) < 0 || cut_compaction(ty, dir) < 0)
        goto out;
    s = session_open(ty, dir, c, x, "after a compaction cut short");
    if (s == NULL)
        goto out;
    if (!kv_server_replayed(s)->old_log) {
        ty_fail(ty, "after a compaction cut short: log.old was not seen");
        goto out;
    }
    if (kv_server_settle(s, SETTLE_MS) < 0) {
        ty_fail(ty, "finishing the compaction cut short: %s",
                kv_server_error(s));
        goto out;
    }
    if (session_puts(ty, s, x, puts) < 0 || session_close(ty, &s, false) < 0 ||
        tear_log(ty, dir, &c->g) < 0)
        goto out;
    s = session_open(ty, dir, c, x, "after a torn write");
    if (s == NULL || check_torn(ty, s, c, puts) < 0 ||
        session_close(ty, &s, true) < 0)
        goto out;
    rc = check_sparse(ty, dir);
out:
    kv_server_close(&s, NULL, 0);
    return rc;
}

static int
run_replay(struct ty *ty)
{
    struct kv_config c;
    struct expect x = {0};
    char dir[4096];
    int64_t puts;
    int rc;

    if (get_config(ty, &c) < 0 || param_int(ty, "puts", 1, 10000000, &puts) < 0)
        return -1;
    /* compactions within each life, whatever compact_every says */
    c.compact_every = puts / 4 + 1;
    c.max_log = 0;
    snprintf(dir, sizeof(dir), "%s/kvlog-replay.XXXXXX", ty_temp_path(ty));
    if (mkdtemp(dir) == NULL)
        return ty_fail(ty, "mkdtemp %s: %s", dir, strerror(errno));
    x.seq = calloc(c.g.keys, sizeof(*x.seq));
    if (x.seq == NULL)
        return ty_fail(ty, "out of memory");
    rc = replay_sessions(ty, dir, &c, &x, puts);
    free(x.seq);
    if (rc == 0)
        ty_message(ty,
                   "replay: %zu keys read back whole after a compaction "
                   "cut short and a torn write",
                   x.n);
    return rc;
}

static const struct ty_case cases[] = {
    {"serve", run_serve},
    {"replay", run_replay},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], KV_COMPACT_ARG) == 0)
        return kv_compact_main(argc, argv);
    return ty_main(argc, argv, cases);
}
