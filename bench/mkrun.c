/*
 * mkrun.c — write a run folder shaped like a big testyard run, for the
 * collect benchmark: <dir>/<group>/<index>/ for `instances` instances in
 * two groups, each holding run.out, run.err, results.out, diagnostics.out
 * and `files` − 4 gzipped heap profiles with their JSON sidecars' worth of
 * bytes, plus result.json and composition.json at the top.
 *
 * Content is generated, deterministic and about as compressible as the
 * real thing: event lines and metrics are text, heap profiles are gzip
 * streams of varint-like bytes over a small repeated vocabulary (what a
 * pprof string table and its samples look like to a compressor).
 *
 *   mkrun DIR [--instances N] [--files F]
 */
#include "lib/bench.h"

#include "base/err.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void
write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        bench_die("%s: %s", path, strerror(errno));
}

/* A profile-like buffer of len bytes, gzipped into path. */
static void
write_profile(const char *path, size_t len)
{
    static const char *const words[] = {
        "malloc",
        "bitswap.(*Engine).ReceiveMessage",
        "alloc_space",
        "ty_heap_sample",
        "inuse_objects",
        "main.run",
        "libp2p.Stream",
        "blockstore.Put",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    };
    unsigned char *buf = bench_xcalloc(1, len);
    gzFile gz;
    size_t i = 0;

    while (i < len) {
        uint64_t r = next_rand();

        if (r % 4 == 0) {
            const char *w = words[(r >> 8) % ARRAY_LEN(words)];
            size_t n = strlen(w);

            if (n > len - i)
                n = len - i;
            memcpy(buf + i, w, n);
            i += n;
        } else {
            for (int k = 0; k < 6 && i < len; k++, r >>= 8)
                buf[i++] = (unsigned char)(r & 0x7f);
        }
    }
    gz = gzopen(path, "wb6");
    if (gz == NULL || gzwrite(gz, buf, (unsigned)len) != (int)len ||
        gzclose(gz) != Z_OK)
        bench_die("%s: cannot write", path);
    free(buf);
}

static void
write_text(const char *path, const char *fmt, int lines, int seed)
{
    struct strbuf sb;

    strbuf_init(&sb);
    for (int i = 0; i < lines; i++)
        strbuf_addf(&sb, fmt, seed, i, (long long)(next_rand() % 1000000));
    write_file(path, sb.buf, sb.len);
    strbuf_release(&sb);
}

static void
make_instance(const char *dir, const char *group, int index, int files)
{
    char *d = xasprintf("%s/%s/%d", dir, group, index);
    char *p;
    struct err err = {0};

    if (mkdir_p(d, &err) < 0)
        bench_die("%s", err.msg);
    p = xasprintf("%s/run.out", d);
    write_text(p,
               "{\"ts\":%d%06d,\"event\":{\"type\":\"message\",\"message\":"
               "\"round done, %lld bytes\"}}\n",
               40, index);
    free(p);
    p = xasprintf("%s/run.err", d);
    write_file(p, "", 0);
    free(p);
    p = xasprintf("%s/results.out", d);
    write_text(p,
               "{\"ts\":%d%06d,\"type\":\"point\",\"name\":\"rtt,round=3\","
               "\"value\":%lld}\n",
               30, index);
    free(p);
    p = xasprintf("%s/diagnostics.out", d);
    write_text(p, "{\"ts\":%d%06d,\"name\":\"rss\",\"value\":%lld}\n", 20,
               index);
    free(p);
    for (int k = 0; k < files - 4; k++) {
        p = xasprintf("%s/heap-round-%d.pb.gz", d, k + 1);
        write_profile(p, 8192 + next_rand() % 16384);
        free(p);
    }
    free(d);
}

int
main(int argc, char **argv)
{
    long instances = 200, files = 20;
    const char *dir = NULL;
    char *p;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--instances") == 0)
            instances = bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--files") == 0)
            files = bench_arg_long(argc, argv, &i);
        else if (dir == NULL && argv[i][0] != '-')
            dir = argv[i];
        else
            bench_die("usage: mkrun DIR [--instances N] [--files F]");
    }
    if (dir == NULL || instances < 1 || files < 5)
        bench_die("usage: mkrun DIR [--instances N] [--files F]");
    for (long i = 0; i < instances; i++)
        make_instance(dir, i % 2 ? "requestors" : "providers", (int)(i / 2),
                      (int)files);
    p = xasprintf("%s/result.json", dir);
    write_file(p, "{\"outcome\":\"success\"}\n", 22);
    free(p);
    p = xasprintf("%s/composition.json", dir);
    write_file(p, "{\"global\":{\"plan\":\"memory-stress\"}}\n", 36);
    free(p);
    return 0;
}
