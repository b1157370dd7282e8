/*
 * th_proc.c — processes for tests (see th_proc.h).
 *
 * The allocating child is this same program started again rather than a
 * forked copy, so that under valgrind (which does not follow exec here) it
 * runs natively and allocates what the test asks for.
 */
#include "th_proc.h"

#include "th.h"
#include "th_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1024ull * 1024)

int
th_run(char *const argv[])
{
    pid_t pid = fork();
    int status;

    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        dup2(null, STDOUT_FILENO);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    status = th_wait(pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int
th_wait(pid_t pid)
{
    int status = 0;

    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

char *
th_sh(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    char *out;

    if (p == NULL)
        return strdup("");
    out = th_read_all(p, NULL);
    pclose(p);
    return out;
}

int
th_captured(int (*fn)(int, char **), int argc, char **argv, char **out)
{
    char path[4096];
    int fd, saved, rc;

    snprintf(path, sizeof(path), "%s/stdout", th_tmpdir());
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    rc = fn(argc, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(fd);
    *out = th_read(path, NULL);
    unlink(path);
    return rc;
}

int
th_alloc_main(char **argv)
{
    size_t len = (size_t)strtoull(argv[2], NULL, 10) * MIB;
    long step = strtol(argv[3], NULL, 10);
    long hold = strtol(argv[4], NULL, 10);
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return 2;
    for (size_t off = 0; off < len; off += 4096) {
        p[off] = 1;
        if (off % (8 * MIB) == 0 && step > 0)
            usleep((useconds_t)step * 1000);
    }
    usleep((useconds_t)hold * 1000);
    return 0;
}

const char *
th_self_exe(void)
{
    static char path[4096];
    ssize_t n;

    if (path[0] != '\0')
        return path;
    n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0)
        snprintf(path, sizeof(path), "%s", program_invocation_name);
    else
        path[n] = '\0';
    return path;
}

pid_t
th_spawn_alloc(int (*enter)(const void *arg), const void *arg, const char *mib,
               const char *step_ms, const char *hold_ms)
{
    const char *exe = th_self_exe();
    pid_t pid = fork();

    if (pid == 0) {
        if (enter != NULL && enter(arg) < 0)
            _exit(100);
        execl(exe, program_invocation_short_name, "--alloc", mib, step_ms,
              hold_ms, (char *)NULL);
        _exit(101);
    }
    CHECK(pid > 0);
    return pid;
}
