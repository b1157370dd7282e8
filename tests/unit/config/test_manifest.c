/*
 * test_manifest.c — loading plan manifests, their checks, and finding a
 * plan's folder.
 */
#include "config/config.h"
#include "config/params_int.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const good = "name: stress-plan\n"
                                "description: d\n"
                                "build:\n"
                                "  sources: [main.c, dag.c]\n"
                                "  pkg_config: [libzmq]\n"
                                "params:\n"
                                "  size: {type: size, default: 64MB}\n"
                                "cases:\n"
                                "  - name: stress\n"
                                "    instances: {min: 2, max: 100}\n"
                                "    groups: [providers, requestors]\n"
                                "    params:\n"
                                "      seed: {type: int}\n"
                                "  - name: smoke\n"
                                "    description: quick\n"
                                "    instances: {min: 1, max: 1}\n";

static void
t_load(void)
{
    char *path = th_write_tmp("plans/stress-plan/manifest.yaml", good);
    struct err err = {0};
    struct manifest *m = manifest_load(path, "stress-plan", &err);
    const struct manifest_case *c;

    CHECK_MSG(m != NULL, "%s", err.msg);
    if (m != NULL) {
        CHECK_EQ_STR(m->name, "stress-plan");
        CHECK_EQ_INT(m->nsources, 2);
        CHECK_EQ_STR(m->sources[1], "dag.c");
        CHECK_EQ_INT(m->ncflags, 0);
        CHECK(m->cflags != NULL && m->cflags[0] == NULL);
        CHECK_EQ_STR(m->pkg_config[0], "libzmq");
        CHECK_EQ_INT(m->params.n, 1);
        CHECK_EQ_INT(m->ncases, 2);
        c = manifest_case(m, "stress");
        CHECK(c != NULL && c->min_instances == 2 && c->max_instances == 100);
        CHECK(c != NULL && manifest_case_allows(c, "requestors"));
        CHECK(c != NULL && !manifest_case_allows(c, "others"));
        CHECK(c != NULL && params__find(&c->params, "seed") != NULL);
        c = manifest_case(m, "smoke");
        CHECK(c != NULL && manifest_case_allows(c, "anything"));
        CHECK(manifest_case(m, "nope") == NULL);
        CHECK_CONTAINS(m->dir, "plans/stress-plan");
    }
    manifest_destroy(&m);
    CHECK(m == NULL);
    free(path);
}

/* The error of loading `text` as plan p's manifest. */
static const char *
load_error(const char *text)
{
    static struct err err;
    char *path = th_write_tmp("m/manifest.yaml", text);
    struct manifest *m;

    err_clear(&err);
    m = manifest_load(path, "m", &err);
    CHECK_MSG(m == NULL, "accepted: %s", text);
    manifest_destroy(&m);
    free(path);
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    /* Messages start with the path: keep only what follows the folder. */
    return strstr(err.msg, "manifest.yaml") ? strstr(err.msg, "manifest.yaml")
                                            : err.msg;
}

static void
t_errors(void)
{
    const char *build = "build: {sources: [main.c]}\n";
    const char *cases = "cases: [{name: a, instances: {min: 1, max: 2}}]\n";
    char text[512];

    snprintf(text, sizeof(text), "name: other\n%s%s", build, cases);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:1:7: name: expected \"m\" (the name of the "
                 "plan's folder), got \"other\"");
    snprintf(text, sizeof(text), "name: m\n%s", cases);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:1:1: missing required key \"build\"");
    snprintf(text, sizeof(text), "name: m\nbuild: {sources: [../x.c]}\n%s",
             cases);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:2:19: build.sources[0]: expected a path "
                 "inside the plan folder, got \"../x.c\"");
    snprintf(text, sizeof(text), "name: m\n%scases: []\n", build);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:3:8: cases: expected at least one test "
                 "case, got an empty list");
    snprintf(text, sizeof(text),
             "name: m\n%scases:\n  - {name: a, instances: {min: 1, max: 2}}\n"
             "  - {name: a, instances: {min: 1, max: 2}}\n",
             build);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:5:12: cases[1].name: duplicate case name "
                 "\"a\"");
    snprintf(text, sizeof(text),
             "name: m\n%scases:\n  - {name: a, instances: {min: 0, max: 2}}\n",
             build);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:4:32: cases[0].instances.min: expected an "
                 "integer from 1 to 1000000, got 0");
    snprintf(text, sizeof(text),
             "name: m\n%scases:\n  - {name: a, instances: {min: 1, max: 2}, "
             "groups: [x, X]}\n",
             build);
    CHECK_CONTAINS(load_error(text), "cases[0].groups[1]: expected a group id");
    snprintf(text, sizeof(text), "name: m\n%s%sbulid: {}\n", build, cases);
    CHECK_EQ_STR(load_error(text),
                 "manifest.yaml:4:1: bulid: unknown key; did you mean "
                 "\"build\"?");
    CHECK_EQ_STR(load_error(""), "manifest.yaml:1:1: the file is empty; "
                                 "expected a manifest (name, build, params, "
                                 "cases)");
}

static void
t_locate(void)
{
    char *a = th_write_tmp("first/p/manifest.yaml", "x");
    char *b = th_write_tmp("plans/p/manifest.yaml", "x");
    char *c = th_write_tmp("comps/c.yaml", "x");
    char *first = path_join(th_tmpdir(), "first");
    char *comps = path_join(th_tmpdir(), "comps");
    char *want_b = path_join(th_tmpdir(), "plans/p");
    struct err err = {0};
    char *dir;

    dir = manifest_locate("p", first, comps, &err);
    CHECK(dir != NULL && strstr(dir, "first/p") != NULL);
    free(dir);
    /* <composition dir>/../plans, tidied. */
    dir = manifest_locate("p", NULL, comps, &err);
    CHECK_EQ_STR(dir, want_b);
    free(dir);
    setenv("TESTYARD_PLANS", first, 1);
    dir = manifest_locate("p", NULL, comps, &err);
    CHECK(dir != NULL && strstr(dir, "first/p") != NULL);
    free(dir);
    unsetenv("TESTYARD_PLANS");
    CHECK(manifest_locate("q", first, comps, &err) == NULL);
    CHECK_CONTAINS(err.msg, "plan \"q\" not found; looked for "
                            "q/manifest.yaml in ");
    CHECK_CONTAINS(err.msg, "/first, ");
    CHECK_CONTAINS(err.msg, "/comps/../plans, plans, ");
    CHECK_CONTAINS(err.msg, "/share/testyard/plans");
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    CHECK(manifest_locate("../p", first, comps, &err) == NULL);
    free(a);
    free(b);
    free(c);
    free(first);
    free(comps);
    free(want_b);
}

static void
t_valid_id(void)
{
    CHECK(manifest_valid_id("providers", false));
    CHECK(manifest_valid_id("g-1_a", false));
    CHECK(!manifest_valid_id("Providers", false));
    CHECK(!manifest_valid_id("-x", false));
    CHECK(!manifest_valid_id("a.b", false));
    CHECK(manifest_valid_id("a.b", true));
    CHECK(!manifest_valid_id(".a", true));
    CHECK(!manifest_valid_id("", false));
    CHECK(!manifest_valid_id("a/b", true));
}

static const struct th_case cases[] = {
    {"load", t_load},         {"errors", t_errors}, {"locate", t_locate},
    {"valid_id", t_valid_id}, {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
