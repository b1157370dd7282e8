/*
 * composition.h — a composition loaded, checked against its plan's
 * manifest and resolved: what the run orchestrator consumes.
 *
 * A composition (YAML, or JSON with the same structure; see
 * docs/compositions.md) names a plan, a test case and a runner, and lists
 * groups of instances with their counts or percentages, resources and
 * test parameters. composition_load() checks all of it — unknown keys,
 * types, sizes, durations, cpu amounts, percentages against
 * total_instances, the case's instance bounds and groups, every parameter
 * against its declaration — and resolves it: each group gets its instance
 * count, its limits in bytes and millicpus and its parameters layered as
 * manifest default < global < group.
 *
 * Ownership: a struct composition owns everything it points to, including
 * the manifest; pointers into it are borrowed until composition_destroy().
 */
#ifndef TY_COMPOSITION_H
#define TY_COMPOSITION_H

#include "err.h"
#include "manifest.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Defaults of global.run_config and global.run.profiles. */
#define COMPOSITION_TIMEOUT_NS (INT64_C(600) * 1000000000)    /* 10m */
#define COMPOSITION_MEMORY_SAMPLE_NS (INT64_C(250) * 1000000) /* 250ms */
#define COMPOSITION_DIAGNOSTICS_NS (INT64_C(5) * 1000000000)  /* 5s */
#define COMPOSITION_HEAP_RATE ((uint64_t)512 * 1024)          /* 512Ki */
/* Defaults of run.log_limit and run.output_quota (global or a group's). */
#define COMPOSITION_LOG_LIMIT ((uint64_t)64 << 20)    /* 64Mi */
#define COMPOSITION_OUTPUT_QUOTA ((uint64_t)1 << 30)  /* 1Gi */
#define COMPOSITION_MIN_LOG_LIMIT ((uint64_t)4 << 10) /* 4Ki */

struct composition_group {
    char *id;
    int64_t instances;     /* resolved count, >= 1 */
    uint64_t memory_bytes; /* hard limit; 0 = unlimited */
    int64_t millicpu;      /* CPU quota in millicpus; 0 = unlimited */
    cJSON *params;         /* resolved test parameters (an object) */
    char *artifact;        /* ready image / executable; NULL = build plan */
    bool root;             /* run.root: containers run as uid 0 */
    uint64_t log_limit;    /* bytes kept of each of stdout and stderr */
    uint64_t output_quota; /* bytes an instance may upload and append */
};

struct composition {
    char *path;        /* as given to composition_load */
    char *name;        /* metadata.name, else the file name sans extension */
    char *author;      /* NULL when not given */
    char *description; /* NULL when not given */
    char *plan;
    char *case_name;
    char *runner;            /* "local:exec" or "local:docker" */
    int64_t total_instances; /* sum of the groups' instances */
    int64_t timeout_ns;
    bool keep_containers;
    char *network; /* "host" or "bridge"; default bridge on local:docker */
    int64_t memory_sample_ns;
    int64_t diagnostics_ns;
    int64_t heap_profile_ns; /* 0 = no periodic heap profiles */
    uint64_t heap_rate;      /* mean bytes between heap samples */
    struct composition_group *groups;
    size_t ngroups;
    struct manifest *manifest;
    const struct manifest_case *tcase; /* the case in manifest */
    char *plan_dir;                    /* folder holding the manifest */
};

struct composition_opts {
    /* Searched first for the plan's folder; NULL = the TESTYARD_PLANS
     * environment variable, then the default search (manifest_locate). */
    const char *plans_dir;
    /* Replaces global.runner (testyard run --runner), before the defaults
     * that depend on it and the checks; NULL = the composition's. */
    const char *runner;
};

/* Load, check and resolve the composition at path (.json files are read
 * as JSON). opts may be NULL. On failure err holds one line
 * "FILE:LINE:COL: key.path: ..." and err->status EXIT_DATAERR (or
 * EXIT_NOINPUT when path cannot be read). Caller owns the result. */
struct composition *composition_load(const char *path,
                                     const struct composition_opts *opts,
                                     struct err *err);
void composition_destroy(struct composition **c);

/* The resolved composition as `testyard validate` prints it, keys in a
 * fixed order. Caller owns the result (cJSON_Delete). */
cJSON *composition_to_json(const struct composition *c);

#endif
