/*
 * pngstat.c — a tiny PNG reader for the browser test: enough of PNG to
 * read what headless Chromium writes (8-bit RGB or RGBA, not interlaced),
 * so a screenshot can be checked for more than "a file exists".
 *
 *   pngstat FILE [RRGGBB...]
 *
 * prints one line: width, height, the number of distinct colours, the
 * share of pixels (in percent) that differ from the most common colour
 * (the page's background), and for each RRGGBB given the number of pixels
 * close to that colour (each channel within 24). Exit status 1 with a
 * message on stderr when the file is not such a PNG.
 *
 * Built by tests/browser/run with `cc pngstat.c -lz`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_TARGETS 16

struct png {
    uint32_t w, h;
    int bpp; /* bytes per pixel: 3 or 4 */
    uint8_t *idat;
    size_t nidat;
    uint8_t *px; /* unfiltered rows, no filter bytes */
};

static int
fail(const char *why)
{
    fprintf(stderr, "pngstat: %s\n", why);
    return -1;
}

static uint32_t
be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static int
ihdr(struct png *g, const uint8_t *d, uint32_t len)
{
    if (len != 13)
        return fail("bad IHDR");
    g->w = be32(d);
    g->h = be32(d + 4);
    if (d[8] != 8 || (d[9] != 2 && d[9] != 6) || d[12] != 0)
        return fail("only 8-bit RGB or RGBA, not interlaced");
    if (g->w == 0 || g->h == 0 || g->w > 20000 || g->h > 40000)
        return fail("unlikely size");
    g->bpp = d[9] == 2 ? 3 : 4;
    return 0;
}

static int
chunks(struct png *g, const uint8_t *b, size_t n)
{
    static const uint8_t sig[8] = {137, 'P', 'N', 'G', 13, 10, 26, 10};
    size_t off = 8;

    if (n < 8 || memcmp(b, sig, 8) != 0)
        return fail("not a PNG");
    while (off + 12 <= n) {
        uint32_t len = be32(b + off);
        const uint8_t *type = b + off + 4, *data = b + off + 8;

        if (len > n - off - 12)
            return fail("chunk past the end");
        if (memcmp(type, "IHDR", 4) == 0 && ihdr(g, data, len) < 0)
            return -1;
        if (memcmp(type, "IDAT", 4) == 0) {
            g->idat = realloc(g->idat, g->nidat + len);
            memcpy(g->idat + g->nidat, data, len);
            g->nidat += len;
        }
        if (memcmp(type, "IEND", 4) == 0)
            return g->bpp && g->nidat ? 0 : fail("no IHDR or IDAT");
        off += 12 + len;
    }
    return fail("no IEND");
}

static int
paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undo the per-row filters of raw (rows of 1 + w*bpp bytes) into g->px. */
static int
unfilter(struct png *g, const uint8_t *raw)
{
    size_t stride = (size_t)g->w * (size_t)g->bpp;

    g->px = calloc(stride, g->h);
    for (uint32_t y = 0; y < g->h; y++) {
        const uint8_t *in = raw + y * (stride + 1) + 1;
        uint8_t *out = g->px + y * stride;
        const uint8_t *up = y ? out - stride : NULL;
        int f = in[-1];

        for (size_t x = 0; x < stride; x++) {
            int a = x >= (size_t)g->bpp ? out[x - g->bpp] : 0;
            int b = up ? up[x] : 0;
            int c = up && x >= (size_t)g->bpp ? up[x - g->bpp] : 0;
            int pred[5] = {0, a, b, (a + b) / 2, paeth(a, b, c)};

            if (f > 4)
                return fail("bad filter type");
            out[x] = (uint8_t)(in[x] + pred[f]);
        }
    }
    return 0;
}

static int
decode(struct png *g)
{
    uLongf want = (uLongf)g->h * ((uLongf)g->w * (uLongf)g->bpp + 1);
    uint8_t *raw = malloc(want);
    int r;

    if (raw == NULL)
        return fail("out of memory");
    r = uncompress(raw, &want, g->idat, g->nidat);
    if (r != Z_OK ||
        want != (uLongf)g->h * ((uLongf)g->w * (uLongf)g->bpp + 1)) {
        free(raw);
        return fail("IDAT does not inflate to the image");
    }
    r = unfilter(g, raw);
    free(raw);
    return r;
}

static uint32_t
rgb(const struct png *g, size_t i)
{
    const uint8_t *p = g->px + i * (size_t)g->bpp;

    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static int
near(uint32_t a, uint32_t b)
{
    for (int s = 0; s < 24; s += 8)
        if (abs((int)(a >> s & 255) - (int)(b >> s & 255)) > 24)
            return 0;
    return 1;
}

static void
stats(const struct png *g, int ntargets, const uint32_t *targets)
{
    size_t n = (size_t)g->w * g->h, colours = 0, bg_count = 0, other = 0;
    uint8_t *seen = calloc(1 << 21, 1);
    uint32_t *count = calloc(1 << 12, sizeof(*count)), bg = 0;
    size_t hits[MAX_TARGETS] = {0};

    /* The background: the most common colour among a coarse histogram's
     * top bucket, then exactly. */
    for (size_t i = 0; i < n; i++) {
        uint32_t c = rgb(g, i);

        if (!(seen[c >> 3] & 1 << (c & 7))) {
            seen[c >> 3] |= (uint8_t)(1 << (c & 7));
            colours++;
        }
        count[(c >> 12 & 0xf00) | (c >> 8 & 0xf0) | (c >> 4 & 0xf)]++;
        for (int t = 0; t < ntargets; t++)
            hits[t] += (size_t)near(c, targets[t]);
    }
    for (uint32_t k = 0; k < 1 << 12; k++)
        if (count[k] > bg_count) {
            bg_count = count[k];
            bg = (k & 0xf00) << 12 | (k & 0xf0) << 8 | (k & 0xf) << 4;
        }
    for (size_t i = 0; i < n; i++)
        other += !near(rgb(g, i), bg);
    printf("%u %u %zu %.1f", g->w, g->h, colours,
           100.0 * (double)other / (double)n);
    for (int t = 0; t < ntargets; t++)
        printf(" %zu", hits[t]);
    printf("\n");
    free(seen);
    free(count);
}

int
main(int argc, char **argv)
{
    struct png g = {0};
    uint32_t targets[MAX_TARGETS];
    int nt = 0;
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    uint8_t *buf;
    long len;

    if (f == NULL)
        return fail("usage: pngstat FILE [RRGGBB...]"), 1;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    buf = malloc((size_t)len + 1);
    if (buf == NULL || fread(buf, 1, (size_t)len, f) != (size_t)len)
        return fail("cannot read the file"), 1;
    fclose(f);
    for (int i = 2; i < argc && nt < MAX_TARGETS; i++)
        targets[nt++] = (uint32_t)strtoul(argv[i], NULL, 16);
    if (chunks(&g, buf, (size_t)len) < 0 || decode(&g) < 0)
        return 1;
    stats(&g, nt, targets);
    free(buf);
    free(g.idat);
    free(g.px);
    return 0;
}
