/*
 * hostile_plan.c — a test plan that behaves as a hostile or careless
 * instance would, for tests/docker/run-files.sh (and the local:exec half
 * of its log checks): the script copies it into a plan folder with a
 * manifest of its own.
 *
 *   plant   plants links in its output folder pointing at host paths
 *           (the victim parameter, a folder on the host), first thing:
 *           run.out and run.err, memory.csv.partial and memory.csv, and a
 *           folder "sub" for an upload and an append through it; uploads
 *           and appends to the runner's own names. Prints what each call
 * answered
 *           ("upload sub/up.bin: -5 ...") and succeeds when every one was
 *           refused.
 *   flood   writes flood bytes to stdout — "FIRST LINE", lines of x
 *           (line bytes each, newline included), then "LAST LINE" — and a
 *           little to stderr, then succeeds.
 *   quota   uploads big.bin of upload bytes; succeeds when the
 *           coordinator refused it for the output quota (-ENOSPC).
 *
 * Uploads go through the SDK's own sender (ty__output_file, linked from
 * libtestyard.a), the one heap snapshots use, so any name can be tried.
 */
#include <testyard.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ty__output_file(struct ty *ty, const char *name, const void *data,
                    size_t len);
int ty__output_append(struct ty *ty, const char *name, const char *data,
                      size_t len);

static void
plant(const char *victim, const char *what, const char *name)
{
    char target[4096], path[4096];

    snprintf(target, sizeof(target), "%s/%s", victim, what);
    snprintf(path, sizeof(path), "%s/%s", getenv("TEST_OUTPUTS_PATH"), name);
    if (symlink(target, path) < 0)
        printf("plant %s: %s\n", name, strerror(errno));
}

/* 1 when the call was refused (as it must be), printing its answer. */
static int
refused(struct ty *ty, const char *what, int rc)
{
    printf("%s: %d %s\n", what, rc, rc < 0 ? ty_errmsg(ty) : "accepted");
    fflush(stdout);
    return rc < 0;
}

static int
run_plant(struct ty *ty)
{
    int ok = 1;

    ok &= refused(ty, "upload sub/up.bin",
                  ty__output_file(ty, "sub/up.bin", "payload\n", 8));
    ok &= refused(ty, "append sub/app.out",
                  ty__output_append(ty, "sub/app.out", "line\n", 5));
    /* Not run.out or run.err: on a runner that took it, the upload would
     * replace the planted link and hide that attack. */
    ok &= refused(ty, "upload memory.csv",
                  ty__output_file(ty, "memory.csv", "forged\n", 7));
    ok &= refused(ty, "append memory.csv.partial",
                  ty__output_append(ty, "memory.csv.partial", "1,2\n", 4));
    for (int i = 0; i < 100; i++)
        printf("to stdout %d\n", i);
    fprintf(stderr, "to stderr\n");
    fflush(stdout);
    usleep(600 * 1000); /* memory samples go on meanwhile */
    return ok ? 0 : ty_fail(ty, "a write through a planted link was taken");
}

static void
write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static int
run_flood(struct ty *ty)
{
    static char chunk[65536];
    uint64_t bytes = 0, done = 0;
    int64_t line = 64;

    if (ty_param_size(ty, "flood", &bytes) < 0 ||
        ty_param_int(ty, "line", &line) < 0 || line < 1 ||
        line > (int64_t)sizeof(chunk))
        return ty_fail(ty, "flood: %s", ty_errmsg(ty));
    for (size_t i = 0; i < sizeof(chunk); i++)
        chunk[i] = (i + 1) % (size_t)line == 0 ? '\n' : 'x';
    write_all(1, "FIRST LINE\n", 11);
    while (done < bytes) {
        size_t n = bytes - done < sizeof(chunk) ? (size_t)(bytes - done)
                                                : sizeof(chunk);

        write_all(1, chunk, n);
        done += n;
    }
    write_all(1, "\nLAST LINE\n", 11);
    write_all(2, "stderr FIRST\nstderr LAST\n", 25);
    return 0;
}

static int
run_quota(struct ty *ty)
{
    uint64_t size = 0;
    char *data;
    int rc;

    if (ty_param_size(ty, "upload", &size) < 0)
        return ty_fail(ty, "no upload: %s", ty_errmsg(ty));
    data = calloc(1, (size_t)size);
    if (data == NULL)
        return ty_fail(ty, "out of memory");
    rc = ty__output_file(ty, "big.bin", data, (size_t)size);
    free(data);
    fprintf(stderr, "upload big.bin: %d %s\n", rc, rc < 0 ? ty_errmsg(ty) : "");
    if (rc != -ENOSPC)
        return ty_fail(ty, "the upload over the quota got %d", rc);
    return 0;
}

static const struct ty_case cases[] = {
    {"plant", run_plant},
    {"flood", run_flood},
    {"quota", run_quota},
    {NULL, NULL},
};

/* The victim parameter out of TEST_INSTANCE_PARAMS ("k=v|k=v"), in buf. */
static const char *
victim_param(char *buf, size_t size)
{
    const char *p = getenv("TEST_INSTANCE_PARAMS");
    const char *v = p ? strstr(p, "victim=") : NULL;
    size_t n;

    if (v == NULL)
        return NULL;
    v += 7;
    n = strcspn(v, "|");
    snprintf(buf, size, "%.*s", (int)n, v);
    return buf;
}

/* The links are planted before the SDK connects, so they are in place
 * before the coordinator hears of the start. */
int
main(int argc, char **argv)
{
    char buf[2048];
    const char *victim = victim_param(buf, sizeof(buf));
    const char *tc = getenv("TEST_CASE");

    if (victim != NULL && tc != NULL && strcmp(tc, "plant") == 0) {
        plant(victim, "out", "run.out");
        plant(victim, "err-new", "run.err");
        plant(victim, "csv", "memory.csv.partial");
        plant(victim, "csv-final", "memory.csv");
        plant(victim, "dir", "sub");
    }
    return ty_main(argc, argv, cases);
}
