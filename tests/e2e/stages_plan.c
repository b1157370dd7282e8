/*
 * stages_plan.c — a plan run through a composition's stages, for the
 * suites that check restarts on local:exec (tests/e2e/stages.sh) and
 * local:docker (tests/docker/stages.sh); its manifest is
 * stages_manifest.yaml and tests/helpers/stages.sh runs it.
 *
 * The case "steady" is a node that keeps its state in its outputs
 * folder, which a restart keeps: state/starts counts its processes and
 * state/cycles the tasks all of them did. Each process first "replays"
 * its state — it sleeps replay_per_cycle for every cycle done so far, so
 * its restart takes longer the more work came before — then says it is
 * ready (ty_ready) and runs the load "put" at `rate` until the runner
 * asks it to end (ty_stopping), and returns normally.
 *
 * The case "rounds" runs round after round, each a pause then the
 * barrier end-N that every instance signals; it ends when asked. A
 * restarted process runs from round 1 again: the rounds its earlier
 * process passed are passed again at once (their signals were kept), and
 * it catches up with the others.
 *
 * The case "hang" waits at a barrier no one signals: asked to end, its
 * wait gives up at once (ty_stopping) and it returns normally.
 */
#include "testyard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct node {
    char cycles_path[4096];
    int64_t cycles;
};

/* Sleep ns, cut short when the runner asks the process to end. */
static void
pause_ns(struct ty *ty, int64_t ns)
{
    int64_t step = 10 * 1000000;

    while (ns > 0 && !ty_stopping(ty)) {
        struct timespec ts = {0, (long)(ns < step ? ns : step)};

        nanosleep(&ts, NULL);
        ns -= step;
    }
}

static int64_t
read_count(const char *path)
{
    char buf[32] = "";
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return 0;
    if (fgets(buf, sizeof(buf), f) == NULL)
        buf[0] = '\0';
    fclose(f);
    return strtoll(buf, NULL, 10);
}

static int
write_count(const char *path, int64_t n)
{
    char tmp[4200];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if ((f = fopen(tmp, "w")) == NULL)
        return -1;
    fprintf(f, "%lld\n", (long long)n);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static int
put(struct ty *ty, void *arg, int64_t cycle)
{
    struct node *n = arg;

    (void)ty;
    (void)cycle;
    return write_count(n->cycles_path, ++n->cycles) < 0 ? -1 : 0;
}

static int
run_steady(struct ty *ty)
{
    char dir[4096], starts[4200];
    struct node n;
    struct ty_load o = {.name = "put"};
    struct ty_load_result r;
    int64_t replay_ns;

    if (ty_param_float(ty, "rate", &o.rate) < 0 ||
        ty_param_duration(ty, "replay_per_cycle", &replay_ns) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    (void)ty_stopping(ty); /* a SIGTERM from here on ends the case */
    snprintf(dir, sizeof(dir), "%s/state", ty_outputs_path(ty));
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return ty_fail(ty, "%s: %s", dir, strerror(errno));
    snprintf(starts, sizeof(starts), "%s/starts", dir);
    snprintf(n.cycles_path, sizeof(n.cycles_path), "%s/cycles", dir);
    if (write_count(starts, read_count(starts) + 1) < 0)
        return ty_fail(ty, "%s: %s", starts, strerror(errno));
    n.cycles = read_count(n.cycles_path);
    pause_ns(ty, n.cycles * replay_ns);
    ty_ready(ty);
    ty_message(ty, "replayed %lld cycles", (long long)n.cycles);
    if (ty_load_run(ty, &o, put, &n, &r) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    ty_message(ty, "put: %lld cycles, %lld in all", (long long)r.cycles,
               (long long)n.cycles);
    return 0;
}

static int
run_rounds(struct ty *ty)
{
    int64_t pause;
    char state[32];

    if (ty_param_duration(ty, "round_pause", &pause) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    (void)ty_stopping(ty);
    ty_ready(ty);
    for (int k = 1; k < 100000; k++) {
        pause_ns(ty, pause);
        if (ty_stopping(ty))
            return 0;
        snprintf(state, sizeof(state), "end-%d", k);
        if (ty_signal_and_wait(ty, state, ty_instance_count(ty), 60000) < 0)
            return ty_stopping(ty) ? 0 : ty_fail(ty, "%s", ty_errmsg(ty));
    }
    return 0;
}

/* Wait at a barrier no one signals, until asked to end. */
static int
run_hang(struct ty *ty)
{
    (void)ty_stopping(ty);
    ty_ready(ty);
    if (ty_barrier(ty, "never", 1, 600000) < 0 && ty_stopping(ty))
        return 0;
    return ty_fail(ty, "the barrier \"never\" did not end with a stop: %s",
                   ty_errmsg(ty));
}

static const struct ty_case cases[] = {
    {"steady", run_steady},
    {"rounds", run_rounds},
    {"hang", run_hang},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}
