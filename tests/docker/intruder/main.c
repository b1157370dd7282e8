/*
 * intruder — an instance that tries another run's sync service, for
 * tests/docker/sync-auth.sh. The intrude case runs itself again (case
 * forge) with the other run's endpoint, run id and instance 0's place in
 * the environment but its own run's secret; forge reports a failure,
 * which would fail the other run if its service let it in. intrude
 * succeeds only when the other run's service answered `denied`.
 */
#include <testyard.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int
run_forge(struct ty *ty)
{
    return ty_fail(ty, "forged by another run");
}

static void
probe(const char *url, const char *run, const char *group, const char *out)
{
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd < 0)
        _exit(3);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("TESTYARD_SYNC_URL", url, 1);
    setenv("TEST_RUN", run, 1);
    setenv("TEST_GROUP_ID", group, 1);
    setenv("TEST_CASE", "forge", 1);
    setenv("TESTYARD_GLOBAL_INDEX", "0", 1);
    setenv("TESTYARD_GROUP_INDEX", "0", 1);
    unsetenv("TESTYARD_SYNC_BOARD");
    unsetenv("SYNC_SERVICE_HOST");
    alarm(20);
    execl("/proc/self/exe", "intruder", (char *)NULL);
    _exit(4);
}

static int
run_intrude(struct ty *ty)
{
    const char *url, *run, *group;
    char out[512], buf[4096] = "";
    ssize_t n = 0;
    int fd, st = 0;
    pid_t pid;

    if (ty_param_string(ty, "target_url", &url) < 0 ||
        ty_param_string(ty, "target_run", &run) < 0 ||
        ty_param_string(ty, "target_group", &group) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    snprintf(out, sizeof(out), "%s/probe.out", ty_temp_path(ty));
    fflush(NULL);
    pid = fork();
    if (pid == 0)
        probe(url, run, group, out);
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return ty_fail(ty, "cannot run the probe");
    fd = open(out, O_RDONLY);
    if (fd >= 0) {
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
    }
    buf[n > 0 ? n : 0] = '\0';
    ty_message(ty, "probe of %s ended with status %d: %s", url, st, buf);
    if (strstr(buf, "denied") == NULL)
        return ty_fail(ty, "the other run's service did not deny us");
    return 0;
}

static const struct ty_case cases[] = {
    {"intrude", run_intrude},
    {"forge", run_forge},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}
