/*
 * run_stages.c — a composition's stages (global.run_config.stages, see
 * docs/long-runs.md): stages that last a duration or a number of rounds,
 * and between them actions on a group — restart, pause, unpause, stop.
 *
 * The first stage begins once every instance has started, and those
 * with a readiness probe are ready (or failed). A duration
 * stage ends when its time is up; a rounds stage after that many rounds
 * ended (a finish-N or end-N barrier released, each N once). An action
 * runs at once: pause and unpause are done when asked; a restart stops
 * each running instance of the group (SIGTERM, SIGKILL after its grace)
 * and, as each one's end comes in, starts it again through the backend
 * (same outputs, same identity), and is done when every one of them is
 * ready again; a stop is done when they have all ended. After the last
 * entry every instance is asked to end (SIGTERM, the run's grace).
 *
 * Ready means: the instance called ty_ready (event "ready"), or its
 * group's run.ready probe succeeded, or — a black-box program without a
 * probe — the backend started it. A restart's time runs from its stop to
 * that. An instance with a probe that is not ready within run.ready's
 * timeout has failed and is stopped; a plan that does not call ty_ready
 * within it only has no restart time, with a warning.
 *
 * A restarting instance is not dead to the sync service
 * (syncsvc_instance_restarting): barriers wait for it, and what it
 * signalled stays counted. Its memory.csv, processes.csv and disk.csv go
 * on in the same files.
 *
 * Every stage that ended is a line of stages.jsonl (ms since the run
 * started, the clock of memory.csv's t_ms); the whole timeline, with the
 * actions, goes into result.json.
 */
#include "run/run_int.h"

#include "base/fsat.h"
#include "base/log.h"
#include "base/util.h"
#include "report/report.h"
#include "ty_json.h"
#include "ty_units.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAGES_FILE "stages.jsonl"
#define STAGES_CANCEL_AFTER_MS 200

static int64_t
now_ms(void)
{
    return now_mono_ns() / 1000000;
}

static int64_t
since_start(const struct run *r, int64_t mono_ms)
{
    return mono_ms - r->start_mono_ms;
}

const char *
run__ready_by_name(enum ready_by by)
{
    switch (by) {
    case READY_SDK:
        return "sdk";
    case READY_TCP:
        return "tcp";
    case READY_COMMAND:
        return "command";
    case READY_STARTED:
        return "started";
    case READY_NONE:
        break;
    }
    return NULL;
}

static const struct composition_group *
group_of(const struct run *r, const struct run_inst *in)
{
    return &r->comp->groups[in->group];
}

static bool
has_probe(const struct composition_group *g)
{
    return g->ready.tcp > 0 || g->ready.command != NULL;
}

static int64_t
ready_timeout_ms(const struct composition_group *g)
{
    return (g->ready.timeout_ns > 0 ? g->ready.timeout_ns
                                    : COMPOSITION_READY_TIMEOUT_NS) /
           1000000;
}

int
run__stages_init(struct run *r, struct err *err)
{
    bool probes = false;

    r->st.cur = -1;
    r->st.last_round = -1;
    for (size_t i = 0; i < r->n; i++) {
        r->insts[i].ready_ms = r->insts[i].ready_unix_ms = -1;
        probes |= has_probe(group_of(r, &r->insts[i]));
    }
    if (!probes)
        return 0;
    r->st.ready = run__ready_new(r->be, r->n, err);
    return r->st.ready != NULL ? 0 : -1;
}

void
run__stages_release(struct run *r)
{
    run__ready_destroy(&r->st.ready);
    free(r->st.rec);
    r->st.rec = NULL;
    r->st.nrec = r->st.caprec = 0;
    for (size_t i = 0; r->insts != NULL && i < r->n; i++) {
        free(r->insts[i].restarts);
        r->insts[i].restarts = NULL;
    }
}

int
run__stages_fd(const struct run *r)
{
    return run__ready_fd(r->st.ready);
}

/* ---- the record: stages.jsonl ------------------------------------------ */

static void
write_line(struct run *r, const struct run_stage_rec *rec)
{
    const struct composition_stage *cs = &r->comp->stages[rec->entry];
    cJSON *o = cJSON_CreateObject();
    cleanup_free char *text = NULL;
    struct err e = {0};
    int fd;

    cJSON_AddStringToObject(o, "stage", cs->name);
    ty__json_count(o, "start_ms", rec->start_ms);
    ty__json_count(o, "end_ms", rec->end_ms);
    ty__json_count(o, "start_unix_ms", rec->start_unix_ms);
    ty__json_count(o, "end_unix_ms", rec->end_unix_ms);
    if (cs->rounds > 0)
        cJSON_AddNumberToObject(o, "rounds", (double)r->st.rounds);
    ty__json_string(o, "ended_by", rec->ended_by);
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    fd = fsat_open(r->run_fd, STAGES_FILE,
                   O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644, &e);
    if (fd >= 0) {
        size_t len = strlen(text);

        text[len] = '\n'; /* cJSON's buffer holds the NUL there */
        if (fd_append_whole(fd, text, len + 1) < 0)
            err_sys(&e, errno, "%s/%s", r->run_dir, STAGES_FILE);
        text[len] = '\0';
        close(fd);
    }
    if (e.code != 0)
        log_warnx("stages: %s", e.msg);
}

static struct run_stage_rec *
rec_begin(struct run *r, size_t entry)
{
    struct run_stage_rec *rec;
    int64_t now = now_ms();

    xgrow(&r->st.rec, &r->st.caprec, r->st.nrec + 1, sizeof(*r->st.rec));
    rec = &r->st.rec[r->st.nrec++];
    *rec = (struct run_stage_rec){
        .entry = entry,
        .start_ms = since_start(r, now),
        .end_ms = -1,
        .start_unix_ms = now_wall_ns() / 1000000,
        .end_unix_ms = -1,
    };
    return rec;
}

/* The entry running (r->st.cur) ended. */
static void
cur_end(struct run *r, const char *why)
{
    struct run_stage_rec *rec;

    if (r->st.cur < 0 || r->st.nrec == 0)
        return;
    rec = &r->st.rec[r->st.nrec - 1];
    rec->end_ms = since_start(r, now_ms());
    rec->end_unix_ms = now_wall_ns() / 1000000;
    rec->ended_by = why;
    if (r->comp->stages[rec->entry].kind == STAGE_RUN) {
        write_line(r, rec);
        run__progress_note(r, "stage %s ended (%s)",
                           r->comp->stages[rec->entry].name, why);
    }
    r->st.cur = -1;
}

/* ---- readiness ---------------------------------------------------------- */

static struct run_restart *
last_restart(struct run_inst *in)
{
    return in->nrestarts > 0 ? &in->restarts[in->nrestarts - 1] : NULL;
}

static void
ready_forget(struct run *r, struct run_inst *in, char *why, size_t size)
{
    run__ready_forget(r->st.ready, in->index, why, size);
    in->await_ready = false;
    in->ready_due_ms = 0;
}

void
run__stages_ready(struct run *r, struct run_inst *in, enum ready_by by)
{
    struct run_restart *rs = last_restart(in);
    int64_t now = now_ms(), wall = now_wall_ns() / 1000000;

    if (in->ended)
        return;
    if (rs != NULL && rs->exit_ms >= 0) {
        if (rs->ready_ms >= 0)
            return;
        rs->ready_ms = since_start(r, now);
        rs->ready_unix_ms = wall;
        rs->by = by;
        run__progress_note(r, "%s ready again %.2f s after its stop (%s)",
                           in->label,
                           (double)(rs->ready_ms - rs->stop_ms) / 1000.0,
                           run__ready_by_name(by));
    } else if (rs == NULL) {
        if (in->ready_ms >= 0)
            return;
        in->ready_ms = since_start(r, now);
        in->ready_unix_ms = wall;
        in->ready_by = by;
    } else {
        return; /* the process being stopped: its word no longer counts */
    }
    ready_forget(r, in, NULL, 0);
}

/* The instance (its incarnation in->gen) started: how will it be found
 * ready? */
static void
await_ready(struct run *r, struct run_inst *in)
{
    const struct composition_group *g = group_of(r, in);
    struct run_restart *rs = last_restart(in);
    char addr[64] = "127.0.0.1";
    struct err e = {0};

    if ((rs != NULL && rs->ready_ms >= 0) || (rs == NULL && in->ready_ms >= 0))
        return; /* it said so before its start was reported */
    if (has_probe(g)) {
        if (g->ready.tcp > 0 && g->ready.command == NULL &&
            r->be->ops->address != NULL &&
            r->be->ops->address(r->be, in->index, addr, sizeof(addr)) < 0)
            snprintf(addr, sizeof(addr), "127.0.0.1");
        if (run__ready_watch(r->st.ready, in->index, in->gen, &g->ready, addr,
                             &e) < 0)
            log_warnx("%s: run.ready: %s", in->label, e.msg);
    } else if (composition_group_blackbox(g)) {
        run__stages_ready(r, in, READY_STARTED);
        return;
    } else if (rs == NULL) {
        return; /* a plan's first start: ty_ready is noted when it comes */
    }
    in->await_ready = true;
    in->ready_due_ms = now_ms() + ready_timeout_ms(g);
}

static void
ready_overdue(struct run *r, struct run_inst *in)
{
    const struct composition_group *g = group_of(r, in);
    char why[256] = "", after[64];

    ready_forget(r, in, why, sizeof(why));
    ty__format_duration(ready_timeout_ms(g) * 1000000, after, sizeof(after));
    if (!has_probe(g)) {
        log_warnx("%s did not call ty_ready within %s of its restart: its "
                  "restart time is unknown",
                  in->label, after);
        return;
    }
    free(in->error);
    in->error = xasprintf("not ready within %s (run.ready%s%s)", after,
                          why[0] ? ": " : "", why);
    in->runner_failed = true;
    run__progress_note(r, "%s %s; stopping it", in->label, in->error);
    if (in->stopped == STOP_NONE)
        in->stopped = STOP_STAGES;
    r->be->ops->stop(r->be, in->index, false);
    in->kill_at_ms = now_ms() + COMPOSITION_STAGE_GRACE_NS / 1000000;
}

/* ---- instances starting and ending -------------------------------------- */

void
run__stages_started(struct run *r, struct run_inst *in)
{
    struct run_restart *rs = last_restart(in);

    if (in->restarting && rs != NULL) {
        enum ty__cgver ver = TY_CG_NONE;
        cleanup_free char *dir =
            r->be->ops->memory_cgroup(r->be, in->index, &ver);
        pid_t pid = r->be->ops->host_pid != NULL
                        ? r->be->ops->host_pid(r->be, in->index)
                        : 0;
        struct err e = {0};

        in->restarting = false;
        rs->start_ms = since_start(r, now_ms());
        in->pid = pid;
        if (in->mon != NULL && monitor__instance_up(r->mon, in->mon, dir, ver,
                                                    pid, now_ms(), &e) < 0)
            log_warnx("%s: after its restart: %s", in->label, e.msg);
        if (in->series != NULL)
            series__instance_up(r->series, in->series, dir, pid, now_ms());
        run__preoom_watch(r, in, pid, dir);
    }
    await_ready(r, in);
}

/* Start it again; false when it cannot be (it ends). */
static bool
restart_now(struct run *r, struct run_inst *in, const struct backend_event *ev)
{
    struct run_restart *rs = last_restart(in);
    struct err e = {0};

    rs->exit_ms = since_start(r, now_ms());
    rs->killed = ev->signal == SIGKILL;
    in->kill_at_ms = 0;
    ready_forget(r, in, NULL, 0);
    in->gen++;
    if (in->mon != NULL)
        monitor__instance_down(r->mon, in->mon, now_ms());
    if (in->series != NULL)
        series__instance_down(r->series, in->series, now_ms());
    run__preoom_unwatch(in);
    syncsvc_instance_restarting(r->svc, in->index);
    if (r->be->ops->restart == NULL)
        err_set(&e, ENOTSUP, "runner %s cannot restart an instance",
                r->comp->runner);
    else if (r->be->ops->restart(r->be, in->index, &e) == 0)
        return true;
    free(in->error);
    in->error = xasprintf("could not be restarted: %s", e.msg);
    in->runner_failed = true;
    in->restarting = false;
    return false;
}

bool
run__stages_exited(struct run *r, struct run_inst *in,
                   const struct backend_event *ev)
{
    if (!in->restarting)
        return false;
    if (ev->type == BACKEND_START_FAILED) {
        free(in->error);
        in->error = xasprintf("failed to start again: %s", ev->message);
        in->runner_failed = true;
        in->restarting = false;
        return false;
    }
    if (r->canceled || r->deadline_hit || r->lost || r->st.done) {
        in->restarting = false;
        return false;
    }
    if (ev->oom) {
        in->restarting = false;
        return false; /* killed by the OOM killer on its way out */
    }
    return restart_now(r, in, ev);
}

/* ---- actions ------------------------------------------------------------ */

static void
act_restart(struct run *r, size_t entry, const struct composition_stage *cs)
{
    int64_t now = now_ms();

    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];
        struct run_restart *rs;

        if ((size_t)in->group != cs->group || in->ended || !in->started)
            continue;
        run__inst_pause(r, in, false);
        xgrow(&in->restarts, &in->caprestarts, in->nrestarts + 1,
              sizeof(*in->restarts));
        rs = &in->restarts[in->nrestarts++];
        *rs = (struct run_restart){
            .action = entry,
            .stop_ms = since_start(r, now),
            .stop_unix_ms = now_wall_ns() / 1000000,
            .exit_ms = -1,
            .start_ms = -1,
            .ready_ms = -1,
            .ready_unix_ms = -1,
        };
        in->restarting = true;
        ready_forget(r, in, NULL, 0);
        r->be->ops->stop(r->be, in->index, false);
        in->kill_at_ms = now + cs->grace_ns / 1000000;
    }
}

static void
act_stop(struct run *r, const struct composition_stage *cs)
{
    int64_t now = now_ms();

    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];

        if ((size_t)in->group != cs->group || in->ended)
            continue;
        run__inst_pause(r, in, false);
        if (in->stopped == STOP_NONE)
            in->stopped = STOP_STAGES;
        r->be->ops->stop(r->be, in->index, false);
        in->kill_at_ms = now + cs->grace_ns / 1000000;
    }
}

void
run__inst_pause(struct run *r, struct run_inst *in, bool pause)
{
    struct err e = {0};

    if (in->paused == pause)
        return;
    if (r->be->ops->pause == NULL)
        err_set(&e, ENOTSUP, "runner %s cannot pause an instance",
                r->comp->runner);
    else if (r->be->ops->pause(r->be, in->index, pause, &e) == 0) {
        in->paused = pause;
        return;
    }
    log_warnx("%s: %s: %s", in->label, pause ? "pause" : "unpause", e.msg);
    if (!pause)
        in->paused = false; /* what it is now, the stop goes on */
}

static void
act_pause(struct run *r, const struct composition_stage *cs, bool pause)
{
    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];

        if ((size_t)in->group == cs->group && !in->ended && in->started)
            run__inst_pause(r, in, pause);
    }
}

/* Whether the action running is done. */
static bool
action_done(const struct run *r, const struct composition_stage *cs)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct run_inst *in = &r->insts[i];

        if ((size_t)in->group != cs->group || in->ended)
            continue;
        if (cs->kind == STAGE_STOP ||
            (cs->kind == STAGE_RESTART && (in->restarting || in->await_ready)))
            return false;
    }
    return true;
}

/* Everything ran: ask every instance to end. */
static void
stages_over(struct run *r)
{
    r->st.done = true;
    run__progress_note(r, "the stages ended; stopping every instance");
    run__stop_all(r, STOP_STAGES, false);
    /* Waits end a moment after the SIGTERM, so that a plan whose wait
     * fails already knows it is asked to end (ty_stopping). */
    r->st.cancel_at_ms = now_ms() + STAGES_CANCEL_AFTER_MS;
}

/* Run entries from r->st.next until one takes time. */
static void
advance(struct run *r)
{
    while (!r->st.done && r->st.cur < 0) {
        const struct composition_stage *cs;
        size_t entry = r->st.next;

        if (entry >= r->comp->nstages) {
            stages_over(r);
            return;
        }
        r->st.next++;
        cs = &r->comp->stages[entry];
        r->st.cur = (long)entry;
        rec_begin(r, entry);
        switch (cs->kind) {
        case STAGE_RUN:
            r->st.cur_end_ms =
                cs->duration_ns > 0 ? now_ms() + cs->duration_ns / 1000000 : 0;
            r->st.rounds = 0;
            r->st.rounds_reached = false;
            run__progress_note(r, "stage %s began", cs->name);
            return;
        case STAGE_RESTART:
            run__progress_note(r, "restarting group %s",
                               r->comp->groups[cs->group].id);
            act_restart(r, entry, cs);
            break;
        case STAGE_STOP:
            run__progress_note(r, "stopping group %s",
                               r->comp->groups[cs->group].id);
            act_stop(r, cs);
            break;
        case STAGE_PAUSE:
        case STAGE_UNPAUSE:
            act_pause(r, cs, cs->kind == STAGE_PAUSE);
            break;
        }
        if (action_done(r, cs))
            cur_end(r, "done");
        else
            return;
    }
}

void
run__stages_barrier(struct run *r, const char *state)
{
    const struct composition_stage *cs;
    bool end = false;
    int n;

    if (r->st.cur < 0)
        return;
    cs = &r->comp->stages[r->st.cur];
    if (cs->kind != STAGE_RUN || cs->rounds <= 0)
        return;
    n = report_round_of(state, &end);
    /* A restarted instance passes its old rounds again: only a round
     * later than any seen counts. */
    if (n < 0 || !end || n <= r->st.last_round)
        return;
    r->st.last_round = n;
    if (++r->st.rounds >= cs->rounds)
        r->st.rounds_reached = true; /* acted on in run__stages_tick */
}

static void
read_answers(struct run *r)
{
    struct run_ready_answer a;

    while (run__ready_next(r->st.ready, &a) > 0) {
        struct run_inst *in;

        if (a.index < 0 || (size_t)a.index >= r->n)
            continue;
        in = &r->insts[a.index];
        if (a.gen == in->gen && !in->ended)
            run__stages_ready(r, in, a.by);
    }
}

static void
timers(struct run *r)
{
    int64_t now = now_ms();

    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];

        if (in->ended)
            continue;
        if (in->kill_at_ms > 0 && now >= in->kill_at_ms) {
            in->kill_at_ms = 0;
            r->be->ops->stop(r->be, in->index, true);
        }
        if (in->await_ready && in->ready_due_ms > 0 && now >= in->ready_due_ms)
            ready_overdue(r, in);
    }
}

void
run__stages_tick(struct run *r)
{
    const struct composition_stage *cs;

    read_answers(r);
    timers(r);
    if (r->st.cancel_at_ms > 0 && now_ms() >= r->st.cancel_at_ms) {
        r->st.cancel_at_ms = 0;
        syncsvc_cancel_all(r->svc, "the run's stages ended");
    }
    if (r->comp->nstages == 0 || r->st.done)
        return;
    if (!r->st.begun) {
        if (r->nstarted + r->nended < r->n)
            return;
        for (size_t i = 0; i < r->n; i++)
            if (!r->insts[i].ended && r->insts[i].await_ready)
                return;
        r->st.begun = true;
        advance(r);
        return;
    }
    if (r->st.cur < 0)
        return;
    cs = &r->comp->stages[r->st.cur];
    if (cs->kind == STAGE_RUN) {
        if (cs->rounds > 0 && r->st.rounds_reached)
            cur_end(r, "rounds");
        else if (cs->duration_ns > 0 && now_ms() >= r->st.cur_end_ms)
            cur_end(r, "duration");
    } else if (action_done(r, cs)) {
        cur_end(r, "done");
    }
    advance(r);
}

int64_t
run__stages_next_ms(const struct run *r)
{
    int64_t next = INT64_MAX;

    for (size_t i = 0; i < r->n; i++) {
        const struct run_inst *in = &r->insts[i];

        if (in->ended)
            continue;
        if (in->kill_at_ms > 0 && in->kill_at_ms < next)
            next = in->kill_at_ms;
        if (in->await_ready && in->ready_due_ms > 0 && in->ready_due_ms < next)
            next = in->ready_due_ms;
    }
    if (r->st.cancel_at_ms > 0 && r->st.cancel_at_ms < next)
        next = r->st.cancel_at_ms;
    if (!r->st.done && r->st.cur >= 0 &&
        r->comp->stages[r->st.cur].kind == STAGE_RUN && r->st.cur_end_ms > 0 &&
        r->st.cur_end_ms < next)
        next = r->st.cur_end_ms;
    return next;
}

void
run__stages_close(struct run *r, const char *why)
{
    if (r->comp->nstages == 0 || r->st.done)
        return;
    cur_end(r, why);
    r->st.done = true;
}
