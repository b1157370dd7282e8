/*
 * server_prog.c — what servers do to the LD_PRELOAD heap profiler
 * (tests/e2e/heap-servers.sh), without being one:
 *
 *   server_prog alloc  blocks through server_grab, each measured with
 *                      malloc_usable_size (built with -ljemalloc, the
 *                      allocator's own call on the profiler's blocks);
 *   server_prog title  first writes its process title over its argv and
 *                      environment block, as redis and nginx do, and
 *                      changes folder to /, then allocates.
 *
 * Both keep 8 MiB in 64 KiB blocks, free every other one, and exit
 * normally; they print "ok <usable bytes>".
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCKS 128
#define BLOCK (64 * 1024)

extern char **environ;

__attribute__((noinline)) static void *
server_grab(size_t n)
{
    char *p = malloc(n);

    if (p != NULL)
        memset(p, 0x5a, n);
    return p;
}

/* The argv and environment strings lie end to end: overwrite them all. */
static void
set_title(int argc, char **argv)
{
    char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);

    for (char **e = environ; *e != NULL; e++)
        if (*e == end + 1)
            end = *e + strlen(*e);
    memset(start, 0, (size_t)(end - start));
    snprintf(start, (size_t)(end - start), "server: accepting connections");
}

int
main(int argc, char **argv)
{
    static void *keep[BLOCKS];
    size_t usable = 0;

    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "title") == 0) {
        set_title(argc, argv);
        if (chdir("/") < 0)
            return 3;
    }
    for (int i = 0; i < BLOCKS; i++) {
        if ((keep[i] = server_grab(BLOCK)) == NULL)
            return 4;
        usable += malloc_usable_size(keep[i]);
    }
    for (int i = 0; i < BLOCKS; i += 2)
        free(keep[i]);
    printf("ok %zu\n", usable);
    return 0;
}
