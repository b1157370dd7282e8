/*
 * cmd_describe.c — `testyard describe [--plans DIR] PLAN`: what a plan
 * offers, read from its manifest: the test cases with their instance
 * bounds and groups, and the parameters with type, default, unit and
 * description, as aligned tables.
 *
 * PLAN is a plan name, looked for as validate looks for a composition's
 * plan, or a path to a plan folder or to its manifest.yaml.
 */
#include "base/strbuf.h"
#include "cmd.h"
#include "base/err.h"
#include "config/config.h"
#include "ty_units.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 5

/* A table printed with columns as wide as their widest cell. */
struct table {
    char *(*rows)[MAX_COLS];
    size_t nrows;
    size_t cap;
    size_t ncols;
};

static void
table_add(struct table *t, char *cells[MAX_COLS])
{
    xgrow(&t->rows, &t->cap, t->nrows + 1, sizeof(*t->rows));
    memcpy(t->rows[t->nrows++], cells, sizeof(*t->rows));
}

static void
table_print(struct table *t)
{
    size_t width[MAX_COLS] = {0};

    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++)
            if (strlen(t->rows[r][c]) > width[c])
                width[c] = strlen(t->rows[r][c]);
    for (size_t r = 0; r < t->nrows; r++) {
        struct strbuf line;

        strbuf_init(&line);
        strbuf_adds(&line, " ");
        for (size_t c = 0; c < t->ncols; c++)
            strbuf_addf(&line, " %-*s", (int)width[c] + 1, t->rows[r][c]);
        while (line.len > 0 && line.buf[line.len - 1] == ' ')
            line.buf[--line.len] = '\0';
        printf("%s\n", line.buf);
        strbuf_release(&line);
        for (size_t c = 0; c < t->ncols; c++)
            free(t->rows[r][c]);
    }
    free(t->rows);
}

static char *
param_type(const struct param *p)
{
    char name[64];
    struct strbuf sb;

    params_type_name(p, name, sizeof(name));
    strbuf_init(&sb);
    strbuf_adds(&sb, name);
    for (size_t i = 0; i < p->nvalues; i++)
        strbuf_addf(&sb, "%s%s", i ? "|" : ": ", p->values[i]);
    return strbuf_detach(&sb);
}

/* "64MB (SI)", "5", "[\"0ms\"]", "(required)". */
static char *
param_default(const struct param *p)
{
    char *text;

    if (p->def == NULL)
        return xstrdup("(required)");
    if (cJSON_IsString(p->def) && p->type == PARAM_SIZE)
        return xasprintf("%s (%s)", p->def->valuestring,
                         ty__size_system(p->def->valuestring));
    if (cJSON_IsString(p->def))
        return p->def->valuestring[0] ? xstrdup(p->def->valuestring)
                                      : xstrdup("\"\"");
    text = cJSON_PrintUnformatted(p->def);
    return text ? text : xstrdup("?");
}

static void
free_row(char *cells[MAX_COLS])
{
    for (size_t c = 0; c < MAX_COLS; c++)
        free(cells[c]);
}

static void
print_params(const char *title, const struct params *ps)
{
    struct table t = {.ncols = 5};
    char *head[MAX_COLS] = {xstrdup("NAME"), xstrdup("TYPE"),
                            xstrdup("DEFAULT"), xstrdup("UNIT"),
                            xstrdup("DESCRIPTION")};

    if (ps->n == 0) {
        free_row(head);
        return;
    }
    printf("\n%s:\n", title);
    table_add(&t, head);
    for (size_t i = 0; i < ps->n; i++) {
        const struct param *p = &ps->v[i];
        char *row[MAX_COLS] = {xstrdup(p->name), param_type(p),
                               param_default(p),
                               xstrdup(p->unit ? p->unit : ""),
                               xstrdup(p->description ? p->description : "")};

        table_add(&t, row);
    }
    table_print(&t);
}

static char *
joined(char **v, size_t n, const char *none)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, n ? "" : none);
    for (size_t i = 0; i < n; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", v[i]);
    return strbuf_detach(&sb);
}

static void
print_cases(const struct manifest *m)
{
    struct table t = {.ncols = 4};
    char *head[MAX_COLS] = {xstrdup("CASE"), xstrdup("INSTANCES"),
                            xstrdup("GROUPS"), xstrdup("DESCRIPTION")};

    printf("\ncases:\n");
    table_add(&t, head);
    for (size_t i = 0; i < m->ncases; i++) {
        const struct manifest_case *c = &m->cases[i];
        char *row[MAX_COLS] = {xstrdup(c->name),
                               xasprintf("%lld-%lld",
                                         (long long)c->min_instances,
                                         (long long)c->max_instances),
                               joined(c->groups, c->ngroups, "any"),
                               xstrdup(c->description ? c->description : "")};

        table_add(&t, row);
    }
    table_print(&t);
}

static void
print_manifest(const struct manifest *m)
{
    cleanup_free char *sources = joined(m->sources, m->nsources, "");

    printf("plan %s (%s)\n", m->name, m->path);
    if (m->description != NULL)
        printf("  %s\n", m->description);
    printf("  build: %s", sources);
    if (m->ncflags + m->npkg_config + m->nldlibs > 0) {
        cleanup_free char *cf = joined(m->cflags, m->ncflags, "-");
        cleanup_free char *pc = joined(m->pkg_config, m->npkg_config, "-");
        cleanup_free char *ld = joined(m->ldlibs, m->nldlibs, "-");

        printf(" (cflags: %s; pkg-config: %s; ldlibs: %s)", cf, pc, ld);
    }
    printf("\n");
    print_cases(m);
    if (m->params.n == 0)
        printf("\nparameters: none shared by all cases\n");
    print_params("parameters", &m->params);
    for (size_t i = 0; i < m->ncases; i++) {
        char title[256];

        snprintf(title, sizeof(title), "parameters of case %s only",
                 m->cases[i].name);
        print_params(title, &m->cases[i].params);
    }
}

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard describe [--plans DIR] PLAN\n"
            "\n"
            "Print a plan's test cases (instance bounds, groups) and "
            "parameters\n"
            "(type, default, unit, description) from its manifest. PLAN is a "
            "plan\n"
            "name or the path of a plan folder or manifest.yaml.\n"
            "\n"
            "options:\n"
            "  -p, --plans DIR  look for the plan in DIR first (default: "
            "$TESTYARD_PLANS,\n"
            "                   then ./plans, the installed plans)\n"
            "  -h, --help       print this help\n"
            "\n"
            "exit status: 0 described, 65 invalid manifest, 66 plan not "
            "found, 64 bad\n"
            "arguments\n");
}

/* The name of the folder dir (which exists); caller owns it. */
static char *
folder_name(const char *dir)
{
    cleanup_free char *real = realpath(dir, NULL);
    const char *base = real ? strrchr(real, '/') : NULL;

    return base && base[1] ? xstrdup(base + 1) : NULL;
}

/* The manifest PLAN means (caller owns it), and in *expect the name it
 * must carry: its folder's. */
static char *
find_manifest(const char *plan, const char *plans, char **expect,
              struct err *err)
{
    cleanup_free char *dir = NULL;

    *expect = NULL;
    if (strchr(plan, '/') == NULL && strcmp(plan, ".") != 0 &&
        strcmp(plan, "..") != 0)
        dir = manifest_locate(plan, plans, NULL, err);
    else if (path_is_dir(plan))
        dir = xstrdup(plan);
    else if (path_exists(plan))
        dir = path_dirname(plan);
    else
        err_set(err, ENOENT, "%s: no such plan folder or manifest", plan);
    if (dir == NULL)
        return NULL;
    *expect = folder_name(dir);
    if (path_is_dir(plan) || strchr(plan, '/') == NULL)
        return path_join(dir, MANIFEST_FILE);
    return xstrdup(plan);
}

int
cmd_describe(int argc, char **argv)
{
    static const struct cmd_usage u = {"describe", "one PLAN", usage};
    const char *plans = NULL;
    struct err err = {0};
    cleanup_free char *expect = NULL;
    cleanup_free char *path = NULL;
    struct manifest *m;
    int rc = cmd_args_plans(argc, argv, &u, &plans, NULL, &err);

    if (rc != 0)
        return cmd_args_end(&u, rc, &err);
    path = find_manifest(argv[optind], plans, &expect, &err);
    if (path == NULL) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        return EXIT_NOINPUT;
    }
    m = manifest_load(path, expect, &err);
    if (m == NULL) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        return err.status ? err.status : EXIT_DATAERR;
    }
    print_manifest(m);
    manifest_destroy(&m);
    return fflush(stdout) == EOF ? EXIT_IOERR : 0;
}
