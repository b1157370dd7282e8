/*
 * ty_stop.c — how a plan hears that the coordinator wants it to end.
 *
 * The coordinator ends an instance with SIGTERM (the stages ended, a
 * restart or stop action, a cancel) and SIGKILL after a grace period. A
 * plan that never asked keeps the old contract: SIGTERM ends it at once,
 * by the signal. But a plan in a load (ty_load_run), or one that asked
 * with ty_stopping, would rather end its load, write its metrics and
 * return: so ty_main installs a handler that, in those cases, only sets a
 * flag, which ty_load_run reads as it reads *stop and ty_stopping returns.
 * In every other case, and for a second SIGTERM, the handler puts the
 * default action back and raises the signal again: the process ends by
 * SIGTERM as if no handler had been there.
 *
 * The handler only reads and writes lock-free atomics and calls sigaction
 * and raise, all async-signal-safe.
 */
#include "ty_int.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int stop_asked; /* a SIGTERM taken as a request to end */
static atomic_int opted_in;   /* ty_stopping was called */
static atomic_int loads;      /* ty_load_run calls going */

static void
term_handler(int sig)
{
    int saved = errno;

    if (atomic_load(&stop_asked) ||
        (atomic_load(&loads) == 0 && !atomic_load(&opted_in))) {
        struct sigaction dfl = {.sa_handler = SIG_DFL};

        /* Blocked until the handler returns, then the default action. */
        sigaction(sig, &dfl, NULL);
        raise(sig);
    } else {
        atomic_store(&stop_asked, 1);
    }
    errno = saved;
}

/* A disposition the plan (or whoever started it) chose is kept: only a
 * default SIGTERM gets the handler. */
void
ty__stop_install(void)
{
    struct sigaction sa, old;

    if (sigaction(SIGTERM, NULL, &old) < 0 ||
        (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = term_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

void
ty__stop_load(int delta)
{
    atomic_fetch_add(&loads, delta);
}

bool
ty__stop_asked(void)
{
    return atomic_load(&stop_asked) != 0;
}

TY_EXPORT bool
ty_stopping(struct ty *ty)
{
    (void)ty;
    atomic_store(&opted_in, 1);
    return atomic_load(&stop_asked) != 0;
}
