/*
 * th.c — the unit test harness (see th.h): one forked child per case, a
 * deadline per case, TAP lines out and a closing tally.
 */
#include "th.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TH_SKIP_STATUS 77

static int failures;
static char tmpdir[256];
static bool inline_mode;
static jmp_buf skip_jump;

void
th_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    failures++;
    fprintf(stdout, "#   %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

int
th_failures(void)
{
    return failures;
}

void
th_skip(const char *why)
{
    fprintf(stdout, "#SKIP %s\n", why);
    fflush(stdout);
    if (inline_mode)
        longjmp(skip_jump, 1);
    exit(TH_SKIP_STATUS);
}

const char *
th_tmpdir(void)
{
    if (tmpdir[0] == '\0') {
        const char *base = getenv("TMPDIR");

        snprintf(tmpdir, sizeof(tmpdir), "%s/th.XXXXXX", base ? base : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return tmpdir;
}

static void
remove_tmpdir(void)
{
    char cmd[300];

    if (tmpdir[0] == '\0')
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stdout, "# could not remove %s\n", tmpdir);
    tmpdir[0] = '\0';
}

static bool
selected(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return true;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return true;
    return false;
}

/* Run one case in this process; returns 0 pass, 1 fail, 2 skip (only
 * when running without fork: a forked child exits with TH_SKIP_STATUS). */
static int
run_inline(const struct th_case *c)
{
    failures = 0;
    if (inline_mode && setjmp(skip_jump) != 0) {
        remove_tmpdir();
        return 2;
    }
    c->fn();
    remove_tmpdir();
    return failures ? 1 : 0;
}

/* Run one case in a child; returns 0 pass, 1 fail, 2 skip. */
static int
run_forked(const struct th_case *c, int timeout)
{
    int status;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        alarm((unsigned)timeout);
        exit(run_inline(c));
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL);
    if (WIFEXITED(status) && WEXITSTATUS(status) == TH_SKIP_STATUS)
        return 2;
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0 ? 0 : 1;
    fprintf(stdout, "#   died of signal %d%s\n", WTERMSIG(status),
            WTERMSIG(status) == SIGALRM ? " (deadline)" : "");
    return 1;
}

int
th_main(int argc, char **argv, const struct th_case *cases)
{
    const char *t = getenv("TH_TIMEOUT");
    bool nofork = getenv("TH_NOFORK") != NULL;
    int timeout = t ? atoi(t) : 60;
    int n = 0, passed = 0, failed = 0, skipped = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (const struct th_case *c = cases; c->name != NULL; c++) {
        int r;

        if (!selected(argc, argv, c->name))
            continue;
        n++;
        inline_mode = nofork;
        r = nofork ? run_inline(c) : run_forked(c, timeout);
        if (r == 0) {
            passed++;
            printf("ok %d - %s\n", n, c->name);
        } else if (r == 2) {
            skipped++;
            printf("ok %d - %s # SKIP\n", n, c->name);
        } else {
            failed++;
            printf("not ok %d - %s\n", n, c->name);
        }
    }
    if (skipped)
        printf("# %d skipped\n", skipped);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
