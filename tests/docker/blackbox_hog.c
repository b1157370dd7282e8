/*
 * blackbox_hog.c — a program that knows nothing of testyard, for
 * tests/docker/blackbox.sh: it prints its arguments (--step SIZE, --tag X,
 * SIZE in bytes or with a K or M suffix) and HOG_TAG from its environment,
 * then allocates SIZE at a time through hog_alloc, touching every byte and
 * keeping every block, 50 steps a second, until it is killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t
parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v > 0 ? (size_t)v : 1u << 20;
}

/* Not inlined, so that the heap profile's top site names it. */
__attribute__((noinline)) void *hog_alloc(size_t n);

void *
hog_alloc(size_t n)
{
    char *p = malloc(n);

    if (p != NULL)
        memset(p, 0x5a, n);
    return p;
}

int
main(int argc, char **argv)
{
    const char *tag = "(none)", *env = getenv("HOG_TAG");
    size_t step = 1u << 20;
    void **kept = NULL;
    size_t n = 0;

    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--step") == 0)
            step = parse_size(argv[++i]);
        else if (strcmp(argv[i], "--tag") == 0)
            tag = argv[++i];
    }
    printf("hog: step=%zu tag=%s HOG_TAG=%s\n", step, tag,
           env ? env : "(unset)");
    fflush(stdout);
    for (;;) {
        void **more = realloc(kept, (n + 1) * sizeof(*kept));

        if (more == NULL || (more[n] = hog_alloc(step)) == NULL)
            return 3;
        kept = more;
        n++;
        usleep(20 * 1000);
    }
}
