/*
 * heap_prog.c — a program that knows nothing of testyard, profiled by
 * tests/e2e/heap-pprof.sh through LD_PRELOAD=libtestyard-heap.so.
 *
 *   heap_prog            keep 400 blocks of 1 MiB, then exit
 *   heap_prog signal     the same, then raise SIGUSR2 before exiting
 *   heap_prog fork       the same, and a child that allocates and exits
 *   heap_prog kill       the same, then kill(getpid(), SIGUSR2)
 *   heap_prog preoom     the same, then SIGUSR2 queued with the value the
 *                        coordinator sends for a pre-OOM snapshot
 *   heap_prog queue7     the same, queued with the value 7
 *   heap_prog hold       keep them 1.5 s, free them all, then exit
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* TY_WIRE_PREOOM_SIGVAL (sdk/common/ty_wire.h): written out, as a program
 * that knows nothing of testyard would not include it. */
#define PREOOM_SIGVAL 0x54594f4d

void *volatile prog_blocks[400];

__attribute__((noinline)) void prog_keep_blocks(size_t size);

void
prog_keep_blocks(size_t size)
{
    for (int i = 0; i < 400; i++)
        prog_blocks[i] = malloc(size);
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int status = 0;

    prog_keep_blocks(1 << 20);
    if (strcmp(mode, "signal") == 0)
        raise(SIGUSR2);
    if (strcmp(mode, "kill") == 0)
        kill(getpid(), SIGUSR2);
    if (strcmp(mode, "preoom") == 0 || strcmp(mode, "queue7") == 0)
        sigqueue(getpid(), SIGUSR2,
                 (union sigval){.sival_int = strcmp(mode, "preoom") == 0
                                                 ? PREOOM_SIGVAL
                                                 : 7});
    if (strcmp(mode, "hold") == 0) {
        struct timespec hold = {1, 500000000};

        nanosleep(&hold, NULL);
        for (int i = 0; i < 400; i++)
            free(prog_blocks[i]);
    }
    if (strcmp(mode, "fork") == 0) {
        pid_t pid = fork();

        if (pid == 0) {
            prog_keep_blocks(1 << 16);
            exit(0);
        }
        waitpid(pid, &status, 0);
    }
    return status == 0 ? 0 : 1;
}
