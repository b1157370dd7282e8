/*
 * syncsvc_barrier.c — states, signals and barriers, and who is still alive.
 *
 * A state is a name with a counter and a bitmap of the instances that
 * signalled it. A barrier is a (state, target) pair with the waiters parked
 * on it; it is released when the counter reaches the target. Membership
 * makes barriers fail fast: a barrier can still be met only while the
 * signals so far plus one from every live instance that has not signalled
 * reach the target. When an instance ends (syncsvc_instance_exited) every
 * barrier that drops below that fails at once for all its waiters, and a
 * barrier asked for later that is already out of reach fails on the spot;
 * the error names the instance and how it ended. An instance being
 * restarted stays alive: its waits are dropped, and the signals its new
 * process repeats are answered from syncsvc_replay.c without counting.
 *
 * Each release, failure and timeout is one line of <run_dir>/barriers.jsonl,
 * which the report uses to line memory samples up with rounds.
 */
#include "sync/syncsvc_int.h"

#include "base/strbuf.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the run-wide bounds count for a state: its name, its bitmaps and
 * what the service keeps around them. */
static size_t
state_cost(const struct syncsvc *svc, size_t namelen)
{
    return sizeof(struct svc_state) + sizeof(struct svc_map_entry) +
           2 * namelen + (svc->words + svc->ngroups) * sizeof(uint64_t) +
           3 * SVC_OBJ_OVERHEAD;
}

/* Whether the run may hold one more state of this name's length; if
 * not, the answer is sent. */
static bool
state_room(struct syncsvc *svc, const struct svc_ctx *c, int64_t id, size_t len)
{
    if (svc->states.count >= svc->bounds.states)
        return svc__reply_status(svc, &c->peer, id, TY_WIRE_FULL,
                                 "no new state: the run has %zu states, the "
                                 "most it may have",
                                 svc->states.count),
               false;
    if (svc->state_held + state_cost(svc, len) > svc->bounds.state_bytes)
        return svc__reply_status(svc, &c->peer, id, TY_WIRE_FULL,
                                 "no new state: the run's states hold %zu "
                                 "bytes, the bound for all of them is %zu",
                                 svc->state_held, svc->bounds.state_bytes),
               false;
    return true;
}

/* The state, made when new; NULL (and an answer sent) when the run may
 * not hold another. */
static struct svc_state *
state_get(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
          const char *name)
{
    size_t len = strlen(name);
    struct svc_state *st = svc__map_get(&svc->states, name, len);

    if (st != NULL)
        return st;
    if (!state_room(svc, c, id, len))
        return NULL;
    st = xcalloc(1, sizeof(*st));
    st->name = xstrdup(name);
    st->signalled = xcalloc(svc->words ? svc->words : 1, sizeof(uint64_t));
    st->gpending = xcalloc(svc->ngroups ? svc->ngroups : 1, sizeof(int64_t));
    for (size_t i = 0; i < svc->ninst; i++) {
        if (!svc->inst[i].alive)
            continue;
        st->pending++;
        st->gpending[svc->inst[i].gidx]++;
    }
    svc__map_put(&svc->states, name, len, st);
    svc->state_held += state_cost(svc, len);
    return st;
}

static bool
has_signalled(const struct svc_state *st, int inst)
{
    return (st->signalled[inst / 64] >> (inst % 64)) & 1;
}

/* Signals so far plus one from each live instance yet to signal — of
 * group scope when scope >= 0, else of the whole run. */
static int64_t
reachable(const struct svc_state *st, int scope)
{
    return st->count + (scope >= 0 ? st->gpending[scope] : st->pending);
}

/* The first instance (of group scope, when >= 0) that ended without
 * signalling, or -1; *more gets how many others did too. */
static int
first_lost(const struct syncsvc *svc, const struct svc_state *st, int scope,
           int *more)
{
    int first = -1;

    *more = 0;
    for (size_t i = 0; i < svc->ninst; i++) {
        if (svc->inst[i].alive || has_signalled(st, (int)i) ||
            (scope >= 0 && svc->inst[i].gidx != scope))
            continue;
        if (first < 0)
            first = (int)i;
        else
            (*more)++;
    }
    return first;
}

/* One line of barriers.jsonl; waiters and on_board (how many of them are
 * answered on the release board) are left out when negative. */
static void
log_line(struct syncsvc *svc, const struct svc_state *st, int64_t target,
         const char *result, const char *error, int64_t waiters,
         int64_t on_board)
{
    int64_t now = now_wall_ns();
    char ts[40], ns[24];
    cJSON *o;
    char *s;
    struct strbuf sb;

    if (svc->log_fd < 0)
        return;
    time_rfc3339(now, ts, sizeof(ts));
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "time", ts);
    snprintf(ns, sizeof(ns), "%lld", (long long)now);
    cJSON_AddRawToObject(o, "t_ns", ns); /* exact: past 15 digits */
    cJSON_AddStringToObject(o, "state", st->name);
    cJSON_AddNumberToObject(o, "target", (double)target);
    cJSON_AddNumberToObject(o, "count", (double)st->count);
    cJSON_AddStringToObject(o, "result", result);
    if (error != NULL)
        cJSON_AddStringToObject(o, "error", error);
    if (waiters >= 0)
        cJSON_AddNumberToObject(o, "waiters", (double)waiters);
    if (on_board >= 0)
        cJSON_AddNumberToObject(o, "on_board", (double)on_board);
    s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (s == NULL)
        return;
    strbuf_init(&sb);
    strbuf_adds(&sb, s);
    strbuf_addc(&sb, '\n');
    /* A line that does not fit is cut back, and the log stops there: the
     * run then fails with the file named (syncsvc_log_status). */
    if (fd_append_whole(svc->log_fd, sb.buf, sb.len) < 0) {
        svc->log_errno = errno;
        close(svc->log_fd);
        svc->log_fd = -1;
    }
    strbuf_release(&sb);
    free(s);
}

/* Log and announce a target's first release; later passes are quiet.
 * b: the barrier whose waiters are about to be answered, or NULL. */
static void
note_released(struct syncsvc *svc, struct svc_state *st, int64_t target,
              const struct svc_barrier *b)
{
    int64_t waiters = b ? 0 : -1, on_board = b ? 0 : -1;

    for (size_t i = 0; i < st->nreleased; i++)
        if (st->released[i] == target)
            return;
    if (st->nreleased == st->capreleased)
        svc->state_held += st->capreleased * sizeof(*st->released) + 32;
    xgrow(&st->released, &st->capreleased, st->nreleased + 1,
          sizeof(*st->released));
    st->released[st->nreleased++] = target;
    for (const struct svc_waiter *w = b ? b->waiters : NULL; w; w = w->next) {
        waiters++;
        on_board += w->board > 0;
    }
    log_line(svc, st, target, "released", NULL, waiters, on_board);
    if (svc->obs.on_barrier != NULL)
        svc->obs.on_barrier(svc->obs_arg, st->name, target, true);
}

static void
set_waiting(struct syncsvc *svc, int inst, int delta)
{
    struct svc_inst *in = &svc->inst[inst];
    int before = in->barrier_waits;

    in->barrier_waits += delta;
    if (svc->obs.on_waiting != NULL &&
        (before == 0) != (in->barrier_waits == 0))
        svc->obs.on_waiting(svc->obs_arg, inst, in->barrier_waits > 0);
}

static void
barrier_unlink(struct svc_state *st, struct svc_barrier *b)
{
    for (struct svc_barrier **pp = &st->barriers; *pp; pp = &(*pp)->next) {
        if (*pp == b) {
            *pp = b->next;
            return;
        }
    }
}

/* Answer w with st: a message, printed from the shared middle when it
 * fits; a release the waiter asked for on the board goes there instead
 * (returns true: the caller wakes the board once for all of them). */
static bool
answer_one(struct syncsvc *svc, struct svc_waiter *w, enum ty_wire_status st,
           const char *msg, const char *mid, size_t midlen)
{
    char buf[SVC_REPLY_MAX];
    size_t len;
    struct ty_wire_resp r;

    if (st == TY_WIRE_OK && w->board > 0) {
        svc__board_post(svc, w->board, w->id, w->seq);
        return true;
    }
    len = midlen
              ? ty__wire_resp_join(w->id, mid, midlen, w->seq, buf, sizeof(buf))
              : 0;
    if (len > 0) {
        svc__send(svc, &w->peer, buf, len, w->id);
        return false;
    }
    ty__wire_resp_init(&r, w->id);
    r.status = st;
    r.error = msg;
    r.seq = w->seq;
    svc__reply(svc, &w->peer, &r);
    return false;
}

/* Answer every waiter of b with st (and msg) and free them. The answers
 * differ only in id and seq, so the rest is printed once. */
static void
answer_all(struct syncsvc *svc, struct svc_barrier *b, enum ty_wire_status st,
           const char *msg)
{
    char mid[SVC_REPLY_MAX];
    size_t midlen = ty__wire_resp_mid(st, msg, mid, sizeof(mid));
    struct svc_waiter *w;
    bool posted = false;

    while ((w = b->waiters) != NULL) {
        svc__list_del(&b->waiters, w);
        posted |= answer_one(svc, w, st, msg, mid, midlen);
        set_waiting(svc, w->inst, -1);
        svc__waiter_free(svc, w);
    }
    if (posted)
        svc__board_wake(svc);
}

/* Answer every waiter of b with st (and msg), then drop b. */
static void
barrier_finish(struct syncsvc *svc, struct svc_barrier *b,
               enum ty_wire_status st, const char *msg)
{
    struct svc_state *state = b->state;

    barrier_unlink(state, b);
    if (st == TY_WIRE_OK) {
        note_released(svc, state, b->target, b);
    } else {
        log_line(svc, state, b->target, "failed", msg, -1, -1);
        if (svc->obs.on_barrier != NULL)
            svc->obs.on_barrier(svc->obs_arg, state->name, b->target, false);
    }
    answer_all(svc, b, st, msg);
    free(b);
}

static void
release_reached(struct syncsvc *svc, struct svc_state *st)
{
    struct svc_barrier *b = st->barriers, *next;

    for (; b != NULL; b = next) {
        next = b->next;
        if (b->target <= st->count)
            barrier_finish(svc, b, TY_WIRE_OK, NULL);
    }
}

/* Count c's signal to st, or replay an earlier incarnation's
 * (syncsvc_replay.c): 0 counted, 1 replayed (nothing changes), -1 when
 * the run's states had no room (answer sent). *seq gets its number. */
static int
signal_state(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
             struct svc_state *st, int64_t *seq)
{
    int inst = c->inst;
    int rc = svc__replay_check(svc, c, id, st, seq);

    if (rc != 0)
        return rc;
    if (!has_signalled(st, inst) && svc->inst[inst].alive) {
        st->pending--;
        st->gpending[svc->inst[inst].gidx]--;
    }
    st->signalled[inst / 64] |= 1ULL << (inst % 64);
    *seq = ++st->count;
    svc__replay_note(st, inst);
    return 0;
}

/* Whether barrier (st, target, scope) is out of reach; if so, why goes
 * in msg. The lost instance named is `lost` when >= 0, else the first one
 * found. */
static bool
out_of_reach(const struct syncsvc *svc, const struct svc_state *st,
             int64_t target, int scope, int lost, char *msg, size_t size)
{
    int64_t can = reachable(st, scope);
    int more = 0;
    char name[300], in[300] = "";

    if (can >= target)
        return false;
    if (scope >= 0)
        snprintf(in, sizeof(in), " in group %s", svc->groups[scope]);
    if (lost < 0)
        lost = first_lost(svc, st, scope, &more);
    if (lost < 0) {
        snprintf(msg, size,
                 "barrier \"%s\"%s can never reach %lld: %lld signalled and "
                 "%lld instances could still signal",
                 st->name, in, (long long)target, (long long)st->count,
                 (long long)(can - st->count));
        return true;
    }
    svc__inst_name(svc, lost, name, sizeof(name));
    snprintf(msg, size,
             "%s %s%s: barrier \"%s\"%s can no longer reach %lld (%lld "
             "signalled, at most %lld more)",
             name, svc->inst[lost].how, more ? " (and others ended)" : "",
             st->name, in, (long long)target, (long long)st->count,
             (long long)(can - st->count));
    return true;
}

static struct svc_barrier *
barrier_get(struct svc_state *st, int64_t target, int scope)
{
    struct svc_barrier *b;

    for (b = st->barriers; b != NULL; b = b->next)
        if (b->target == target && b->scope == scope)
            return b;
    b = xcalloc(1, sizeof(*b));
    b->state = st;
    b->target = target;
    b->scope = scope;
    b->next = st->barriers;
    st->barriers = b;
    return b;
}

static void
wait_common(struct syncsvc *svc, const struct svc_ctx *c,
            const struct ty_wire_req *req, struct svc_state *st, int64_t seq,
            int scope)
{
    struct ty_wire_resp r;
    struct svc_waiter *w;
    struct svc_barrier *b;
    char msg[1024];

    ty__wire_resp_init(&r, req->id);
    r.seq = seq;
    if (st->count >= req->target) {
        note_released(svc, st, req->target, NULL);
        svc__reply(svc, &c->peer, &r);
        return;
    }
    if (out_of_reach(svc, st, req->target, scope, -1, msg, sizeof(msg))) {
        log_line(svc, st, req->target, "failed", msg, -1, -1);
        r.status = TY_WIRE_FAILED;
        r.error = msg;
        svc__reply(svc, &c->peer, &r);
        return;
    }
    w = svc__waiter_new(svc, c, req->id, req->timeout_ms, SVC_T_BARRIER);
    if (w == NULL)
        return;
    b = barrier_get(st, req->target, scope);
    w->seq = seq;
    w->board = req->board;
    w->barrier = b;
    svc__list_add(&b->waiters, w);
    set_waiting(svc, c->inst, +1);
}

void
svc__op_signal(struct syncsvc *svc, const struct svc_ctx *c,
               const struct ty_wire_req *req)
{
    struct svc_state *st = state_get(svc, c, req->id, req->state);
    struct ty_wire_resp r;
    int rc;

    if (st == NULL)
        return;
    ty__wire_resp_init(&r, req->id);
    if ((rc = signal_state(svc, c, req->id, st, &r.seq)) < 0)
        return;
    svc__reply(svc, &c->peer, &r);
    if (rc == 0)
        release_reached(svc, st);
}

/* A release board slot named in req must be one of the connection's;
 * otherwise the request is refused before it changes anything. */
static bool
board_slot_ok(struct syncsvc *svc, const struct svc_ctx *c,
              const struct ty_wire_req *req)
{
    if (req->board == 0 || (c->board > 0 && req->board >= c->board &&
                            req->board < c->board + TY_BOARD_AREA))
        return true;
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                      "\"board\": %lld is not one of this connection's "
                      "release board slots",
                      (long long)req->board);
    return false;
}

/* The group a barrier is scoped to (-1: none); -2, with an answer sent,
 * when the run has no such group. */
static int
scope_of(struct syncsvc *svc, const struct svc_ctx *c,
         const struct ty_wire_req *req)
{
    int g;

    if (req->group == NULL)
        return -1;
    g = svc__group_find(svc, req->group);
    if (g < 0)
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                          "\"group\": the run has no group \"%s\"", req->group);
    return g < 0 ? -2 : g;
}

void
svc__op_barrier(struct syncsvc *svc, const struct svc_ctx *c,
                const struct ty_wire_req *req)
{
    struct svc_state *st;
    int scope;

    if (!board_slot_ok(svc, c, req) || (scope = scope_of(svc, c, req)) == -2 ||
        (st = state_get(svc, c, req->id, req->state)) == NULL)
        return;
    wait_common(svc, c, req, st, -1, scope);
}

void
svc__op_signal_wait(struct syncsvc *svc, const struct svc_ctx *c,
                    const struct ty_wire_req *req)
{
    struct svc_state *st;
    int64_t seq;
    int scope, rc;

    if (!board_slot_ok(svc, c, req) || (scope = scope_of(svc, c, req)) == -2)
        return;
    st = state_get(svc, c, req->id, req->state);
    if (st == NULL || (rc = signal_state(svc, c, req->id, st, &seq)) < 0)
        return;
    if (rc == 0)
        release_reached(svc, st);
    wait_common(svc, c, req, st, seq, scope);
}

void
svc__barrier_timeout(struct syncsvc *svc, struct svc_waiter *w)
{
    struct svc_barrier *b = w->barrier;
    struct svc_state *st = b->state;
    char msg[600];

    snprintf(msg, sizeof(msg), "barrier \"%s\" timed out at %lld of %lld",
             st->name, (long long)st->count, (long long)b->target);
    svc__list_del(&b->waiters, w);
    svc__reply_status(svc, &w->peer, w->id, TY_WIRE_TIMEOUT, "%s", msg);
    set_waiting(svc, w->inst, -1);
    svc__waiter_free(svc, w);
    if (b->waiters != NULL)
        return;
    log_line(svc, st, b->target, "timeout", msg, -1, -1);
    if (svc->obs.on_barrier != NULL)
        svc->obs.on_barrier(svc->obs_arg, st->name, b->target, false);
    barrier_unlink(st, b);
    free(b);
}

struct exit_walk {
    struct syncsvc *svc;
    int inst;
};

static void
exited_state(void *value, void *arg)
{
    struct exit_walk *ew = arg;
    struct svc_state *st = value;
    struct svc_barrier *b = st->barriers, *next;
    char msg[1024];

    if (has_signalled(st, ew->inst))
        return;
    st->pending--; /* it will never signal now */
    st->gpending[ew->svc->inst[ew->inst].gidx]--;
    for (; b != NULL; b = next) {
        next = b->next;
        if (b->scope >= 0 && b->scope != ew->svc->inst[ew->inst].gidx)
            continue; /* not one of its participants */
        if (out_of_reach(ew->svc, st, b->target, b->scope, ew->inst, msg,
                         sizeof(msg)))
            barrier_finish(ew->svc, b, TY_WIRE_FAILED, msg);
    }
}

void
svc__barrier_exited(struct syncsvc *svc, int inst)
{
    struct exit_walk ew = {svc, inst};

    svc__map_each(&svc->states, exited_state, &ew);
}

/* Drop inst's waiters of st's barriers, and barriers left with none,
 * with no answer and nothing logged: the process that waited is gone. */
static void
restarting_state(void *value, void *arg)
{
    struct exit_walk *ew = arg;
    struct svc_state *st = value;
    struct svc_barrier *b = st->barriers, *next;

    for (; b != NULL; b = next) {
        int n = svc__list_drop_inst(ew->svc, &b->waiters, ew->inst);

        next = b->next;
        if (n > 0)
            set_waiting(ew->svc, ew->inst, -n);
        if (b->waiters == NULL) {
            barrier_unlink(st, b);
            free(b);
        }
    }
}

void
svc__barrier_restarting(struct syncsvc *svc, int inst)
{
    struct exit_walk ew = {svc, inst};

    svc__map_each(&svc->states, restarting_state, &ew);
}

struct cancel_walk {
    struct syncsvc *svc;
    const char *why;
};

static void
cancel_state(void *value, void *arg)
{
    struct cancel_walk *cw = arg;
    struct svc_state *st = value;

    while (st->barriers != NULL)
        barrier_finish(cw->svc, st->barriers, TY_WIRE_CANCELED, cw->why);
}

void
svc__barrier_cancel_all(struct syncsvc *svc, const char *why)
{
    struct cancel_walk cw = {svc, why};

    svc__map_each(&svc->states, cancel_state, &cw);
}

void
svc__state_free(void *value)
{
    struct svc_state *st = value;

    while (st->barriers != NULL) {
        struct svc_barrier *b = st->barriers;

        st->barriers = b->next;
        while (b->waiters != NULL) {
            struct svc_waiter *w = b->waiters;

            b->waiters = w->next;
            svc__waiter_drop(w);
        }
        free(b);
    }
    free(st->released);
    free(st->order);
    free(st->replays);
    free(st->signalled);
    free(st->gpending);
    free(st->name);
    free(st);
}
