/*
 * daemon/daemon_int.h — the daemon's parts: the tasks table (db.c,
 * tasks.c), the token (token.c), the queue's order and admission
 * (queue.c), the HTTP API (http.c), submit (submit.c), running tasks
 * (worker.c, spawn.c) and the serving loop (serve.c).
 *
 * Threads: libmicrohttpd's own thread answers requests, the main thread
 * runs the queue; struct daemon's mu guards the database and the running
 * list both touch.
 */
#ifndef TY_DAEMON_INT_H
#define TY_DAEMON_INT_H

#include "daemon/admit_int.h"
#include "daemon/daemon.h"

#include "base/strbuf.h"

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DAEMON_DB "testyard.db"
#define DAEMON_TOKEN "token"
#define DAEMON_JSON "daemon.json"
#define DAEMON_LOCK "daemon.lock"
#define DAEMON_LOG "daemon.log"
#define DAEMON_TOKEN_LEN 64
#define DAEMON_LOG_CAP ((uint64_t)16 << 20) /* a task's log */

/* One step of a module's schema: what moves it from version i to i + 1
 * is steps[i]. */
struct daemon_migration {
    const char *module;
    int (*migrate)(sqlite3 *db, struct err *err);
};

/* The daemon's own tables (tasks). */
int daemon__migrate(sqlite3 *db, struct err *err);
/* SQL with no result rows; -1 with sqlite's message. */
int daemon__exec(sqlite3 *db, const char *sql, struct err *err);

enum task_state {
    TASK_QUEUED,
    TASK_RUNNING,
    TASK_DONE,
    TASK_CANCELED,
    TASK_INTERRUPTED,
    TASK_REFUSED,
};

const char *daemon__state_name(enum task_state s);
bool daemon__state_ended(enum task_state s);

struct daemon_task {
    int64_t id;
    char *name;      /* --name, else the composition's name */
    char *comp_name; /* metadata.name */
    char *path;      /* the file submitted (absolute) */
    char *file;      /* its name in DATA/tasks/ID/ */
    char *origin;    /* the folder it was submitted from */
    int64_t priority;
    enum task_state state;
    char *outcome;   /* result.json's, or NULL */
    int exit_status; /* -1 before the end */
    char *reason;    /* why it waits or failed, or NULL */
    int64_t submitted_ns, started_ns, ended_ns;
    long pid;
    unsigned long long pid_start; /* /proc start time, for pid reuse */
    struct admit_need need;
    char *groups;         /* JSON array from result.json, or NULL */
    bool cancel;          /* a cancel was asked while it ran */
    char *schedule;       /* the schedule that fired it, or NULL */
    char *version;        /* the version recorded then, or NULL */
    double build_seconds; /* the build's time; < 0: no build */
};

void daemon__task_release(struct daemon_task *t);
/* Tasks, ordered by id; where is an SQL condition or NULL. */
int daemon__tasks_load(sqlite3 *db, const char *where, struct daemon_task **v,
                       size_t *n, struct err *err);
/* One; ENOENT (status EXIT_NOINPUT) when there is none. */
int daemon__task_get(sqlite3 *db, int64_t id, struct daemon_task *t,
                     struct err *err);
/* Insert (t->id set). */
int daemon__task_insert(sqlite3 *db, struct daemon_task *t, struct err *err);
/* Write its mutable fields (state ... groups). */
int daemon__task_update(sqlite3 *db, const struct daemon_task *t,
                        struct err *err);
/* Its object in the API (the caller's, cJSON_Delete). */
cJSON *daemon__task_json(const struct daemon_task *t, const char *data_dir);

/* The token in DATA/token, created (getrandom, 0600) when missing. */
int daemon__token_load(int datafd, bool create, char out[DAEMON_TOKEN_LEN + 1],
                       struct err *err);
/* 64 fresh hex digits of getrandom(2). */
int daemon__random_token(char out[DAEMON_TOKEN_LEN + 1], struct err *err);
/* Constant-time comparison of a presented token with the right one. */
bool daemon__token_equal(const char *given, const char *token);

/* The queue: sort by priority (higher first), then id (submission). */
void daemon__queue_sort(struct daemon_task **v, size_t n);
enum pick { PICK_START, PICK_WAIT, PICK_REFUSE };
/* For queued tasks in queue order and what running tasks use, what each
 * does now: the tasks that fit start in order; the first that does not
 * waits (its reason says why) and so do all behind it (strict order: a
 * large task is not passed by smaller ones for ever); a task larger than
 * the whole budget (a smaller budget since it was queued) is refused.
 * act[i] and why[i] (whylen bytes each) per task. */
void daemon__queue_pick(struct daemon_task *const *v, size_t n,
                        const struct admit_need *used,
                        const struct admit_budget *b, enum pick *act, char *why,
                        size_t whylen);

/* A task that runs. */
struct daemon_run {
    int64_t id;
    pid_t pid;
    int outfd; /* the read end of its stdout+stderr, -1 at EOF */
    int logfd; /* DATA/tasks/ID/log */
    uint64_t logged;
    bool truncated;
    bool cancel;   /* asked by a user (state canceled) */
    bool stopping; /* asked by the daemon's stop */
    bool exited;
    int status; /* waitpid's */
    int64_t sigint_ns;
    char fail[256]; /* a fault of the daemon's own (disk full) or "" */
    struct admit_need need;
};

struct daemon {
    const struct daemon_opts *o;
    char *data;
    int datafd;
    sqlite3 *db;
    pthread_mutex_t mu;
    char token[DAEMON_TOKEN_LEN + 1];
    /* what the dashboard's forms carry (made at each start): a POST
     * without it is refused */
    char csrf[DAEMON_TOKEN_LEN + 1];
    struct admit_budget budget;
    int wakefd; /* eventfd: the HTTP thread changed the queue */
    struct daemon_run *runs;
    size_t nruns, capruns;
    char url[64];
    int64_t next_fire_s; /* when a schedule fires next (schedule clock);
                          * 0: look now (a schedule changed) */
    /* fire.c: the thread that fires the due schedules (builds take
     * long: the main loop goes on meanwhile) */
    pthread_t firer;
    bool firing;           /* it runs, not yet joined (main thread only) */
    atomic_bool fire_done; /* it has finished */
    atomic_bool fire_stop; /* the daemon stops: kill its build */
};

/* http.c: start and stop the API (libmicrohttpd's thread). */
struct MHD_Daemon;
struct MHD_Daemon *daemon__http_start(struct daemon *d, const char *addr,
                                      unsigned port, unsigned *bound,
                                      struct err *err);
void daemon__http_stop(struct MHD_Daemon **mhd);

/* submit.c: validate a request, snapshot, queue (201 task | error with
 * status). */
int daemon__submit(struct daemon *d, const cJSON *req, struct daemon_task *t,
                   int *http, struct err *err);
/* The composition at path loaded as a run would (plans, else the
 * daemon's --plans); a bad one is http 400, status 65. */
struct composition;
struct composition *daemon__load(struct daemon *d, const char *path,
                                 const char *plans, int *http, struct err *err);
/* Submit the composition at path as t (t's name, priority, schedule,
 * version and build_seconds set by the caller; its name NULL: the
 * composition's): checked, snapshot into *tmp (a fresh
 * DATA/tasks/.new-XXXXXX when NULL; on a failure it may be left, the
 * caller removes it), queued. */
int daemon__submit_path(struct daemon *d, const char *path, const char *plans,
                        struct daemon_task *t, char **tmp, int *http,
                        struct err *err);
/* A fresh DATA/tasks/.new-XXXXXX (the start prunes those left). */
char *daemon__snapshot_dir(struct daemon *d, struct err *err);
/* Insert t and move the snapshot at tmp to tasks/ID in one transaction;
 * under d->mu. */
int daemon__enqueue(struct daemon *d, struct daemon_task *t, const char *tmp,
                    struct err *err);
/* Cancel: queued at once, running by SIGINT; under d->mu. */
int daemon__cancel(struct daemon *d, int64_t id, struct daemon_task *t,
                   struct err *err);
/* Wake the queue (after a change from the HTTP thread). */
void daemon__wake(struct daemon *d);

/* worker.c: start what fits, pump logs, reap, finish tasks. */
void daemon__schedule(struct daemon *d);
void daemon__pump(struct daemon *d, size_t i);
void daemon__reap(struct daemon *d);
/* At start: tasks left running by a killed daemon → interrupted. */
void daemon__recover(struct daemon *d);
/* serve.c: SIGINT every running task; SIGKILL and clean what is left
 * after a bounded wait (ended at once by a second signal on sfd). */
void daemon__stop_all(struct daemon *d, int sfd, int64_t deadline_ns);
/* Where history recording goes: called once for every task that ended
 * (done, canceled, interrupted, refused), after its row is written;
 * with d->mu held once the HTTP API runs (d->db is free to use). */
void daemon__task_ended(struct daemon *d, const struct daemon_task *t);

/* spawn.c: start `testyard run` for t with its output in a pipe. */
int daemon__spawn(struct daemon *d, const struct daemon_task *t,
                  struct daemon_run *r, struct err *err);
/* `testyard clean --run task-ID` with its output appended to the task's
 * log (bounded). */
void daemon__clean_run(struct daemon *d, int64_t id);
/* The last line of the file at path (of its last 1 KiB) not starting
 * with skip (NULL: any), "" when none. */
void daemon__last_line(const char *path, const char *skip, char *out,
                       size_t size);
/* schedules.c: the schedules' API. Add from a request (201, *out
 * {name, id} | error: 400 bad composition (65) or spec (64), 409 a name
 * taken (65)); all as an array; remove, "pause" or "resume" one by name
 * (ENOENT, status 66). */
int daemon__schedule_add(struct daemon *d, const cJSON *req, cJSON **out,
                         int *http, struct err *err);
int daemon__schedules_json(struct daemon *d, cJSON **out, struct err *err);
int daemon__schedule_change(struct daemon *d, const char *name,
                            const char *what, struct err *err);
/* fire.c: fire the schedules that are due (build, version, task) in a
 * thread of their own; the earliest next firing (unix seconds) in
 * *next_s, INT64_MAX when none, 0 while firings still run (look again
 * next turn). daemon__fire_stop: kill a build that runs and wait for the
 * thread (at the daemon's stop). */
void daemon__fire(struct daemon *d, int64_t *next_s);
void daemon__fire_stop(struct daemon *d);
/* Whether pid is still the process started at start. */
bool daemon__pid_alive(long pid, unsigned long long start);
/* DATA/runs/task-ID/result.json into t (outcome, groups). */
void daemon__read_result(struct daemon *d, struct daemon_task *t);

/* ---- the dashboard ----
 * dash.c: the routes outside /api, the login and its cookie, CSRF;
 * dash_page.c: the pieces every page shares; dash_queue.c: the queue and
 * a task's page; dash_history.c: the history pages and compare-two-runs. */
/* Answer a request for a page (url outside /api; body a form, "" when
 * none). */
enum MHD_Result daemon__dash(struct daemon *d, struct MHD_Connection *conn,
                             const char *url, const char *method,
                             const char *body);
/* The page's head (title; a reload every refresh_s seconds when > 0; d
 * NULL: no data folder shown, for those not logged in) and foot. */
void daemon__dash_head(struct strbuf *sb, const struct daemon *d,
                       const char *title, int refresh_s);
void daemon__dash_foot(struct strbuf *sb);
/* A whole error page. */
void daemon__dash_error(struct strbuf *sb, const struct daemon *d,
                        unsigned status, const char *msg);
/* s percent-encoded, for a link's query. */
void daemon__dash_urlarg(struct strbuf *sb, const char *s);
/* "2026-12-02 03:40:11" (UTC) of a wall time, "-" for 0. */
void daemon__dash_time(int64_t wall_ns, char *buf, size_t size);
/* The form with the button that cancels task id; after it, the browser
 * goes back to the queue (to_queue) or to the task's page. */
void daemon__dash_cancel_form(const struct daemon *d, struct strbuf *sb,
                              int64_t id, bool to_queue);
/* The pages: each writes a whole page into sb and returns its HTTP
 * status (an error page when it is not 200). */
unsigned daemon__page_queue(struct daemon *d, struct strbuf *sb);
unsigned daemon__page_task(struct daemon *d, int64_t id, struct strbuf *sb);
/* name NULL or "": the names with a history. */
unsigned daemon__page_history(struct daemon *d, const char *name,
                              struct strbuf *sb);
/* a and b: run numbers in name's history, or with no name task ids. */
unsigned daemon__page_compare(struct daemon *d, const char *name, const char *a,
                              const char *b, struct strbuf *sb);

#endif
