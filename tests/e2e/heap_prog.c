/*
 * heap_prog.c — a program that knows nothing of testyard, profiled by
 * tests/e2e/heap-pprof.sh through LD_PRELOAD=libtestyard-heap.so.
 *
 *   heap_prog            keep 400 blocks of 1 MiB, then exit
 *   heap_prog signal     the same, then raise SIGUSR2 before exiting
 *   heap_prog fork       the same, and a child that allocates and exits
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
