/*
 * test_composition_program.c — groups that run their own program instead
 * of the plan: run.command (PATH lookup, relative to the composition,
 * executable checks), image, args, env (global < group, reserved names),
 * workdir on both runners, profiles.heap: preload, compositions with no
 * plan and with a plan and such groups mixed, their JSON, and the exact
 * one-line errors (file:line:col and key path).
 */
#include "comp_fixture.h"
#include "config/config.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const manifest = "name: ms\n"
                                    "build: {sources: [main.c]}\n"
                                    "params:\n"
                                    "  size: {type: size, default: 64MB}\n"
                                    "cases:\n"
                                    "  - name: stress\n"
                                    "    instances: {min: 2, max: 100}\n"
                                    "    groups: [providers, requestors]\n";

/* An executable (or not) file under the case's folder. */
static void
write_program(const char *rel, mode_t mode)
{
    char *path = th_write_tmp(rel, "#!/bin/sh\nexit 0\n");

    CHECK(chmod(path, mode) == 0);
    free(path);
}

/* Load text as comps/<name> (next to plans/ms), on runner when not NULL. */
static struct composition *
load_on(const char *name, const char *text, const char *runner, struct err *err)
{
    return comp_fixture_load(manifest, name, text,
                             (struct composition_opts){.runner = runner}, err);
}

static struct composition *
load(const char *text, struct err *err)
{
    return load_on("c.yaml", text, NULL, err);
}

/* "<tmp>/rel" */
static char *
tmp_path(const char *rel)
{
    return path_join(th_tmpdir(), rel);
}

/* PATH is the test's: set it, and put the old one back. */
static char *saved_path;

static void
path_set(const char *value)
{
    const char *old = getenv("PATH");

    saved_path = old ? xstrdup(old) : NULL;
    setenv("PATH", value, 1);
}

static void
path_restore(void)
{
    if (saved_path != NULL)
        setenv("PATH", saved_path, 1);
    else
        unsetenv("PATH");
    free(saved_path);
    saved_path = NULL;
}

#define EXEC_HEAD                                                              \
    "global: {runner: local:exec}\n"                                           \
    "groups:\n"                                                                \
    "  - id: a\n"                                                              \
    "    instances: {count: 1}\n"

#define DOCKER_HEAD                                                            \
    "global: {runner: local:docker}\n"                                         \
    "groups:\n"                                                                \
    "  - id: a\n"                                                              \
    "    instances: {count: 1}\n"

/* The load fails with a message that, from "c.yaml:", starts with want. */
static void
check_fails(const char *text, const char *runner, const char *want)
{
    struct err err;
    struct composition *c = load_on("c.yaml", text, runner, &err);
    const char *msg = strstr(err.msg, "c.yaml:");

    CHECK_MSG(c == NULL, "accepted: %s", text);
    composition_destroy(&c);
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    CHECK_MSG(msg != NULL && strncmp(msg, want, strlen(want)) == 0,
              "want \"%s\", got \"%s\"", want, err.msg);
}

static void
t_command_path_lookup(void)
{
    cleanup_free char *bin = tmp_path("bin");
    cleanup_free char *prog = tmp_path("bin/typrog");
    cleanup_free char *want = NULL;
    struct err err;
    struct composition *c;

    write_program("bin/typrog", 0755);
    write_program("bin/tydata", 0644);
    path_set(bin);
    c = load(EXEC_HEAD "    run: {command: [typrog, -v, \"a b\"]}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_STR(c->groups[0].command[0], prog);
        CHECK_EQ_STR(c->groups[0].command[1], "-v");
        CHECK_EQ_STR(c->groups[0].command[2], "a b");
        CHECK(c->groups[0].command[3] == NULL);
        CHECK(composition_group_blackbox(&c->groups[0]));
        CHECK(!composition_needs_plan(c));
    }
    composition_destroy(&c);
    /* One string is one word: no shell splits it. */
    c = load(EXEC_HEAD "    run: {command: typrog}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_STR(c->groups[0].command[0], prog);
        CHECK(c->groups[0].command[1] == NULL);
    }
    composition_destroy(&c);
    want = xasprintf("c.yaml:5:21: groups[0].run.command[0]: \"memcachd\" "
                     "not found in PATH (%s)",
                     bin);
    check_fails(EXEC_HEAD "    run: {command: [memcachd]}\n", NULL, want);
    free(want);
    want = xasprintf("c.yaml:5:20: groups[0].run.command: \"typrog -v\" not "
                     "found in PATH (%s)",
                     bin);
    check_fails(EXEC_HEAD "    run: {command: typrog -v}\n", NULL, want);
    free(want);
    want = xasprintf("c.yaml:5:21: groups[0].run.command[0]: \"tydata\" not "
                     "found in PATH (%s); %s/tydata is not executable",
                     bin, bin);
    check_fails(EXEC_HEAD "    run: {command: [tydata]}\n", NULL, want);
    path_restore();
}

/* A path with '/' is taken from the composition's folder, made absolute;
 * it must be an executable regular file. */
static void
t_command_relative(void)
{
    cleanup_free char *tool = tmp_path("comps/tools/run.sh");
    cleanup_free char *abs = tmp_path("bin/typrog");
    cleanup_free char *text = NULL;
    cleanup_free char *want = NULL;
    struct err err;
    struct composition *c;

    write_program("comps/tools/run.sh", 0755);
    write_program("comps/tools/data", 0644);
    write_program("bin/typrog", 0755);
    c = load(EXEC_HEAD "    run: {command: [./tools/run.sh, x]}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->groups[0].command[0], tool);
    composition_destroy(&c);
    c = load(EXEC_HEAD "    run: {command: tools//run.sh}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->groups[0].command[0], tool);
    composition_destroy(&c);
    text = xasprintf(EXEC_HEAD "    run: {command: [%s]}\n", abs);
    c = load(text, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->groups[0].command[0], abs);
    composition_destroy(&c);
    want = xasprintf("c.yaml:5:21: groups[0].run.command[0]: %s/comps/tools/"
                     "data: not executable",
                     th_tmpdir());
    check_fails(EXEC_HEAD "    run: {command: [tools/data]}\n", NULL, want);
    free(want);
    want = xasprintf("c.yaml:5:21: groups[0].run.command[0]: %s/comps/tools: "
                     "a folder, not a program",
                     th_tmpdir());
    check_fails(EXEC_HEAD "    run: {command: [./tools]}\n", NULL, want);
    free(want);
    want = xasprintf("c.yaml:5:21: groups[0].run.command[0]: %s/comps/nope/x: "
                     "no such file",
                     th_tmpdir());
    check_fails(EXEC_HEAD "    run: {command: [nope/x]}\n", NULL, want);
}

static void
t_command_types(void)
{
    static const struct {
        const char *run;
        const char *msg;
    } bad[] = {
        {"    run: {command: []}\n",
         "c.yaml:5:20: groups[0].run.command: expected a program and its "
         "arguments, [path, arg...], or one path, got an empty list"},
        {"    run: {command: {a: 1}}\n",
         "c.yaml:5:20: groups[0].run.command: expected a program and its "
         "arguments, [path, arg...], or one path, got a mapping"},
        {"    run: {command: }\n",
         "c.yaml:5:20: groups[0].run.command: expected a program and its "
         "arguments, [path, arg...], or one path, got nothing"},
        {"    run: {command: [ls, \"\"]}\n",
         "c.yaml:5:25: groups[0].run.command[1]: expected a non-empty string "
         "(one word of the command; no shell splits it), got \"\""},
        {"    run: {command: [ls, [x]]}\n",
         "c.yaml:5:25: groups[0].run.command[1]: expected a non-empty string "
         "(one word of the command; no shell splits it), got a list"},
        {"    run: {command: [null, x]}\n",
         "c.yaml:5:21: groups[0].run.command[0]: expected a non-empty "
         "string"},
    };
    char text[512];

    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        snprintf(text, sizeof(text), EXEC_HEAD "%s", bad[i].run);
        check_fails(text, NULL, bad[i].msg);
    }
}

static void
t_args(void)
{
    struct err err;
    struct composition *c =
        load(EXEC_HEAD "    run:\n"
                       "      command: [/bin/sh]\n"
                       "      args: [-c, 12, 2.50, true, \"\", 0x1F, ~x]\n",
             &err);
    const char *const want[] = {"-c", "12", "2.50", "true", "", "0x1F", "~x"};

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        for (size_t i = 0; i < ARRAY_LEN(want); i++)
            CHECK_EQ_STR(c->groups[0].args[i], want[i]);
        CHECK(c->groups[0].args[ARRAY_LEN(want)] == NULL);
    }
    composition_destroy(&c);
    /* Without args: an empty list, never NULL; env likewise. */
    c = load(EXEC_HEAD "    run: {command: /bin/sh}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(c->groups[0].args != NULL && c->groups[0].args[0] == NULL);
        CHECK(c->groups[0].env != NULL && c->groups[0].env[0] == NULL);
        CHECK(c->groups[0].workdir == NULL);
        CHECK(c->groups[0].image == NULL);
    }
    composition_destroy(&c);
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, args: [a, b, {c: 1}]}\n",
                NULL,
                "c.yaml:5:42: groups[0].run.args[2]: expected one argument (a "
                "string, number or bool; \"\" for an empty one), got a "
                "mapping");
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, args: [[a]]}\n", NULL,
                "c.yaml:5:36: groups[0].run.args[0]: expected one argument");
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, args: [a, null]}\n",
                NULL,
                "c.yaml:5:39: groups[0].run.args[1]: expected one argument (a "
                "string, number or bool; \"\" for an empty one), got null");
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, args: -c}\n", NULL,
                "c.yaml:5:35: groups[0].run.args: expected a list of "
                "arguments, got \"-c\"");
}

/* global.run.env < the group's, variable by variable, in order. */
static void
t_env_merge(void)
{
    struct err err;
    struct composition *c =
        load("global:\n"
             "  runner: local:exec\n"
             "  run:\n"
             "    command: /bin/sh\n"
             "    env: {A: 1, B: two, LD_PRELOAD: /x.so}\n"
             "groups:\n"
             "  - id: a\n"
             "    instances: {count: 1}\n"
             "    run: {env: {B: three, C: \"\", D: 0.50}}\n"
             "  - id: b\n"
             "    instances: {count: 1}\n",
             &err);
    const char *const a[] = {"A=1", "B=three", "LD_PRELOAD=/x.so",
                             "C=", "D=0.50"};
    const char *const b[] = {"A=1", "B=two", "LD_PRELOAD=/x.so"};

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    for (size_t i = 0; i < ARRAY_LEN(a); i++)
        CHECK_EQ_STR(c->groups[0].env[i], a[i]);
    CHECK(c->groups[0].env[ARRAY_LEN(a)] == NULL);
    for (size_t i = 0; i < ARRAY_LEN(b); i++)
        CHECK_EQ_STR(c->groups[1].env[i], b[i]);
    CHECK(c->groups[1].env[ARRAY_LEN(b)] == NULL);
    CHECK_EQ_STR(c->groups[1].command[0], "/bin/sh");
    composition_destroy(&c);
}

static void
t_env_errors(void)
{
    static const struct {
        const char *env;
        const char *msg;
    } bad[] = {
        {"{1A: x}", "c.yaml:5:35: groups[0].run.env.1A: expected a variable "
                    "name (letters, digits and '_', not starting with a "
                    "digit), got \"1A\""},
        {"{A-B: x}", "c.yaml:5:35: groups[0].run.env.A-B: expected a variable "
                     "name"},
        {"{TEST_PLAN: x}", "c.yaml:5:35: groups[0].run.env.TEST_PLAN: testyard "
                           "sets TEST_PLAN itself in every instance (the "
                           "Testground variables TEST_* are testyard's)"},
        {"{SYNC_SERVICE_PORT: 1}",
         "c.yaml:5:35: groups[0].run.env.SYNC_SERVICE_PORT: testyard sets "
         "SYNC_SERVICE_PORT itself"},
        {"{TESTYARD_SYNC_URL: x}",
         "c.yaml:5:35: groups[0].run.env.TESTYARD_SYNC_URL: testyard sets "
         "TESTYARD_SYNC_URL itself"},
        {"{TESTYARD_HEAP_RATE: 1}",
         "c.yaml:5:35: groups[0].run.env.TESTYARD_HEAP_RATE: testyard sets "
         "TESTYARD_HEAP_RATE itself in every instance (set "
         "global.run.profiles.heap_rate)"},
        {"{TESTYARD_HEAP_PEAK_STEP: 1}",
         "c.yaml:5:35: groups[0].run.env.TESTYARD_HEAP_PEAK_STEP: testyard "
         "sets TESTYARD_HEAP_PEAK_STEP itself in every instance (set "
         "global.run.profiles.heap_peak)"},
        {"{TESTYARD_PLAN_INSTANCES: 1}",
         "c.yaml:5:35: groups[0].run.env.TESTYARD_PLAN_INSTANCES: testyard "
         "sets TESTYARD_PLAN_INSTANCES itself in every instance (it counts "
         "the instances)"},
        {"{TESTYARD_HEAP_PROFILE_INTERVAL: 1s}",
         "c.yaml:5:35: groups[0].run.env.TESTYARD_HEAP_PROFILE_INTERVAL: "
         "testyard sets TESTYARD_HEAP_PROFILE_INTERVAL itself in every "
         "instance (set global.run.profiles.heap)"},
        {"{A: [1]}", "c.yaml:5:38: groups[0].run.env.A: expected a value (a "
                     "string, number or bool; \"\" for an empty one), got a "
                     "list"},
        {"{A: }",
         "c.yaml:5:38: groups[0].run.env.A: expected a value (a string, "
         "number or bool; \"\" for an empty one), got nothing"},
        {"[A=1]", "c.yaml:5:34: groups[0].run.env: expected a mapping"},
    };
    char text[512];

    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        snprintf(text, sizeof(text),
                 EXEC_HEAD "    run: {command: /bin/sh, env: %s}\n",
                 bad[i].env);
        check_fails(text, NULL, bad[i].msg);
    }
    /* In global.run the path says so. */
    check_fails("global: {runner: local:exec,\n"
                "         run: {command: /bin/sh, env: {TEST_CASE: x}}}\n"
                "groups: [{id: a, instances: {count: 1}}]\n",
                NULL,
                "c.yaml:2:40: global.run.env.TEST_CASE: testyard sets "
                "TEST_CASE itself");
}

static void
t_workdir(void)
{
    cleanup_free char *data = tmp_path("comps/data");
    cleanup_free char *want = NULL;
    struct err err;
    struct composition *c;

    free(th_write_tmp("comps/data/keep", ""));
    c = load(EXEC_HEAD "    run: {command: /bin/sh, workdir: ./data}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->groups[0].workdir, data);
    composition_destroy(&c);
    c = load(EXEC_HEAD "    run: {command: /bin/sh, workdir: /}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->groups[0].workdir, "/");
    composition_destroy(&c);
    want = xasprintf("c.yaml:5:38: groups[0].run.workdir: expected an "
                     "existing folder, got \"nope\" (%s/comps/nope: no such "
                     "folder)",
                     th_tmpdir());
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, workdir: nope}\n", NULL,
                want);
    free(want);
    want = xasprintf("c.yaml:5:38: groups[0].run.workdir: expected an "
                     "existing folder, got \"data/keep\" (%s/comps/data/keep "
                     "is not a folder)",
                     th_tmpdir());
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, workdir: data/keep}\n",
                NULL, want);
    /* In a container: kept as written, and absolute. */
    c = load(DOCKER_HEAD "    run: {image: redis, workdir: /srv/x}\n", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->groups[0].workdir, "/srv/x");
    composition_destroy(&c);
    check_fails(DOCKER_HEAD "    run: {image: redis, workdir: data}\n", NULL,
                "c.yaml:5:34: groups[0].run.workdir: expected an absolute "
                "path in the container, got \"data\"");
    /* --runner decides which kind of path workdir is. */
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, workdir: data}\n",
                "local:docker",
                "c.yaml:5:38: groups[0].run.workdir: expected an absolute "
                "path in the container, got \"data\"");
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, workdir: \"\"}\n", NULL,
                "c.yaml:5:38: groups[0].run.workdir: expected a folder, got "
                "\"\"");
}

static void
t_image(void)
{
    static const char *const good[] = {
        "memcached",
        "memcached:1.6",
        "library/redis:7-alpine",
        "localhost:5000/team/app:v1.2_3",
        "GHCR.io/my-org/app",
        "a__b/c-d--e.f",
        "app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef",
    };
    static const char *const bad[] = {
        "Memcached",     "app:",   "a..b",
        "-app",          "app:-x", "a b",
        "app@sha256:12", "a/_b",   "ghcr.io/My-Org/app",
    };
    char text[512];
    struct err err;
    struct composition *c;

    for (size_t i = 0; i < ARRAY_LEN(good); i++) {
        snprintf(text, sizeof(text),
                 DOCKER_HEAD "    run: {image: \"%s\", command: [nosuch]}\n",
                 good[i]);
        c = load(text, &err);
        CHECK_MSG(c != NULL, "%s: %s", good[i], err.msg);
        if (c != NULL) {
            CHECK_EQ_STR(c->groups[0].image, good[i]);
            /* With an image the command is the image's: as written. */
            CHECK_EQ_STR(c->groups[0].command[0], "nosuch");
        }
        composition_destroy(&c);
    }
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        snprintf(text, sizeof(text), DOCKER_HEAD "    run: {image: \"%s\"}\n",
                 bad[i]);
        check_fails(text, NULL,
                    "c.yaml:5:18: groups[0].run.image: expected a Docker "
                    "image reference such as memcached:1.6");
    }
    check_fails(EXEC_HEAD "    run: {image: redis}\n", NULL,
                "c.yaml:5:18: groups[0].run.image: expected no image with "
                "runner local:exec (instances run as host programs, not in "
                "containers); name the host program with run.command");
    /* --runner replaces the composition's runner before the check. */
    check_fails(DOCKER_HEAD "    run: {image: redis}\n", "local:exec",
                "c.yaml:5:18: groups[0].run.image: expected no image with "
                "runner local:exec");
    check_fails(DOCKER_HEAD "    run: {image: [redis]}\n", NULL,
                "c.yaml:5:18: groups[0].run.image: expected an image name "
                "such as memcached:1.6, got a list");
    check_fails(DOCKER_HEAD "    run: {image: \"\"}\n", NULL,
                "c.yaml:5:18: groups[0].run.image: expected an image name "
                "such as memcached:1.6, got \"\"");
}

/* Where the program was written, for errors after load. */
static void
t_program_at(void)
{
    struct err err;
    struct composition *c = load("global:\n"
                                 "  runner: local:docker\n"
                                 "  run: {command: [/bin/sh]}\n"
                                 "groups:\n"
                                 "  - id: a\n"
                                 "    instances: {count: 1}\n"
                                 "  - id: b\n"
                                 "    instances: {count: 1}\n"
                                 "    run: {image: redis:7}\n",
                                 &err);
    const char *at;

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    at = c->groups[0].program_at ? strstr(c->groups[0].program_at, "c.yaml")
                                 : NULL;
    CHECK_EQ_STR(at, "c.yaml:3:18: global.run.command");
    at = c->groups[1].program_at ? strstr(c->groups[1].program_at, "c.yaml")
                                 : NULL;
    CHECK_EQ_STR(at, "c.yaml:9:18: groups[1].run.image");
    /* global.run.command with an image is the image's program. */
    CHECK_EQ_STR(c->groups[1].command[0], "/bin/sh");
    composition_destroy(&c);
}

static void
t_profiles(void)
{
    struct err err;
    struct composition *c =
        load("global:\n"
             "  plan: ms\n"
             "  case: stress\n"
             "  runner: local:exec\n"
             "  run: {profiles: {heap: preload}}\n"
             "groups:\n"
             "  - {id: providers, instances: {count: 2}}\n"
             "  - id: bb\n"
             "    instances: {count: 1}\n"
             "    run: {command: /bin/sh}\n"
             "  - id: bb2\n"
             "    instances: {count: 1}\n"
             "    run: {command: /bin/sh, profiles: {heap: off}}\n",
             &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(!c->groups[0].heap_preload);
        CHECK(c->groups[1].heap_preload);
        CHECK(!c->groups[2].heap_preload);
        CHECK_EQ_INT(c->heap_profile_ns, 0);
    }
    composition_destroy(&c);
    c = load("global: {runner: local:exec, run: {profiles: {heap: 2s}}}\n"
             "groups:\n"
             "  - id: a\n"
             "    instances: {count: 1}\n"
             "    run: {command: /bin/sh, profiles: {heap: preload}}\n",
             &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(c->groups[0].heap_preload);
        CHECK_EQ_INT(c->heap_profile_ns, 2000000000LL);
    }
    composition_destroy(&c);
    check_fails("global: {plan: ms, case: stress, runner: local:exec}\n"
                "groups:\n"
                "  - id: providers\n"
                "    instances: {count: 2}\n"
                "    run: {profiles: {heap: preload}}\n",
                NULL,
                "c.yaml:5:28: groups[0].run.profiles.heap: the plan links "
                "the heap profiler; profiles.heap: preload is for groups "
                "with run.command or run.image");
    check_fails("global: {plan: ms, case: stress, runner: local:exec,\n"
                "         run: {profiles: {heap: preload}}}\n"
                "groups: [{id: providers, instances: {count: 2}}]\n",
                NULL,
                "c.yaml:2:33: global.run.profiles.heap: the plan links the "
                "heap profiler");
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, profiles: {heap: 5s}}\n",
                NULL,
                "c.yaml:5:46: groups[0].run.profiles.heap: expected preload "
                "or off (a group's profiles.heap; the interval of periodic "
                "profiles is global.run.profiles.heap), got \"5s\"");
    check_fails(EXEC_HEAD
                "    run: {command: /bin/sh, profiles: {heap_rate: 1Mi}}\n",
                NULL,
                "c.yaml:5:40: groups[0].run.profiles.heap_rate: unknown key; "
                "heap_rate is the whole run's: set it in "
                "global.run.profiles");
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, profiles: {hep: off}}\n",
                NULL,
                "c.yaml:5:40: groups[0].run.profiles.hep: unknown key; did "
                "you mean \"heap\"?");
    check_fails("global: {runner: local:exec, run: {profiles: {heap: 5}}}\n"
                "groups: [{id: a, instances: {count: 1},"
                " run: {command: /bin/sh}}]\n",
                NULL,
                "c.yaml:1:53: global.run.profiles.heap: expected a duration "
                "of at least 10ms (the interval of periodic heap profiles), 0 "
                "or off for none, or preload, got 5");
}

static void
t_artifact(void)
{
    struct err err;
    struct composition *c =
        load("global: {plan: ms, case: stress, runner: local:exec,\n"
             "         run: {artifact: /bin/true}}\n"
             "groups:\n"
             "  - {id: providers, instances: {count: 2}}\n"
             "  - {id: bb, instances: {count: 1}, run: {command: /bin/sh}}\n",
             &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_STR(c->groups[0].artifact, "/bin/true");
        CHECK(c->groups[1].artifact == NULL);
    }
    composition_destroy(&c);
    check_fails(EXEC_HEAD "    run: {command: /bin/sh, artifact: /bin/true}\n",
                NULL,
                "c.yaml:5:39: groups[0].run.artifact: a ready build of the "
                "plan cannot go with run.command (a program instead of the "
                "plan); remove one");
    check_fails("global: {runner: local:exec, run: {command: /bin/sh}}\n"
                "groups: [{id: a, instances: {count: 1},"
                " run: {artifact: /bin/true}}]\n",
                NULL,
                "c.yaml:2:57: groups[0].run.artifact: a ready build of the "
                "plan cannot go with global.run.command");
}

/* Every group runs its own program: no plan, no case, no manifest. */
static void
t_planless(void)
{
    struct err err;
    struct composition *c =
        load("global:\n"
             "  runner: local:exec\n"
             "  run: {test_params: {size: 1.50, n: 3, half: .5, on: true,\n"
             "                      list: [1, x], none: null,\n"
             "                      big: 1234567890123456, inf: .inf}}\n"
             "groups:\n"
             "  - id: a\n"
             "    instances: {count: 2}\n"
             "    run: {command: /bin/sh, test_params: {n: \"4\"}}\n",
             &err);
    char *s;

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    CHECK(c->plan == NULL && c->manifest == NULL && c->tcase == NULL &&
          c->plan_dir == NULL && c->case_name == NULL);
    CHECK_EQ_INT(c->total_instances, 2);
    s = cJSON_PrintUnformatted(c->groups[0].params);
    CHECK_EQ_STR(s, "{\"size\":1.5,\"n\":\"4\",\"half\":0.5,\"on\":true,"
                    "\"list\":[1,\"x\"],\"none\":null,\"big\":"
                    "\"1234567890123456\",\"inf\":\".inf\"}");
    free(s);
    composition_destroy(&c);
    c = load("global: {case: warm, runner: local:exec}\n"
             "groups: [{id: a, instances: {count: 1},"
             " run: {command: /bin/sh}}]\n",
             &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_STR(c->case_name, "warm");
        CHECK(c->plan == NULL);
    }
    composition_destroy(&c);
    check_fails("global: {runner: local:exec}\n"
                "groups:\n"
                "  - {id: a, instances: {count: 1}, run: {command: /bin/sh}}\n"
                "  - {id: b, instances: {count: 1}}\n",
                NULL,
                "c.yaml:1:9: global: missing required key \"plan\"; group "
                "\"b\" runs the plan (it has no run.command or run.image)");
    check_fails("global: {runner: local:exec}\n"
                "groups: [{id: a, instances: {count: 1}}]\n",
                NULL, "c.yaml:1:9: global: missing required key \"plan\"");
    check_fails("global: {plan: ms, runner: local:exec}\n"
                "groups: [{id: a, instances: {count: 1},"
                " run: {command: /bin/sh}}]\n",
                NULL, "c.yaml:1:9: global: missing required key \"case\"");
}

/* With a plan, its case checks the groups that run it; the others' ids
 * and parameters are theirs. */
static void
t_plan_mix(void)
{
    struct err err;
    struct composition *c =
        load("global:\n"
             "  plan: ms\n"
             "  case: stress\n"
             "  runner: local:exec\n"
             "groups:\n"
             "  - {id: providers, instances: {count: 2}}\n"
             "  - id: cache\n"
             "    instances: {count: 200}\n"
             "    run: {command: /bin/sh, test_params: {port: 11211}}\n",
             &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(composition_needs_plan(c));
        CHECK(c->manifest != NULL && c->tcase != NULL);
        CHECK_EQ_STR(
            cJSON_GetObjectItem(c->groups[0].params, "size")->valuestring,
            "64MB");
        CHECK(cJSON_GetObjectItem(c->groups[1].params, "size") == NULL);
        CHECK_EQ_INT(cJSON_GetObjectItem(c->groups[1].params, "port")->valueint,
                     11211);
    }
    composition_destroy(&c);
    check_fails("global: {plan: ms, case: stress, runner: local:exec}\n"
                "groups:\n"
                "  - {id: providers, instances: {count: 1}}\n"
                "  - {id: cache, instances: {count: 5},"
                " run: {command: /bin/sh}}\n",
                NULL,
                "c.yaml:3:3: groups: expected 2 to 100 instances in all for "
                "case \"stress\" of plan \"ms\", got 1 in the groups that run "
                "the plan");
    check_fails("global: {plan: ms, case: stress, runner: local:exec}\n"
                "groups:\n"
                "  - id: providers\n"
                "    instances: {count: 2}\n"
                "    run: {test_params: {port: 1}}\n"
                "  - {id: cache, instances: {count: 1},"
                " run: {command: /bin/sh}}\n",
                NULL,
                "c.yaml:5:25: groups[0].run.test_params.port: unknown "
                "parameter");
}

static char *
json_text(const char *text)
{
    return comp_fixture_json(manifest, "c.yaml", text);
}

static void
t_json(void)
{
    char *s = json_text("global: {runner: local:docker}\n"
                        "groups:\n"
                        "  - id: a\n"
                        "    instances: {count: 1}\n"
                        "    run: {image: redis, args: [--port, 1],"
                        " env: {A: x}, workdir: /data,"
                        " profiles: {heap: preload}}\n");

    CHECK_CONTAINS(s, "\"plan\":null,\"plan_dir\":null,\"manifest\":null,"
                      "\"case\":null,\"runner\":\"local:docker\"");
    CHECK_CONTAINS(
        s, "\"artifact\":null,\"root\":false,\"disk\":[],\"command\":null,"
           "\"image\":\"redis\",\"args\":[\"--port\",\"1\"],"
           "\"env\":{\"A\":\"x\"},\"workdir\":\"/data\","
           "\"profiles\":{\"heap\":\"preload\"},\"params\":{}}");
    CHECK_CONTAINS(s, "\"notes\":[\"no plan: test_params are passed to the "
                      "instances as written, unchecked (no manifest)\"]");
    free(s);
    s = json_text("global: {plan: ms, case: stress, runner: local:exec}\n"
                  "groups:\n"
                  "  - {id: providers, instances: {count: 2}}\n"
                  "  - {id: bb, instances: {count: 1},"
                  " run: {command: /bin/sh, test_params: {x: 1}}}\n");
    CHECK_CONTAINS(
        s, "\"root\":false,\"disk\":[],\"params\":{\"size\":\"64MB\"}}");
    CHECK_CONTAINS(s, "\"command\":[\"/bin/sh\"],\"image\":null,\"args\":[],"
                      "\"env\":{},\"workdir\":null,\"profiles\":{\"heap\":"
                      "null},\"params\":{\"x\":1}}");
    CHECK_CONTAINS(s, "\"notes\":[\"groups that run their own program "
                      "(\\\"bb\\\"): test_params are passed as written, "
                      "unchecked (the manifest checks only the groups that "
                      "run the plan)\"]");
    free(s);
    s = json_text("global: {plan: ms, case: stress, runner: local:exec}\n"
                  "groups: [{id: providers, instances: {count: 2}}]\n");
    CHECK(strstr(s, "notes") == NULL);
    CHECK(strstr(s, "command") == NULL);
    free(s);
}

static const struct th_case cases[] = {
    {"command_path_lookup", t_command_path_lookup},
    {"command_relative", t_command_relative},
    {"command_types", t_command_types},
    {"args", t_args},
    {"env_merge", t_env_merge},
    {"env_errors", t_env_errors},
    {"workdir", t_workdir},
    {"image", t_image},
    {"program_at", t_program_at},
    {"profiles", t_profiles},
    {"artifact", t_artifact},
    {"planless", t_planless},
    {"plan_mix", t_plan_mix},
    {"json", t_json},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
