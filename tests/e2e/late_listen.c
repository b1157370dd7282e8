/*
 * late_listen.c — a black-box server that is slow to be ready, for the
 * readiness probes of tests/helpers/stages.sh: late_listen PORT DELAY_MS
 * sleeps DELAY_MS, then listens on PORT (every address) and accepts
 * connections until SIGTERM, when it exits 0. Each start appends a line
 * to starts.log in TEST_OUTPUTS_PATH (or the working folder).
 */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int
main(int argc, char **argv)
{
    struct sigaction sa;
    struct sockaddr_in a = {0};
    const char *out = getenv("TEST_OUTPUTS_PATH");
    char path[4096];
    long delay;
    int one = 1, fd;
    FILE *f;

    if (argc != 3)
        return 2;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    snprintf(path, sizeof(path), "%s/starts.log", out ? out : ".");
    if ((f = fopen(path, "a")) != NULL) {
        fprintf(f, "start\n");
        fclose(f);
    }
    delay = atol(argv[2]);
    struct timespec ts = {delay / 1000, (delay % 1000) * 1000000};
    nanosleep(&ts, NULL);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)atoi(argv[1]));
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(fd, 16) < 0) {
        perror("late_listen");
        return 1;
    }
    printf("listening on %s\n", argv[1]);
    fflush(stdout);
    while (!stop) {
        int c = accept(fd, NULL, NULL);

        if (c >= 0)
            close(c);
    }
    return 0;
}
