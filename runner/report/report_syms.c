/*
 * report_syms.c — frames the heap profiles could not name.
 *
 * A program from a distribution package is stripped: its frames reach the
 * profile as an address in a mapping and no function (the profiler looked
 * for its debug file by build id and found none). Such frames read
 * "memcached+0x1a2b" in the sites tables; this module counts them per
 * group, over the profile each instance's top sites come from, and, when
 * a site the report shows is such a frame, says once how to get names:
 * the distribution's debug symbols, a folder of them for
 * TESTYARD_HEAP_DEBUG_DIRS, or pprof against the binary later (the
 * profile keeps each mapping's file, build id and addresses for it). An
 * unnamed frame no table shows (libc's start-up code without libc's debug
 * file, in nearly every stack) is counted in summary.json and not said.
 */
#include "report/report_int.h"

#include "report/pprof_int.h"
#include "ty_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Add n frames of path to g's objects, kept most first; beyond
 * REPORT_SYM_OBJECTS the object with the fewest is left out. */
static void
add_object(struct report_symbols *g, const char *path, const char *build_id,
           int64_t n)
{
    struct report_symobj o = {NULL, NULL, n};
    size_t k = g->nobjects;

    /* an object already there is taken out and put back in its place */
    for (size_t i = 0; i < g->nobjects; i++)
        if (strcmp(g->objects[i].path, path) == 0) {
            o = g->objects[i];
            o.frames += n;
            g->nobjects--;
            memmove(&g->objects[i], &g->objects[i + 1],
                    (g->nobjects - i) * sizeof(o));
            k = g->nobjects;
            break;
        }
    while (k > 0 && g->objects[k - 1].frames < o.frames)
        k--;
    if (k == REPORT_SYM_OBJECTS) {
        free(o.path);
        free(o.build_id);
        return;
    }
    if (o.path == NULL) {
        o.path = xstrdup(path);
        o.build_id = xstrdup(build_id);
    }
    if (g->nobjects == REPORT_SYM_OBJECTS) {
        free(g->objects[--g->nobjects].path);
        free(g->objects[g->nobjects].build_id);
    }
    memmove(&g->objects[k + 1], &g->objects[k], (g->nobjects - k) * sizeof(o));
    g->objects[k] = o;
    g->nobjects++;
}

void
report__syms_add(struct report_symbols *g, const struct pprof_profile *p,
                 const char *rel)
{
    struct pprof_symbols s;

    pprof__symbols(p, &s);
    g->nprofiles++;
    g->frames += (int64_t)s.frames;
    g->unsymbolized += (int64_t)s.unsymbolized;
    if (s.unsymbolized > 0 && g->example == NULL)
        g->example = xstrdup(rel);
    for (size_t i = 0; i < s.nobjects; i++)
        add_object(g, s.objects[i].path, s.objects[i].build_id,
                   (int64_t)s.objects[i].frames);
}

void
report__syms_release(struct report_symbols *g)
{
    for (size_t i = 0; i < g->nobjects; i++) {
        free(g->objects[i].path);
        free(g->objects[i].build_id);
    }
    free(g->example);
    memset(g, 0, sizeof(*g));
}

/* "memcached-dbgsym": Debian names a program's debug package after its
 * source package, which is most often the program's own name. */
static void
dbgsym_of(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    snprintf(buf, size, "%.*s-dbgsym", (int)strcspn(base, "."), base);
}

/* "/usr/bin/memcached", "a and b", "a, b and 2 more" */
static void
objects_text(const struct report_symbols *s, struct strbuf *sb)
{
    size_t shown = s->nobjects < 3 ? s->nobjects : 2;

    for (size_t i = 0; i < shown; i++) {
        if (i > 0)
            strbuf_adds(sb, i + 1 == s->nobjects ? " and " : ", ");
        strbuf_adds(sb, s->objects[i].path);
        if (s->nobjects > 1)
            strbuf_addf(sb, " (%" PRId64 ")", s->objects[i].frames);
    }
    if (shown < s->nobjects)
        strbuf_addf(sb, " and %zu more", s->nobjects - shown);
}

/* A name pprof_check.c made up for a frame without one: "obj+0x1a2b" or
 * "0x7f3a12c4" (no C or C++ function is called so). */
static bool
unnamed(const char *f)
{
    const char *x = strstr(f, "0x");

    return x != NULL && (x == f || x[-1] == '+') && x[2] != '\0' &&
           strspn(x + 2, "0123456789abcdef") == strlen(x + 2);
}

static bool
any_unnamed(const struct report_site *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (unnamed(v[i].function))
            return true;
    return false;
}

/* Whether one of the sites the report shows for g is a frame without a
 * name. */
static bool
shows_unnamed(const struct report_group *g)
{
    return any_unnamed(g->sites, g->nsites) ||
           any_unnamed(g->psites, g->npsites) ||
           any_unnamed(g->gsites.v, g->gsites.n);
}

void
report__syms_text(const struct report_group *g, char *buf, size_t size)
{
    const struct report_symbols *s = &g->syms;
    size_t idn = strlen(g->id);
    struct strbuf sb;
    char pkg[128];

    buf[0] = '\0';
    if (s->unsymbolized <= 0 || !shows_unnamed(g))
        return;
    strbuf_init(&sb);
    strbuf_addf(&sb,
                "%" PRId64 " of %" PRId64 " frames in %s'%s profiles "
                "have no symbols: ",
                s->unsymbolized, s->frames, g->id,
                idn > 0 && g->id[idn - 1] == 's' ? "" : "s");
    if (s->nobjects == 0) {
        strbuf_adds(&sb, "they lie outside any file the program mapped "
                         "(generated code, or a file deleted since)");
    } else {
        dbgsym_of(s->objects[0].path, pkg, sizeof(pkg));
        objects_text(s, &sb);
        strbuf_addf(&sb,
                    " %s no symbol table for them (install %s debug "
                    "symbols, e.g. Debian's %s, or point "
                    "TESTYARD_HEAP_DEBUG_DIRS at a folder with .build-id/; "
                    "or symbolize later: pprof %s %s)",
                    s->nobjects == 1 ? "has" : "have",
                    s->nobjects == 1 ? "its" : "their", pkg, s->objects[0].path,
                    s->example ? s->example : "heap-<label>.pb.gz");
    }
    snprintf(buf, size, "%s", sb.buf);
    strbuf_release(&sb);
}

cJSON *
report__syms_json(const struct report_group *g)
{
    const struct report_symbols *s = &g->syms;
    cJSON *o, *arr;

    if (s->nprofiles == 0)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "frames", (double)s->frames);
    cJSON_AddNumberToObject(o, "unsymbolized", (double)s->unsymbolized);
    arr = cJSON_AddArrayToObject(o, "objects");
    for (size_t i = 0; i < s->nobjects; i++) {
        cJSON *x = cJSON_CreateObject();

        cJSON_AddStringToObject(x, "path", s->objects[i].path);
        ty__json_string(x, "build_id",
                        s->objects[i].build_id[0] ? s->objects[i].build_id
                                                  : NULL);
        cJSON_AddNumberToObject(x, "frames", (double)s->objects[i].frames);
        cJSON_AddItemToArray(arr, x);
    }
    ty__json_string(o, "example_profile", s->example);
    return o;
}
