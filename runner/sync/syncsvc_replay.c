/*
 * syncsvc_replay.c — the signals of an instance that was restarted.
 *
 * A stage action may restart an instance (syncsvc_instance_restarting):
 * its new process runs the plan from the start again and signals the
 * states its earlier processes had signalled. Those signals must not
 * count twice — a target counts signals, and a second count would release
 * a barrier early — and must get the numbers they got before, so that a
 * role elected by `seq == 1` stays with the instance that had it.
 *
 * So every state remembers which instance got each sequence number (an
 * int32 a signal, counted against the run's state bytes), and for each
 * restarted instance that signals it again, where its current incarnation
 * is in that order. The k-th signal of an incarnation to a state is
 * answered with the number the instance's k-th earlier signal to it got,
 * and counts nothing; past those, signals count as any signal does. An
 * instance that was never restarted needs no cursor: every entry of its
 * in the order is its own, so each signal of it counts.
 */
#include "sync/syncsvc_int.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Grow *pp (*cap elements of size bytes) to hold need, charging what it
 * adds to the run's state bytes; false (answer sent) when that does not
 * fit in the bound. */
static bool
grow_held(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
          const struct svc_state *st, void *pp, size_t *cap, size_t need,
          size_t size)
{
    size_t room = svc->bounds.state_bytes > svc->state_held
                      ? (svc->bounds.state_bytes - svc->state_held) / size
                      : 0;
    size_t ncap = *cap ? 2 * *cap : 16;
    void **p = pp;

    if (need <= *cap)
        return true;
    if (ncap < need || ncap - *cap > room)
        ncap = need;
    if (ncap - *cap > room) {
        svc__reply_status(svc, &c->peer, id, TY_WIRE_FULL,
                          "state \"%s\" cannot remember another signal: the "
                          "run's states hold %zu bytes, the bound for all of "
                          "them is %zu",
                          st->name, svc->state_held, svc->bounds.state_bytes);
        return false;
    }
    *p = xrealloc(*p, ncap * size);
    svc->state_held += (ncap - *cap) * size;
    *cap = ncap;
    return true;
}

/* The cursor of instance inst in st for its current incarnation (made or
 * restarted at the order's start); NULL (answer sent) when there is no
 * room for it. */
static struct svc_replay *
cursor_of(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
          struct svc_state *st, int inst)
{
    int inc = svc->inst[inst].incarnation;
    struct svc_replay *r;

    for (size_t i = 0; i < st->nreplays; i++) {
        r = &st->replays[i];
        if (r->inst != inst)
            continue;
        if (r->incarnation != inc) {
            r->incarnation = inc;
            r->pos = 0;
        }
        return r;
    }
    if (!grow_held(svc, c, id, st, &st->replays, &st->capreplays,
                   st->nreplays + 1, sizeof(*st->replays)))
        return NULL;
    r = &st->replays[st->nreplays++];
    *r = (struct svc_replay){inst, inc, 0};
    return r;
}

int
svc__replay_check(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
                  struct svc_state *st, int64_t *seq)
{
    int inst = c->inst;
    bool signalled = (st->signalled[inst / 64] >> (inst % 64)) & 1;
    struct svc_replay *r;

    if (svc->inst[inst].incarnation > 0 && signalled) {
        r = cursor_of(svc, c, id, st, inst);
        if (r == NULL)
            return -1;
        for (size_t j = r->pos; r->pos != SIZE_MAX && j < (size_t)st->count;
             j++) {
            if (st->order[j] == inst) {
                r->pos = j + 1;
                *seq = (int64_t)j + 1;
                return 1;
            }
        }
        r->pos = SIZE_MAX; /* every earlier signal was replayed */
    }
    if (!grow_held(svc, c, id, st, &st->order, &st->capa, (size_t)st->count + 1,
                   sizeof(*st->order)))
        return -1;
    return 0;
}

void
svc__replay_note(struct svc_state *st, int inst)
{
    st->order[st->count - 1] = (int32_t)inst;
}
