/*
 * cmd_daemon.c — `testyard daemon`: the scheduling daemon (runner/daemon/,
 * docs/scheduling.md). Without --foreground it detaches (double fork, a
 * session of its own, its messages in DATA/daemon.log) and this command
 * returns once the daemon listens, so a script may submit right after;
 * with --foreground it stays, for systemd.
 */
#include "cmd.h"
#include "daemon/daemon.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define START_WAIT_MS 180000 /* a start waits for runs a killed one left */

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard daemon [options]\n\n"
            "Run the scheduling daemon: a queue of submitted compositions,\n"
            "started when they fit the memory and CPU budget, with an HTTP\n"
            "API on 127.0.0.1 (bearer token in DATA/token).\n\n"
            "options:\n"
            "  --data DIR            the data folder (default: "
            "$TESTYARD_DATA,\n"
            "                        else ~/.local/state/testyard)\n"
            "  --listen 127.0.0.1:PORT  where to listen (PORT 0, the "
            "default:\n"
            "                        a free one; DATA/daemon.json says "
            "which)\n"
            "  --plans DIR           look for plans in DIR first (at "
            "submit)\n"
            "  --memory-budget X     memory the tasks may use together: "
            "12GiB\n"
            "                        or 75%% of MemAvailable (the "
            "default)\n"
            "  --cpu-budget X        CPUs they may use: 2, 1500m (default:\n"
            "                        every online CPU)\n"
            "  --foreground          stay in the foreground (systemd)\n"
            "  -h, --help            this text\n\n"
            "exit status: 0 started (or, in the foreground, stopped by\n"
            "SIGTERM), 1 a daemon already runs for DATA, 64 usage, 70\n"
            "internal error.\n");
}

struct daemon_args {
    struct daemon_opts o;
    const char *data;
    bool foreground;
};

static const struct cmd_usage daemon_usage = {"daemon", NULL, usage};

static int
daemon_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct daemon_args *a = ctx;

    (void)err;
    switch (c) {
    case 'd':
        a->data = arg;
        break;
    case 'l':
        a->o.listen = arg;
        break;
    case 'p':
        a->o.plans_dir = arg;
        break;
    case 'm':
        a->o.memory_budget = arg;
        break;
    case 'c':
        a->o.cpu_budget = arg;
        break;
    default: /* 'f' */
        a->foreground = true;
    }
    return 0;
}

static int
parse_args(int argc, char **argv, struct daemon_args *a, struct err *err)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"listen", required_argument, NULL, 'l'},
        {"plans", required_argument, NULL, 'p'},
        {"memory-budget", required_argument, NULL, 'm'},
        {"cpu-budget", required_argument, NULL, 'c'},
        {"foreground", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&daemon_usage, ":h", longopts,
                                         daemon_opt, 0};
    struct err e = {0};
    char addr[16];
    unsigned port;
    int rc = cmd_parse(&spec, argc, argv, a, err);

    if (rc != 0)
        return rc;
    if (a->o.listen && daemon_parse_listen(a->o.listen, addr, &port, &e) < 0)
        return cmd_usage_err(err, CMD_EVALUE, "--listen: %s", e.msg);
    return 0;
}

/* Wait for the detached daemon's line: "ok URL" or "STATUS MESSAGE". */
static int
wait_ready(int fd, const char *data)
{
    char line[ERR_MSG_MAX + 16] = "";
    struct pollfd p = {.fd = fd, .events = POLLIN};
    size_t len = 0;
    ssize_t n = 1;

    while (len < sizeof(line) - 1 && n > 0 && poll(&p, 1, START_WAIT_MS) > 0)
        if ((n = read(fd, line + len, sizeof(line) - 1 - len)) > 0)
            len += (size_t)n;
    line[len] = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "ok ", 3) == 0) {
        printf("testyard daemon: listening on %s (data %s, log %s/"
               "daemon.log)\n",
               line + 3, data, data);
        return 0;
    }
    if (line[0] == '\0') {
        fprintf(stderr,
                "testyard daemon: the daemon did not start; see %s/"
                "daemon.log\n",
                data);
        return EXIT_SOFTWARE;
    }
    fprintf(stderr, "testyard daemon: %s\n", strchr(line, ' ') + 1);
    return atoi(line) > 0 ? atoi(line) : EXIT_SOFTWARE;
}

/* In the detached grandchild: the log as stdout and stderr, no
 * terminal. */
static void
become_daemon(const char *data)
{
    cleanup_free char *log = path_join(data, "daemon.log");
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

    if (null >= 0)
        dup2(null, 0);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    if (chdir("/") < 0)
        return;
    setvbuf(stderr, NULL, _IOLBF, 0);
}

static int
serve(struct daemon_args *a)
{
    struct err err = {0};

    if (daemon_serve(&a->o, &err) < 0) {
        fprintf(stderr, "testyard daemon: %s\n", err.msg);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    return 0;
}

static int
detach(struct daemon_args *a)
{
    int p[2], st;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
        fprintf(stderr, "testyard daemon: %s\n", strerror(errno));
        return EXIT_OSERR;
    }
    if (pid > 0) {
        close(p[1]);
        waitpid(pid, &st, 0);
        st = wait_ready(p[0], a->o.data_dir);
        close(p[0]);
        return st;
    }
    close(p[0]);
    setsid();
    if (fork() != 0)
        _exit(0);
    become_daemon(a->o.data_dir);
    a->o.ready_fd = p[1];
    _exit(serve(a));
}

int
cmd_daemon(int argc, char **argv)
{
    struct daemon_args a = {.o.ready_fd = -1};
    struct err err = {0};
    cleanup_free char *data = NULL, *plans = NULL;
    int rc = parse_args(argc, argv, &a, &err);

    if (rc != 0)
        return cmd_args_end(&daemon_usage, rc, &err);
    if ((data = daemon_data_dir(a.data, true, &err)) == NULL) {
        fprintf(stderr, "testyard daemon: %s\n", err.msg);
        return EXIT_CANTCREAT;
    }
    a.o.data_dir = data;
    if (a.o.plans_dir != NULL)
        a.o.plans_dir = plans = path_absolute(a.o.plans_dir);
    fflush(stdout);
    return a.foreground ? serve(&a) : detach(&a);
}
