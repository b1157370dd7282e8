/*
 * test_composition.c — loading compositions against a manifest: the
 * resolved struct the orchestrator consumes, percentages, defaults, the
 * JSON form, and the one-line errors. Runners come from the backends'
 * registry, as in testyard itself, or from a list of the test's own.
 */
#include "backend/backend.h"
#include "comp_fixture.h"
#include "config/config.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const manifest =
    "name: ms\n"
    "build: {sources: [main.c]}\n"
    "params:\n"
    "  size: {type: size, default: 64MB}\n"
    "  concurrency: {type: int, default: 4}\n"
    "  snapshots: {type: enum, values: [none, simple, detailed], "
    "default: none}\n"
    "  latencies: {type: array, items: duration, default: [0ms]}\n"
    "cases:\n"
    "  - name: stress\n"
    "    instances: {min: 2, max: 100}\n"
    "    groups: [providers, requestors]\n"
    "  - name: solo\n"
    "    instances: {min: 1, max: 1}\n"
    "    params: {seed: {type: int}}\n";

/* Load text as comps/<name> next to plans/ms with opts (the registry's
 * runners when opts->runners is NULL). */
static struct composition *
load_opts(const char *name, const char *text, struct composition_opts o,
          struct err *err)
{
    return comp_fixture_load(manifest, name, text, o, err);
}

static struct composition *
load(const char *name, const char *text, struct err *err)
{
    return load_opts(name, text, (struct composition_opts){0}, err);
}

/* load() with a runner that replaces the composition's (run --runner). */
static struct composition *
load_on(const char *name, const char *text, const char *runner, struct err *err)
{
    return load_opts(name, text, (struct composition_opts){.runner = runner},
                     err);
}

static const char *const full =
    "metadata: {name: n1, author: me}\n"
    "global:\n"
    "  plan: ms\n"
    "  case: stress\n"
    "  runner: local:docker\n"
    "  total_instances: 4\n"
    "  run:\n"
    "    test_params: {size: 512MB, snapshots: simple}\n"
    "    profiles: {heap: 5s, heap_rate: 1Mi, heap_peak: off}\n"
    "    artifact: img:1\n"
    "  run_config: {timeout: 1h, keep_containers: true, network: bridge,\n"
    "               memory_sample_interval: 100ms,"
    " diagnostics_interval: 2s}\n"
    "groups:\n"
    "  - id: providers\n"
    "    instances: {count: 1}\n"
    "    resources: {memory: 2048Mi, cpu: 1500m}\n"
    "    run: {test_params: {concurrency: 8}, artifact: img:2}\n"
    "  - id: requestors\n"
    "    instances: {percentage: 0.75}\n"
    "    run: {test_params: {latencies: [1s, 2ms]}}\n";

static void
t_full(void)
{
    struct err err;
    struct composition *c = load("c.yaml", full, &err);
    const struct composition_group *g;

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    CHECK_EQ_STR(c->name, "n1");
    CHECK_EQ_STR(c->author, "me");
    CHECK(c->description == NULL);
    CHECK_EQ_STR(c->plan, "ms");
    CHECK_EQ_STR(c->case_name, "stress");
    CHECK_EQ_STR(c->runner, "local:docker");
    CHECK_EQ_INT(c->total_instances, 4);
    CHECK_EQ_INT(c->timeout_ns, 3600LL * 1000000000);
    CHECK(c->keep_containers);
    CHECK_EQ_STR(c->network, "bridge");
    CHECK_EQ_INT(c->memory_sample_ns, 100000000);
    CHECK_EQ_INT(c->diagnostics_ns, 2000000000);
    CHECK_EQ_INT(c->heap_profile_ns, 5000000000LL);
    CHECK_EQ_INT(c->heap_rate, 1 << 20);
    CHECK_EQ_INT(c->heap_peak, 0);
    CHECK(c->manifest != NULL && strcmp(c->manifest->name, "ms") == 0);
    CHECK(c->tcase != NULL && strcmp(c->tcase->name, "stress") == 0);
    CHECK_CONTAINS(c->plan_dir, "/plans/ms");
    CHECK(strstr(c->plan_dir, "..") == NULL);
    CHECK_EQ_INT(c->ngroups, 2);
    g = &c->groups[0];
    CHECK_EQ_STR(g->id, "providers");
    CHECK_EQ_INT(g->instances, 1);
    CHECK_EQ_INT(g->memory_bytes, 2048ULL << 20);
    CHECK_EQ_INT(g->millicpu, 1500);
    CHECK_EQ_STR(g->artifact, "img:2");
    CHECK_EQ_INT(cJSON_GetObjectItem(g->params, "concurrency")->valuedouble, 8);
    CHECK_EQ_STR(cJSON_GetObjectItem(g->params, "size")->valuestring, "512MB");
    CHECK_EQ_STR(cJSON_GetObjectItem(g->params, "snapshots")->valuestring,
                 "simple");
    g = &c->groups[1];
    CHECK_EQ_INT(g->instances, 3);
    CHECK_EQ_INT(g->memory_bytes, 0);
    CHECK_EQ_INT(g->millicpu, 0);
    CHECK_EQ_STR(g->artifact, "img:1");
    CHECK_EQ_INT(cJSON_GetObjectItem(g->params, "concurrency")->valuedouble, 4);
    CHECK_EQ_INT(
        cJSON_GetArraySize(cJSON_GetObjectItem(g->params, "latencies")), 2);
    composition_destroy(&c);
    CHECK(c == NULL);
}

static void
t_defaults(void)
{
    struct err err;
    struct composition *c =
        load("small-one.yaml",
             "global: {plan: ms, case: solo, runner: local:exec,\n"
             "         run: {test_params: {seed: 1}}}\n"
             "groups: [{id: only, instances: {count: 1}}]\n",
             &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c == NULL)
        return;
    CHECK_EQ_STR(c->name, "small-one");
    CHECK(c->author == NULL);
    CHECK_EQ_INT(c->timeout_ns, COMPOSITION_TIMEOUT_NS);
    CHECK(!c->keep_containers);
    CHECK_EQ_STR(c->network, "host");
    CHECK_EQ_INT(c->memory_sample_ns, 250000000);
    CHECK_EQ_INT(c->diagnostics_ns, 5000000000LL);
    CHECK_EQ_INT(c->heap_profile_ns, 0);
    CHECK_EQ_INT(c->heap_rate, 512 * 1024);
    CHECK_EQ_INT(c->heap_peak, 32 << 20);
    CHECK_EQ_INT(c->total_instances, 1);
    CHECK(c->groups[0].artifact == NULL);
    CHECK_EQ_INT(cJSON_GetObjectItem(c->groups[0].params, "seed")->valueint, 1);
    composition_destroy(&c);
}

static void
t_percentages(void)
{
    struct err err;
    struct composition *c =
        load("p.yaml",
             "global: {plan: ms, case: stress, runner: local:docker,"
             " total_instances: 10}\n"
             "groups:\n"
             "  - {id: providers, instances: {percentage: 0.25}}\n"
             "  - {id: requestors, instances: {percentage: 75%}}\n",
             &err);

    /* 2.5 rounds up to 3, 7.5 to 8: 11, not 10. */
    CHECK(c == NULL);
    CHECK_CONTAINS(err.msg, "global.total_instances: expected the sum of "
                            "the groups' instances (providers 3 (0.25 of "
                            "10) + requestors 8 (75% of 10) = 11), got 10");
    c = load("p.yaml",
             "global: {plan: ms, case: stress, runner: local:docker,"
             " total_instances: 8}\n"
             "groups:\n"
             "  - {id: providers, instances: {percentage: 0.125}}\n"
             "  - {id: requestors, instances: {percentage: \"87.5%\"}}\n",
             &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_INT(c->groups[0].instances, 1);
        CHECK_EQ_INT(c->groups[1].instances, 7);
    }
    composition_destroy(&c);
}

/* The JSON of a loaded composition without its file name. */
static char *
json_of(const char *name, const char *text)
{
    return comp_fixture_json(manifest, name, text);
}

static void
t_yaml_json_same(void)
{
    char *y = json_of("same.yaml", full);
    char *j = json_of(
        "same.json",
        "{\"metadata\": {\"name\": \"n1\", \"author\": \"me\"},\n"
        " \"global\": {\"plan\": \"ms\", \"case\": \"stress\",\n"
        "   \"runner\": \"local:docker\", \"total_instances\": 4,\n"
        "   \"run\": {\"test_params\": {\"size\": \"512MB\", \"snapshots\":"
        " \"simple\"},\n"
        "     \"profiles\": {\"heap\": \"5s\", \"heap_rate\": \"1Mi\","
        " \"heap_peak\": \"off\"},"
        " \"artifact\": \"img:1\"},\n"
        "   \"run_config\": {\"timeout\": \"1h\", \"keep_containers\": true,"
        " \"network\": \"bridge\", \"memory_sample_interval\": \"100ms\","
        " \"diagnostics_interval\": \"2s\"}},\n"
        " \"groups\": [\n"
        "  {\"id\": \"providers\", \"instances\": {\"count\": 1},\n"
        "   \"resources\": {\"memory\": \"2048Mi\", \"cpu\": \"1500m\"},\n"
        "   \"run\": {\"test_params\": {\"concurrency\": 8}, \"artifact\":"
        " \"img:2\"}},\n"
        "  {\"id\": \"requestors\", \"instances\": {\"percentage\": 0.75},\n"
        "   \"run\": {\"test_params\": {\"latencies\": [\"1s\", "
        "\"2ms\"]}}}]}\n");

    CHECK_EQ_STR(j, y);
    CHECK_CONTAINS(y, "{\"name\":\"n1\",\"author\":\"me\",\"description\":"
                      "null,\"plan\":\"ms\",\"plan_dir\":");
    CHECK_CONTAINS(
        y,
        "\"groups\":[{\"id\":\"providers\",\"instances\":1,"
        "\"resources\":{\"memory_bytes\":2147483648,"
        "\"millicpus\":1500,\"cpus\":1.5},"
        "\"log_limit_bytes\":67108864,"
        "\"output_quota_bytes\":1073741824,\"artifact\":"
        "\"img:2\",\"root\":false,\"disk\":[],\"params\":{\"size\":\"512MB\","
        "\"concurrency\":8,");
    CHECK_CONTAINS(y, "\"run_config\":{\"timeout_ns\":3600000000000,");
    free(y);
    free(j);
}

static void
t_errors(void)
{
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"global: {plan: ms, case: stress, runner: local:docker}\n"
         "groups: [{id: providers, instances: {count: 1}}]\n",
         "e.yaml:2:9: groups: expected 2 to 100 instances in all for case "
         "\"stress\" of plan \"ms\", got 1"},
        {"global: {plan: ms, case: stress, runner: local:docker}\n"
         "groups: [{id: providers, instances: {count: 2},"
         " resources: {memroy: 1Gi}}]\n",
         "e.yaml:2:61: groups[0].resources.memroy: unknown key; did you "
         "mean \"memory\"?"},
        {"global: {plan: ms, case: stress, runner: local:docker}\n"
         "groups: [{id: provider, instances: {count: 2}}]\n",
         "e.yaml:2:15: groups[0].id: expected one of the groups case "
         "\"stress\" accepts (providers, requestors), got \"provider\"; did "
         "you mean \"providers\"?"},
        {"global: {plan: ms, case: stress, runner: local:docker,\n"
         "  run: {test_params: {snapshots: \"true\"}}}\n"
         "groups: [{id: providers, instances: {count: 2}}]\n",
         "e.yaml:2:34: global.run.test_params.snapshots: expected one of "
         "none, simple, detailed, got \"true\""},
        {"global: {plan: ms, case: solo, runner: local:exec}\n"
         "groups: [{id: a, instances: {count: 1}}]\n",
         "e.yaml:2:10: groups[0]: parameter \"seed\" has no default in the "
         "manifest; set it in global.run.test_params or in this group's "
         "run.test_params"},
        {"global: {plan: ms, case: stress, runner: local:docker}\n"
         "groups: [{id: providers, instances: {count: 2}},\n"
         "         {id: providers, instances: {count: 2}}]\n",
         "e.yaml:3:15: groups[1].id: duplicate group id \"providers\" "
         "(first at line 2)"},
        {"global: {plan: nope, case: stress, runner: local:docker}\n"
         "groups: [{id: providers, instances: {count: 2}}]\n",
         "e.yaml:1:16: global.plan: plan \"nope\" not found; looked for "
         "nope/manifest.yaml in "},
    };

    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct err err;
        struct composition *c = load("e.yaml", bad[i].text, &err);
        const char *msg = strstr(err.msg, "e.yaml");

        CHECK_MSG(c == NULL, "case %zu accepted", i);
        composition_destroy(&c);
        CHECK_EQ_INT(err.status, EXIT_DATAERR);
        CHECK_MSG(msg != NULL &&
                      strncmp(msg, bad[i].msg, strlen(bad[i].msg)) == 0,
                  "case %zu: %s", i, err.msg);
    }
}

static void
t_missing_file_and_opts(void)
{
    struct err err = {0};
    char *path = path_join(th_tmpdir(), "none.yaml");
    char *alt = NULL;
    struct composition_opts opts = {.runners = backend_runners()};
    struct composition *c = composition_load(path, &opts, &err);

    CHECK(c == NULL);
    CHECK_EQ_INT(err.status, EXIT_NOINPUT);
    free(path);
    /* A plans folder given in opts wins over <dir>/../plans. */
    free(
        th_write_tmp("elsewhere/ms/manifest.yaml",
                     "name: ms\nbuild: {sources: [a.c]}\n"
                     "cases: [{name: stress, instances: {min: 1, max: 1}}]\n"));
    alt = path_join(th_tmpdir(), "elsewhere");
    opts.plans_dir = alt;
    free(th_write_tmp("plans/ms/manifest.yaml", manifest));
    path = th_write_tmp("comps/o.yaml",
                        "global: {plan: ms, case: stress, runner: local:exec}\n"
                        "groups: [{id: anyone, instances: {count: 1}}]\n");
    c = composition_load(path, &opts, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_CONTAINS(c->plan_dir, "elsewhere/ms");
    composition_destroy(&c);
    free(path);
    free(alt);
}

/* The network default follows the runner, also one given by --runner. */
static void
t_network_default(void)
{
    static const char text[] =
        "global: {plan: ms, case: solo, runner: local:docker,\n"
        "         run: {test_params: {seed: 1}}}\n"
        "groups: [{id: only, instances: {count: 1}}]\n";
    struct err err;
    struct composition *c = load_on("net.yaml", text, NULL, &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL)
        CHECK_EQ_STR(c->network, "bridge");
    composition_destroy(&c);
    c = load_on("net.yaml", text, "local:exec", &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_STR(c->runner, "local:exec");
        CHECK_EQ_STR(c->network, "host");
    }
    composition_destroy(&c);
}

/* run.root: global < group, and refused where it cannot be honoured. */
static void
t_root_layering(void)
{
    static const char text[] =
        "global: {plan: ms, case: stress, runner: local:docker,\n"
        "         run: {root: true}}\n"
        "groups: [{id: providers, instances: {count: 1}},\n"
        "         {id: requestors, instances: {count: 1},\n"
        "          run: {root: false}}]\n";
    struct err err;
    struct composition *c = load_on("root.yaml", text, NULL, &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK(c->groups[0].root);
        CHECK(!c->groups[1].root);
    }
    composition_destroy(&c);
    c = load_on("root.yaml", text, "local:exec", &err);
    CHECK(c == NULL);
    CHECK_MSG(strstr(err.msg, "global.run.root: expected false with runner "
                              "local:exec") != NULL,
              "%s", err.msg);
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
}

/* A runner given to the loader (run --runner) meets the checks a
 * composition naming it meets, with the same message. */
static void
t_runner_flag_checked(void)
{
    static const char docker[] =
        "global: {plan: ms, case: solo, runner: local:docker,\n"
        "         run: {test_params: {seed: 1}},\n"
        "         run_config: {network: bridge}}\n"
        "groups: [{id: only, instances: {count: 1}}]\n";
    static const char exec[] =
        "global: {plan: ms, case: solo, runner: local:exec,\n"
        "         run: {test_params: {seed: 1}},\n"
        "         run_config: {network: bridge}}\n"
        "groups: [{id: only, instances: {count: 1}}]\n";
    struct err err;
    char named[ERR_MSG_MAX];
    struct composition *c = load_on("net.yaml", docker, NULL, &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    composition_destroy(&c);
    c = load("net.yaml", exec, &err);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.msg, "net.yaml:3:32: global.run_config.network: "
                            "expected host with runner local:exec "
                            "(instances run as host processes), got "
                            "\"bridge\"");
    snprintf(named, sizeof(named), "%s", err.msg);
    c = load_on("net.yaml", docker, "local:exec", &err);
    CHECK(c == NULL);
    CHECK_EQ_STR(err.msg, named);
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    c = load_on("net.yaml", docker, "local:dokcer", &err);
    CHECK(c == NULL);
    CHECK_EQ_INT(err.status, EXIT_USAGE);
    CHECK_CONTAINS(err.msg, "local:dokcer");
}

/* The loader knows the runners it is given and no others. */
static void
t_runner_list(void)
{
    static const struct composition_runner one = {.name = "x:one",
                                                  .no_bridge = "no net"};
    static const struct composition_runner two = {.name = "x:two",
                                                  .no_root = "no root"};
    static const struct composition_runner *const list[] = {&one, &two, NULL};
    const struct composition_opts o = {.runners = list};
    struct err err;
    struct composition *c =
        load_opts("l.yaml",
                  "global: {plan: ms, case: solo, runner: x:two,\n"
                  "         run: {test_params: {seed: 1}}}\n"
                  "groups: [{id: only, instances: {count: 1}}]\n",
                  o, &err);

    CHECK_MSG(c != NULL, "%s", err.msg);
    if (c != NULL) {
        CHECK_EQ_STR(c->runner, "x:two");
        CHECK_EQ_STR(c->network, "bridge");
    }
    composition_destroy(&c);
    c = load_opts("l.yaml",
                  "global: {plan: ms, case: solo, runner: local:exec}\n"
                  "groups: [{id: only, instances: {count: 1}}]\n",
                  o, &err);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.msg, "global.runner: expected one of x:one, x:two, "
                            "got \"local:exec\"");
    c = load_opts("l.yaml",
                  "global: {plan: ms, case: solo, runner: x:two,\n"
                  "         run: {test_params: {seed: 1}, root: true},\n"
                  "         run_config: {network: bridge}}\n"
                  "groups: [{id: only, instances: {count: 1}}]\n",
                  (struct composition_opts){.runners = list, .runner = "x:one"},
                  &err);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.msg, "global.run_config.network: expected host with "
                            "runner x:one (no net), got \"bridge\"");
}

static const struct th_case cases[] = {
    {"full", t_full},
    {"defaults", t_defaults},
    {"percentages", t_percentages},
    {"yaml_json_same", t_yaml_json_same},
    {"errors", t_errors},
    {"missing_file_and_opts", t_missing_file_and_opts},
    {"network_default", t_network_default},
    {"root_layering", t_root_layering},
    {"runner_flag_checked", t_runner_flag_checked},
    {"runner_list", t_runner_list},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
