/*
 * procs_prog.c — a program that knows nothing of testyard, run as a
 * group's run.command by tests/e2e/procdisk.sh and tests/docker/procdisk.sh
 * to check processes.csv and disk.csv:
 *
 *   procs_prog [--hold-ms N] [--sparse DIR]...
 *
 * It forks two children and names the three processes (prctl
 * PR_SET_NAME): "pd-parent" touches 20 MiB, "pd-small" 40 MiB and then
 * sleeps, "pd-busy" 60 MiB and then spins on the CPU. In each DIR (made
 * when missing; relative to TEST_OUTPUTS_PATH unless absolute) it writes
 * sparse.img: 1 GiB apparent, 4 MiB written, and a hard link to it,
 * sparse.link. After N ms (3000), and once pd-busy has spent 1.2 s of CPU
 * (at most 60 s more), and 600 ms after that, it kills the children and
 * exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MiB (1024L * 1024)

/* What was touched stays reachable, so no store is optimized away. */
static char *volatile held;

static void
touch(long mib)
{
    char *p = malloc((size_t)(mib * MiB));

    if (p == NULL)
        exit(3);
    memset(p, 0x5a, (size_t)(mib * MiB));
    held = p;
}

static double
cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* busy >= 0: spin, and write a byte there once 1.2 s of CPU are spent. */
static pid_t
child(const char *name, long mib, int busy)
{
    pid_t pid = fork();
    volatile unsigned long spin = 0;

    if (pid != 0)
        return pid;
    prctl(PR_SET_NAME, name);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    touch(mib);
    if (busy < 0)
        for (;;)
            pause();
    for (;;) {
        if (++spin % (1 << 20) == 0 && busy >= 0 && cpu_s() >= 1.2) {
            (void)!write(busy, "x", 1);
            close(busy);
            busy = -1;
        }
    }
}

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000};

    nanosleep(&ts, NULL);
}

static void
sparse(const char *dir)
{
    const char *out = getenv("TEST_OUTPUTS_PATH");
    char path[PATH_MAX], file[PATH_MAX + 16], hard[PATH_MAX + 16];
    static char data[MiB];
    int fd;

    if (dir[0] == '/' || out == NULL)
        snprintf(path, sizeof(path), "%s", dir);
    else
        snprintf(path, sizeof(path), "%s/%s", out, dir);
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        perror(path);
        exit(2);
    }
    snprintf(file, sizeof(file), "%s/sparse.img", path);
    snprintf(hard, sizeof(hard), "%s/sparse.link", path);
    fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    memset(data, 0x33, sizeof(data));
    if (fd < 0 || ftruncate(fd, 1024 * MiB) < 0) {
        perror(file);
        exit(2);
    }
    for (int i = 0; i < 4; i++)
        if (write(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
            exit(2);
    fsync(fd);
    close(fd);
    if (link(file, hard) < 0)
        perror(hard);
    printf("procs: wrote %s\n", file);
}

int
main(int argc, char **argv)
{
    long hold_ms = 3000;
    pid_t small, busy;
    struct pollfd pfd = {.events = POLLIN};
    int spent[2];

    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--hold-ms") == 0)
            hold_ms = atol(argv[i + 1]);
    /* the children first, so they share none of the parent's pages */
    if (pipe(spent) < 0)
        return 2;
    small = child("pd-small", 40, -1);
    busy = child("pd-busy", 60, spent[1]);
    close(spent[1]);
    pfd.fd = spent[0];
    prctl(PR_SET_NAME, "pd-parent");
    touch(20);
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--sparse") == 0)
            sparse(argv[i + 1]);
    printf("procs: parent %d, pd-small %d, pd-busy %d\n", (int)getpid(),
           (int)small, (int)busy);
    fflush(stdout);
    sleep_ms(hold_ms);
    (void)poll(&pfd, 1, 60000);
    sleep_ms(600);
    kill(small, SIGKILL);
    kill(busy, SIGKILL);
    waitpid(small, NULL, 0);
    waitpid(busy, NULL, 0);
    return 0;
}
