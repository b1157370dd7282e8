/*
 * preoom_plan.c — an instance that fills its memory until the OOM killer
 * takes it, for the pre-OOM suites (tests/e2e/exec-preoom.sh on
 * local:exec, tests/docker/preoom.sh on local:docker; its manifest is
 * preoom_manifest.yaml). It stands for a program profiled with
 * LD_PRELOAD=libtestyard-heap.so without being one: it never says hello
 * to the sync service, and what it is depends on its group:
 *
 *   asked      LD_PRELOAD names libtestyard-heap (it starts itself again
 *              with it set; the library need not exist) and it catches
 *              SIGUSR2 with SA_SIGINFO: each delivery appends
 *              "<unix ms> <si_value> <si_code>" to pre-oom-signal in its
 *              outputs folder
 *   nohandler  the same environment, no handler: a SIGUSR2 would kill it
 *   noenv      the handler, without LD_PRELOAD
 *
 * It touches 1 MiB every 20 ms, up to 1 GiB (then it exits 0).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* TY_WIRE_PREOOM_SIGVAL (sdk/common/ty_wire.h, which plans do not see). */
#define PREOOM_SIGVAL 0x54594f4d

static char note_path[4096];
/* Where the memory stays referenced, so no allocation is optimized out. */
static void *volatile kept[1024];

/* Decimal digits of v (which may be negative) at p; returns the end. */
static char *
put_num(char *p, long long v)
{
    char d[24];
    int n = 0;

    if (v < 0) {
        *p++ = '-';
        v = -v;
    }
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    while (n > 0)
        *p++ = d[--n];
    return p;
}

/* Async-signal-safe: clock_gettime, open, write, close. */
static void
on_usr2(int sig, siginfo_t *si, void *ctx)
{
    struct timespec ts;
    char line[96], *p = line;
    int fd;

    (void)sig;
    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    p = put_num(p, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    *p++ = ' ';
    p = put_num(p, si->si_value.sival_int);
    *p++ = ' ';
    p = put_num(p, si->si_code);
    *p++ = '\n';
    fd = open(note_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (write(fd, line, (size_t)(p - line)) < 0)
            _exit(3);
        close(fd);
    }
}

int
main(int argc, char **argv)
{
    const char *group = getenv("TEST_GROUP_ID");
    const char *out = getenv("TEST_OUTPUTS_PATH");
    struct sigaction sa;

    (void)argc;
    if (group == NULL || out == NULL)
        return 2;
    if (strcmp(group, "noenv") != 0 && getenv("LD_PRELOAD") == NULL) {
        setenv("LD_PRELOAD", "/nonexistent/libtestyard-heap.so", 1);
        execv("/proc/self/exe", argv);
        return 4;
    }
    snprintf(note_path, sizeof(note_path), "%s/pre-oom-signal", out);
    if (strcmp(group, "nohandler") != 0) {
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_usr2;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(SIGUSR2, &sa, NULL);
    }
    for (int mib = 0; mib < 1024; mib++) {
        char *p = malloc(1 << 20);

        if (p == NULL)
            return 5;
        memset(p, mib + 1, 1 << 20);
        kept[mib] = p;
        usleep(20000);
    }
    return 0;
}
