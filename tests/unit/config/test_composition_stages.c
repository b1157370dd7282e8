/*
 * test_composition_stages.c — global.run_config.stages and run.ready: every
 * form the loader takes (stages by duration and by rounds, the four
 * actions, grace, lists that start or end with an action, ready by port or
 * command, global.run's and a group's, a plan group's, off), their JSON in
 * YAML and JSON compositions alike, and each refusal with its exact
 * one-line message (file:line:col and key path).
 */
#include "comp_fixture.h"
#include "config/config.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const manifest = "name: ms\n"
                                    "build: {sources: [main.c]}\n"
                                    "cases:\n"
                                    "  - name: solo\n"
                                    "    instances: {min: 1, max: 10}\n";

/* Load text as comps/<name> next to plans/ms. */
static struct composition *
load(const char *name, const char *text, struct err *err)
{
    return comp_fixture_load(manifest, name, text, (struct composition_opts){0},
                             err);
}

/* The load of text as comps/<name> fails with want, from "<name>:" on. */
static void
check_fails(const char *name, const char *text, const char *want)
{
    struct err err;
    struct composition *c = load(name, text, &err);
    const char *msg = strstr(err.msg, "comps/");

    CHECK_MSG(c == NULL, "accepted: %s", text);
    composition_destroy(&c);
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    CHECK_MSG(msg != NULL && strcmp(msg + strlen("comps/"), want) == 0,
              "want \"%s\", got \"%s\"", want, err.msg);
}

/* Two groups that run /bin/true; stages from line 6, column 9. */
#define HEAD                                                                   \
    "global:\n"                                                                \
    "  runner: local:exec\n"                                                   \
    "  run: {command: /bin/true}\n"                                            \
    "  run_config:\n"                                                          \
    "    stages:\n"
#define GROUPS                                                                 \
    "groups:\n"                                                                \
    "  - {id: node, instances: {count: 1}}\n"                                  \
    "  - {id: load, instances: {count: 1}}\n"

#define SEC INT64_C(1000000000)

static const char *const example = HEAD "      - name: warm\n"
                                        "        duration: 30s\n"
                                        "      - restart: node\n"
                                        "        grace: 5s\n"
                                        "      - name: load-1\n"
                                        "        rounds: 3\n"
                                        "      - pause: node\n"
                                        "      - name: paused\n"
                                        "        duration: 5s\n"
                                        "      - unpause: node\n"
                                        "      - stop: load\n"
                                        "      - name: tail.end_2\n"
                                        "        duration: 10s\n" GROUPS;

static void
t_example(void)
{
    struct err err;
    struct composition *c = load("c.yaml", example, &err);
    const struct composition_stage *s;

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    CHECK_EQ_INT(c->nstages, 8);
    s = c->stages;
    CHECK_EQ_INT(s[0].kind, STAGE_RUN);
    CHECK_EQ_STR(s[0].name, "warm");
    CHECK_EQ_INT(s[0].duration_ns, 30 * SEC);
    CHECK_EQ_INT(s[0].rounds, 0);
    CHECK_CONTAINS(s[0].at, "comps/c.yaml:6:9: global.run_config.stages[0]");
    CHECK_EQ_INT(s[1].kind, STAGE_RESTART);
    CHECK(s[1].name == NULL);
    CHECK_EQ_INT(s[1].group, 0);
    CHECK_EQ_INT(s[1].grace_ns, 5 * SEC);
    CHECK_CONTAINS(s[1].at, "comps/c.yaml:8:9: global.run_config.stages[1]");
    CHECK_EQ_STR(s[2].name, "load-1");
    CHECK_EQ_INT(s[2].duration_ns, 0);
    CHECK_EQ_INT(s[2].rounds, 3);
    CHECK_EQ_INT(s[3].kind, STAGE_PAUSE);
    CHECK_EQ_INT(s[3].group, 0);
    CHECK_EQ_INT(s[3].grace_ns, 0);
    CHECK_EQ_INT(s[5].kind, STAGE_UNPAUSE);
    CHECK_EQ_INT(s[6].kind, STAGE_STOP);
    CHECK_EQ_INT(s[6].group, 1);
    CHECK_EQ_INT(s[6].grace_ns, COMPOSITION_STAGE_GRACE_NS);
    CHECK_EQ_STR(s[7].name, "tail.end_2");
    CHECK_EQ_INT(s[7].duration_ns, 10 * SEC);
    CHECK_CONTAINS(s[7].at, "c.yaml:17:9: global.run_config.stages[7]");
    composition_destroy(&c);
    CHECK(c == NULL);
}

/* Actions first and last, grace 0, a restart again after an unpause,
 * durations that fill the timeout exactly; no stages at all. */
static void
t_edges(void)
{
    struct err err;
    struct composition *c = load("c.yaml",
                                 "global:\n"
                                 "  runner: local:exec\n"
                                 "  run: {command: /bin/true}\n"
                                 "  run_config:\n"
                                 "    timeout: 1m\n"
                                 "    stages:\n"
                                 "      - {restart: node, grace: 0s}\n"
                                 "      - {pause: node}\n"
                                 "      - {name: a, duration: 20s}\n"
                                 "      - {unpause: node}\n"
                                 "      - {restart: node}\n"
                                 "      - {name: b, rounds: 1000000000}\n"
                                 "      - {name: c, duration: 40s}\n"
                                 "      - {stop: node, grace: 1m}\n"
                                 "      - {stop: load}\n" GROUPS,
                                 &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_INT(c->nstages, 9);
        CHECK_EQ_INT(c->stages[0].kind, STAGE_RESTART);
        CHECK_EQ_INT(c->stages[0].grace_ns, 0);
        CHECK_EQ_INT(c->stages[5].rounds, 1000000000);
        CHECK_EQ_INT(c->stages[7].grace_ns, 60 * SEC);
        CHECK_EQ_INT(c->stages[8].kind, STAGE_STOP);
        CHECK_EQ_INT(c->stages[8].group, 1);
    }
    composition_destroy(&c);
    c = load("c.yaml",
             "global: {runner: local:exec, run: {command: /bin/true}}\n" GROUPS,
             &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(c->stages == NULL);
        CHECK_EQ_INT(c->nstages, 0);
        CHECK_EQ_INT(c->groups[0].ready.tcp, 0);
        CHECK(c->groups[0].ready.command == NULL);
    }
    composition_destroy(&c);
}

/* global.run.ready for every group; a group's replaces it whole (its own
 * defaults, not global's interval), off takes it away. */
static void
t_ready(void)
{
    struct err err;
    struct composition *c = load(
        "c.yaml",
        "global:\n"
        "  runner: local:exec\n"
        "  run: {command: /bin/true,\n"
        "        ready: {tcp: 7000, interval: 250ms, timeout: 2m}}\n"
        "groups:\n"
        "  - {id: inherits, instances: {count: 1}}\n"
        "  - id: own\n"
        "    instances: {count: 1}\n"
        "    run: {ready: {command: [pg_isready, -q, \"a b\"]}}\n"
        "  - {id: none, instances: {count: 1}, run: {ready: off}}\n"
        "  - {id: top, instances: {count: 1}, run: {ready: {tcp: 65535}}}\n",
        &err);
    const struct composition_ready *r;

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    r = &c->groups[0].ready;
    CHECK_EQ_INT(r->tcp, 7000);
    CHECK(r->command == NULL);
    CHECK_EQ_INT(r->interval_ns, 250000000);
    CHECK_EQ_INT(r->timeout_ns, 120 * SEC);
    r = &c->groups[1].ready;
    CHECK_EQ_INT(r->tcp, 0);
    CHECK(r->command != NULL);
    if (r->command != NULL) {
        CHECK_EQ_STR(r->command[0], "pg_isready");
        CHECK_EQ_STR(r->command[1], "-q");
        CHECK_EQ_STR(r->command[2], "a b");
        CHECK(r->command[3] == NULL);
    }
    CHECK_EQ_INT(r->interval_ns, COMPOSITION_READY_INTERVAL_NS);
    CHECK_EQ_INT(r->timeout_ns, COMPOSITION_READY_TIMEOUT_NS);
    r = &c->groups[2].ready;
    CHECK(r->tcp == 0 && r->command == NULL);
    CHECK_EQ_INT(c->groups[3].ready.tcp, 65535);
    composition_destroy(&c);
}

/* A group that runs the plan may have run.ready too. */
static void
t_ready_plan_group(void)
{
    struct err err;
    struct composition *c =
        load("c.yaml",
             "global: {plan: ms, case: solo, runner: local:exec}\n"
             "groups:\n"
             "  - {id: node, instances: {count: 1}, run: {ready: {tcp: 80}}}\n",
             &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(!composition_group_blackbox(&c->groups[0]));
        CHECK_EQ_INT(c->groups[0].ready.tcp, 80);
    }
    composition_destroy(&c);
}

static char *
json_of(const char *name, const char *text)
{
    return comp_fixture_json(manifest, name, text);
}

static const char *const small_yaml =
    HEAD "      - {name: warm, duration: 1m30s}\n"
         "      - {restart: node}\n"
         "      - {pause: load}\n"
         "      - {name: load-1, rounds: 3}\n"
         "      - {unpause: load}\n"
         "      - {stop: load, grace: 2s}\n"
         "groups:\n"
         "  - id: node\n"
         "    instances: {count: 1}\n"
         "    run: {ready: {tcp: 7000, interval: 1s}}\n"
         "  - id: load\n"
         "    instances: {count: 1}\n"
         "    run: {ready: {command: [check, -q], timeout: 5s}}\n";

static const char *const small_json =
    "{\"global\": {\"runner\": \"local:exec\",\n"
    "  \"run\": {\"command\": \"/bin/true\"},\n"
    "  \"run_config\": {\"stages\": [\n"
    "    {\"name\": \"warm\", \"duration\": \"1m30s\"},\n"
    "    {\"restart\": \"node\"},\n"
    "    {\"pause\": \"load\"},\n"
    "    {\"name\": \"load-1\", \"rounds\": 3},\n"
    "    {\"unpause\": \"load\"},\n"
    "    {\"stop\": \"load\", \"grace\": \"2s\"}]}},\n"
    " \"groups\": [\n"
    "  {\"id\": \"node\", \"instances\": {\"count\": 1},\n"
    "   \"run\": {\"ready\": {\"tcp\": 7000, \"interval\": \"1s\"}}},\n"
    "  {\"id\": \"load\", \"instances\": {\"count\": 1},\n"
    "   \"run\": {\"ready\": {\"command\": [\"check\", \"-q\"],"
    " \"timeout\": \"5s\"}}}]}\n";

static void
t_json(void)
{
    char *y = json_of("s.yaml", small_yaml);
    char *j = json_of("s.json", small_json);
    char *none = json_of("n.yaml", "global: {runner: local:exec, run: "
                                   "{command: /bin/true}}\n" GROUPS);

    CHECK_EQ_STR(j, y);
    CHECK_CONTAINS(
        y, "\"heap_peak_bytes\":33554432},\"stages\":["
           "{\"stage\":\"warm\",\"duration_ns\":90000000000,\"rounds\":null},"
           "{\"action\":\"restart\",\"group\":\"node\","
           "\"grace_ns\":10000000000},"
           "{\"action\":\"pause\",\"group\":\"load\",\"grace_ns\":null},"
           "{\"stage\":\"load-1\",\"duration_ns\":null,\"rounds\":3},"
           "{\"action\":\"unpause\",\"group\":\"load\",\"grace_ns\":null},"
           "{\"action\":\"stop\",\"group\":\"load\",\"grace_ns\":2000000000}"
           "],\"groups\":[");
    CHECK_CONTAINS(y, "\"disk\":[],\"ready\":{\"tcp\":7000,\"command\":null,"
                      "\"interval_ns\":1000000000,\"timeout_ns\":"
                      "60000000000},\"command\":[\"/bin/true\"]");
    CHECK_CONTAINS(y, "\"ready\":{\"tcp\":null,\"command\":[\"check\",\"-q\"],"
                      "\"interval_ns\":100000000,\"timeout_ns\":5000000000}");
    /* Without stages or ready, the JSON is as it was. */
    CHECK(strstr(none, "\"stages\"") == NULL);
    CHECK(strstr(none, "\"ready\"") == NULL);
    CHECK_CONTAINS(none, "\"heap_peak_bytes\":33554432},\"groups\":[");
    free(y);
    free(j);
    free(none);
}

static const struct {
    const char *text;
    const char *msg;
} stage_errors[] = {
    {HEAD "      - {name: warm, duraton: 30s}\n" GROUPS,
     "c.yaml:6:22: global.run_config.stages[0].duraton: unknown key; did "
     "you mean \"duration\"?"},
    {HEAD "      - {name: warm, duration: 30s, rounds: 2}\n" GROUPS,
     "c.yaml:6:9: global.run_config.stages[0]: expected exactly one of "
     "duration or rounds, got both"},
    {HEAD "      - {name: warm}\n" GROUPS,
     "c.yaml:6:9: global.run_config.stages[0]: expected exactly one of "
     "duration or rounds, got neither"},
    {HEAD "      - {name: warm, duration: 1s}\n"
          "      - {name: warm, rounds: 1}\n" GROUPS,
     "c.yaml:7:16: global.run_config.stages[1].name: duplicate stage name "
     "\"warm\" (first at line 6)"},
    {HEAD "      - {name: Warm-Up, duration: 1s}\n" GROUPS,
     "c.yaml:6:16: global.run_config.stages[0].name: expected a stage name "
     "of lowercase letters, digits, '_', '.' and '-' (starting with a "
     "letter or digit, at most 64), got \"Warm-Up\""},
    {HEAD "      - {name: -a, duration: 1s}\n" GROUPS,
     "c.yaml:6:16: global.run_config.stages[0].name: expected a stage name "
     "of lowercase letters, digits, '_', '.' and '-' (starting with a "
     "letter or digit, at most 64), got \"-a\""},
    {HEAD "      - {duration: 1s}\n" GROUPS,
     "c.yaml:6:9: global.run_config.stages[0]: missing required key "
     "\"name\""},
    {HEAD "      - {name: a, duration: 0s}\n" GROUPS,
     "c.yaml:6:29: global.run_config.stages[0].duration: expected a "
     "duration above 0, got 0s"},
    {HEAD "      - {name: a, rounds: 0}\n" GROUPS,
     "c.yaml:6:27: global.run_config.stages[0].rounds: expected an integer "
     "from 1 to 1000000000, got 0"},
    {HEAD "      - {name: a, duration: 1s}\n"
          "      - {restart: nod}\n" GROUPS,
     "c.yaml:7:19: global.run_config.stages[1].restart: expected the id of "
     "a group (node, load), got \"nod\"; did you mean \"node\"?"},
    {HEAD "      - {name: a, duration: 1s}\n"
          "      - {stop: }\n" GROUPS,
     "c.yaml:7:16: global.run_config.stages[1].stop: expected the id of a "
     "group (node, load), got nothing"},
    {HEAD "      - {name: a, duration: 1s}\n"
          "      - {pause: node, grace: 1s}\n" GROUPS,
     "c.yaml:7:23: global.run_config.stages[1].grace: pause has no grace; "
     "only restart and stop have one (from SIGTERM to SIGKILL)"},
    {HEAD "      - {name: a, duration: 1s, grace: 1s}\n" GROUPS,
     "c.yaml:6:33: global.run_config.stages[0].grace: a stage has no "
     "grace; only restart and stop have one (from SIGTERM to SIGKILL)"},
    {HEAD "      - {restart: node, grace: soon}\n"
          "      - {name: a, duration: 1s}\n" GROUPS,
     "c.yaml:6:32: global.run_config.stages[0].grace: "},
    {HEAD "      - {pause: node}\n"
          "      - {name: a, duration: 1s}\n"
          "      - {pause: node}\n" GROUPS,
     "c.yaml:8:17: global.run_config.stages[2].pause: expected a running "
     "group; \"node\" is paused since global.run_config.stages[0] (line 6); "
     "unpause it first"},
    {HEAD "      - {pause: node}\n"
          "      - {name: a, duration: 1s}\n"
          "      - {restart: node}\n" GROUPS,
     "c.yaml:8:19: global.run_config.stages[2].restart: expected a running "
     "group; \"node\" is paused since global.run_config.stages[0] (line 6); "
     "unpause it first"},
    {HEAD "      - {unpause: node}\n"
          "      - {name: a, duration: 1s}\n" GROUPS,
     "c.yaml:6:19: global.run_config.stages[0].unpause: expected a paused "
     "group; \"node\" is not paused (pause it first)"},
    {HEAD "      - {stop: node}\n"
          "      - {name: a, duration: 1s}\n"
          "      - {restart: node}\n" GROUPS,
     "c.yaml:8:19: global.run_config.stages[2].restart: expected a group "
     "that still runs; \"node\" was stopped for good at "
     "global.run_config.stages[0] (line 6)"},
    {HEAD "      - {name: a, duration: 1s}\n"
          "      - {stop: load}\n"
          "      - {unpause: load}\n" GROUPS,
     "c.yaml:8:19: global.run_config.stages[2].unpause: expected a group "
     "that still runs; \"load\" was stopped for good at "
     "global.run_config.stages[1] (line 7)"},
    {HEAD "      - {restart: node}\n"
          "      - {stop: load}\n" GROUPS,
     "c.yaml:6:7: global.run_config.stages: expected at least one stage "
     "({name, duration or rounds}), got only actions"},
    {HEAD "      - {restart: node, duration: 1s}\n" GROUPS,
     "c.yaml:6:25: global.run_config.stages[0].duration: restart has no "
     "duration; a stage ({name, duration or rounds}) is an entry of its "
     "own"},
    {HEAD "      - {restart: node, stop: node}\n" GROUPS,
     "c.yaml:6:9: global.run_config.stages[0]: expected one action "
     "(restart, pause, unpause or stop), got both restart and stop"},
    {HEAD "      - {}\n" GROUPS,
     "c.yaml:6:9: global.run_config.stages[0]: expected a stage {name, "
     "duration or rounds} or an action {restart, pause, unpause or stop: "
     "GROUP}, got an empty mapping"},
    {HEAD "      - warm\n" GROUPS,
     "c.yaml:6:9: global.run_config.stages[0]: expected a stage {name, "
     "duration or rounds} or an action {restart, pause, unpause or stop: "
     "GROUP}, got \"warm\""},
    {"global:\n  runner: local:exec\n  run: {command: /bin/true}\n"
     "  run_config:\n    stages: []\n" GROUPS,
     "c.yaml:5:13: global.run_config.stages: expected at least one stage, "
     "got an empty list"},
    {"global:\n  runner: local:exec\n  run: {command: /bin/true}\n"
     "  run_config:\n    stages: {name: a, duration: 1s}\n" GROUPS,
     "c.yaml:5:13: global.run_config.stages: expected a list, got a "
     "mapping"},
    {"global:\n  runner: local:exec\n  run: {command: /bin/true}\n"
     "  run_config:\n    stagse: []\n" GROUPS,
     "c.yaml:5:5: global.run_config.stagse: unknown key; did you mean "
     "\"stages\"?"},
    {"global:\n  runner: local:exec\n  run: {command: /bin/true}\n"
     "  run_config:\n    timeout: 1m\n    stages:\n"
     "      - {name: a, duration: 30s}\n"
     "      - {restart: node}\n"
     "      - {name: b, duration: 31s}\n" GROUPS,
     "c.yaml:7:7: global.run_config.stages: expected durations that add up "
     "to at most global.run_config.timeout (60.0 s), got 61.0 s"},
    {HEAD "      - {name: a, duration: 6m}\n"
          "      - {name: b, rounds: 5}\n"
          "      - {name: c, duration: 5m}\n" GROUPS,
     "c.yaml:6:7: global.run_config.stages: expected durations that add up "
     "to at most global.run_config.timeout (10m00s, the default), got "
     "11m00s"},
};

static void
t_stage_errors(void)
{
    for (size_t i = 0; i < ARRAY_LEN(stage_errors); i++) {
        struct err err;
        struct composition *c = load("c.yaml", stage_errors[i].text, &err);
        const char *msg = strstr(err.msg, "comps/");
        const char *want = stage_errors[i].msg;
        size_t n = strlen(want);
        /* A message ending in ": " is checked up to there: its rest is
         * the duration parser's. */
        bool prefix = n > 2 && strcmp(want + n - 2, ": ") == 0;

        CHECK_MSG(c == NULL, "case %zu accepted", i);
        composition_destroy(&c);
        CHECK_EQ_INT(err.status, EXIT_DATAERR);
        msg = msg ? msg + strlen("comps/") : "";
        CHECK_MSG(prefix ? strncmp(msg, want, n) == 0 : strcmp(msg, want) == 0,
                  "case %zu: want \"%s\", got \"%s\"", i, want, err.msg);
    }
}

/* A group whose run.ready is line 8's, from column 7. */
#define READY_HEAD                                                             \
    "global:\n"                                                                \
    "  runner: local:exec\n"                                                   \
    "  run: {command: /bin/true}\n"                                            \
    "groups:\n"                                                                \
    "  - id: node\n"                                                           \
    "    instances: {count: 1}\n"                                              \
    "    run:\n"

static void
t_ready_errors(void)
{
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {READY_HEAD "      ready: {tcp: 0}\n",
         "c.yaml:8:20: groups[0].run.ready.tcp: expected an integer from 1 "
         "to 65535, got 0"},
        {READY_HEAD "      ready: {tcp: 70000}\n",
         "c.yaml:8:20: groups[0].run.ready.tcp: expected an integer from 1 "
         "to 65535, got 70000"},
        {READY_HEAD "      ready: {tcp: \"7000\"}\n",
         "c.yaml:8:20: groups[0].run.ready.tcp: expected an integer from 1 "
         "to 65535, got the string \"7000\"; remove the quotes"},
        {READY_HEAD "      ready: {tcp: http}\n",
         "c.yaml:8:20: groups[0].run.ready.tcp: expected an integer from 1 "
         "to 65535, got \"http\""},
        {READY_HEAD "      ready: {command: []}\n",
         "c.yaml:8:24: groups[0].run.ready.command: expected a non-empty "
         "list of strings (the probe and its arguments, such as "
         "[pg_isready, -q]), got an empty list"},
        {READY_HEAD "      ready: {command: pg_isready -q}\n",
         "c.yaml:8:24: groups[0].run.ready.command: expected a non-empty "
         "list of strings (the probe and its arguments, such as "
         "[pg_isready, -q]), got \"pg_isready -q\""},
        {READY_HEAD "      ready: {command: [pg_isready, \"\"]}\n",
         "c.yaml:8:37: groups[0].run.ready.command[1]: expected a non-empty "
         "string (one word of the probe; no shell splits it), got \"\""},
        {READY_HEAD "      ready: {tcp: 1, command: [x]}\n",
         "c.yaml:8:14: groups[0].run.ready: expected exactly one of tcp or "
         "command, got both"},
        {READY_HEAD "      ready: {interval: 1s}\n",
         "c.yaml:8:14: groups[0].run.ready: expected exactly one of tcp or "
         "command, got neither"},
        {READY_HEAD "      ready: {tcp: 1, intervall: 1s}\n",
         "c.yaml:8:23: groups[0].run.ready.intervall: unknown key; did you "
         "mean \"interval\"?"},
        {READY_HEAD "      ready: {tcp: 1, interval: 1ms}\n",
         "c.yaml:8:33: groups[0].run.ready.interval: expected a duration of "
         "at least 10ms, got 1ms"},
        {READY_HEAD "      ready: {tcp: 1, timeout: 0s}\n",
         "c.yaml:8:32: groups[0].run.ready.timeout: expected a duration "
         "above 0, got 0s"},
        {READY_HEAD "      ready: 7000\n",
         "c.yaml:8:14: groups[0].run.ready: expected a mapping ({tcp: PORT} "
         "or {command: [probe, arg...]}, with interval and timeout), or off, "
         "got 7000"},
        {"global:\n"
         "  runner: local:exec\n"
         "  run: {command: /bin/true, ready: {tcp: 99999}}\n"
         "groups: [{id: node, instances: {count: 1}}]\n",
         "c.yaml:3:42: global.run.ready.tcp: expected an integer from 1 to "
         "65535, got 99999"},
        {"global:\n"
         "  runner: local:exec\n"
         "  run: {command: /bin/true, raedy: {tcp: 1}}\n"
         "groups: [{id: node, instances: {count: 1}}]\n",
         "c.yaml:3:29: global.run.raedy: unknown key; did you mean "
         "\"ready\"?"},
    };

    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        check_fails("c.yaml", bad[i].text, bad[i].msg);
}

/* JSON compositions: the same rules, JSON's own positions. */
static void
t_json_errors(void)
{
    check_fails("e.json",
                "{\"global\": {\"runner\": \"local:exec\",\n"
                "  \"run\": {\"command\": \"/bin/true\"},\n"
                "  \"run_config\": {\"stages\": [\n"
                "    {\"name\": \"a\", \"duration\": \"1s\"},\n"
                "    {\"unpause\": \"node\"}]}},\n"
                " \"groups\": [{\"id\": \"node\", \"instances\": "
                "{\"count\": 1}}]}\n",
                "e.json:5:17: global.run_config.stages[1].unpause: expected "
                "a paused group; \"node\" is not paused (pause it first)");
    check_fails("e.json",
                "{\"global\": {\"runner\": \"local:exec\",\n"
                "  \"run\": {\"command\": \"/bin/true\"},\n"
                "  \"run_config\": {\"stages\": [\n"
                "    {\"name\": \"a\", \"duration\": \"1s\", \"rounds\": 1}"
                "]}},\n"
                " \"groups\": [{\"id\": \"node\", \"instances\": "
                "{\"count\": 1},\n"
                "   \"run\": {\"ready\": {\"tcp\": 1}}}]}\n",
                "e.json:4:5: global.run_config.stages[0]: expected exactly "
                "one of duration or rounds, got both");
    check_fails("e.json",
                "{\"global\": {\"runner\": \"local:exec\",\n"
                "  \"run\": {\"command\": \"/bin/true\"}},\n"
                " \"groups\": [{\"id\": \"node\", \"instances\": "
                "{\"count\": 1},\n"
                "   \"run\": {\"ready\": {\"tcp\": 7000, \"command\": "
                "[\"x\"]}}}]}\n",
                "e.json:4:21: groups[0].run.ready: expected exactly one of "
                "tcp or command, got both");
}

static const struct th_case cases[] = {
    {"example", t_example},
    {"edges", t_edges},
    {"ready", t_ready},
    {"ready_plan_group", t_ready_plan_group},
    {"json", t_json},
    {"stage_errors", t_stage_errors},
    {"ready_errors", t_ready_errors},
    {"json_errors", t_json_errors},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
