/*
 * blackbox_hog.c — a program that knows nothing of testyard (no testyard
 * header, no SDK), run by tests/e2e/blackbox.sh as a group's run.command.
 *
 *   blackbox_hog [--step SIZE] [--pause-ms N] [--steps N] [--tag TAG]
 *
 * It prints its arguments, its HOG_TAG and HOME environment variables and
 * its working directory on one line of stdout ("hog: tag=X env=Y
 * home=/... step=1048576 cwd=/... argc=N"), its LD_PRELOAD on a second
 * ("hog: preload=..."), then
 * allocates SIZE bytes (1M; K and M suffixes) every N ms (10) through
 * hog_alloc, touching every page, until it is killed — or, with --steps,
 * that many times, and then exits 0.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile *blocks;

__attribute__((noinline)) void *hog_alloc(size_t size);

void *
hog_alloc(size_t size)
{
    char *p = malloc(size);

    if (p != NULL)
        memset(p, 0x5a, size);
    return p;
}

static size_t
parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v > 0 ? (size_t)v : 1;
}

int
main(int argc, char **argv)
{
    size_t step = 1 << 20;
    long pause_ms = 10, steps = -1;
    const char *tag = "-", *env = getenv("HOG_TAG"), *home = getenv("HOME");
    char cwd[PATH_MAX] = "?";

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--step") == 0)
            step = parse_size(argv[i + 1]);
        else if (strcmp(argv[i], "--pause-ms") == 0)
            pause_ms = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--steps") == 0)
            steps = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--tag") == 0)
            tag = argv[i + 1];
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        strcpy(cwd, "?");
    printf("hog: tag=%s env=%s home=%s step=%zu cwd=%s argc=%d\n", tag,
           env ? env : "-", home ? home : "-", step, cwd, argc);
    printf("hog: preload=%s\n",
           getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "-");
    fflush(stdout);
    blocks = calloc(1 << 16, sizeof(*blocks));
    for (long n = 0; steps < 0 || n < steps; n++) {
        struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000};

        if (blocks != NULL && n < (1 << 16))
            blocks[n] = hog_alloc(step);
        nanosleep(&ts, NULL);
    }
    return 0;
}
