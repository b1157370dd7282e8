/*
 * config.h — what testyard reads before it runs anything: compositions and
 * plan manifests with their typed parameters.
 *
 * A composition loaded, checked against its plan's
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
 * manifest default < global < group. A group may run a program of its own
 * instead of the plan (run.command, run.image); the manifest checks only
 * the groups that run the plan, and a composition whose groups all run
 * their own needs no plan (see composition_group_blackbox()).
 *
 * Ownership: a struct composition owns everything it points to, including
 * the manifest; pointers into it are borrowed until composition_destroy().
 */
#ifndef TY_RUNNER_CONFIG_H
#define TY_RUNNER_CONFIG_H

#include "base/err.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Defaults of global.run_config and global.run.profiles. */
#define COMPOSITION_TIMEOUT_NS (INT64_C(600) * 1000000000)      /* 10m */
#define COMPOSITION_MEMORY_SAMPLE_NS (INT64_C(250) * 1000000)   /* 250ms */
#define COMPOSITION_DIAGNOSTICS_NS (INT64_C(5) * 1000000000)    /* 5s */
#define COMPOSITION_PROCESS_SAMPLE_NS (INT64_C(1) * 1000000000) /* 1s */
#define COMPOSITION_DISK_SAMPLE_NS (INT64_C(5) * 1000000000)    /* 5s */
/* The most paths a run.disk may name. */
#define COMPOSITION_MAX_DISK 16
#define COMPOSITION_HEAP_RATE ((uint64_t)512 * 1024) /* 512Ki */
#define COMPOSITION_PRE_OOM 0.9                      /* of the memory limit */
#define COMPOSITION_HEAP_PEAK ((uint64_t)32 << 20)   /* 32Mi */
/* Defaults of run.log_limit and run.output_quota (global or a group's). */
#define COMPOSITION_LOG_LIMIT ((uint64_t)64 << 20)    /* 64Mi */
#define COMPOSITION_OUTPUT_QUOTA ((uint64_t)1 << 30)  /* 1Gi */
#define COMPOSITION_MIN_LOG_LIMIT ((uint64_t)4 << 10) /* 4Ki */
/* Defaults of a stage action's grace and of run.ready. */
#define COMPOSITION_STAGE_GRACE_NS (INT64_C(10) * 1000000000)   /* 10s */
#define COMPOSITION_READY_INTERVAL_NS (INT64_C(100) * 1000000)  /* 100ms */
#define COMPOSITION_READY_TIMEOUT_NS (INT64_C(60) * 1000000000) /* 1m */
/* The most entries run_config.stages may hold. */
#define COMPOSITION_MAX_STAGES 256

/* What an entry of global.run_config.stages is (docs/long-runs.md). */
enum composition_stage_kind {
    STAGE_RUN = 0, /* a stage: {name, duration | rounds} */
    STAGE_RESTART, /* {restart: GROUP, grace}: stop, then start again */
    STAGE_PAUSE,   /* {pause: GROUP}: freeze its processes */
    STAGE_UNPAUSE, /* {unpause: GROUP} */
    STAGE_STOP,    /* {stop: GROUP, grace}: stop it for good */
};

struct composition_stage {
    enum composition_stage_kind kind;
    char *name;          /* STAGE_RUN: unique among the stages; else NULL */
    int64_t duration_ns; /* STAGE_RUN: > 0, or 0 when it counts rounds */
    int64_t rounds;      /* STAGE_RUN: > 0, or 0 when it has a duration */
    size_t group;        /* an action: its group, index into groups */
    int64_t grace_ns;    /* restart, stop: SIGTERM to SIGKILL */
    /* "FILE:LINE:COL: global.run_config.stages[i]", for errors found
     * while the run goes. */
    char *at;
};

/* run.ready (a group's, else global.run's): how the runner tells that an
 * instance is ready, after its start and after each restart. Without
 * one, an instance is ready when it calls ty_ready (the SDK), or, for a
 * black-box group, when the backend has started it. */
struct composition_ready {
    int tcp;             /* run.ready.tcp: a port (1..65535), 0 = none */
    char **command;      /* run.ready.command, NULL-terminated, or NULL:
                            run where the instance runs, ready on exit 0 */
    int64_t interval_ns; /* run.ready.interval: between probes */
    int64_t timeout_ns;  /* run.ready.timeout: not ready by then = failed */
};

struct composition_group {
    char *id;
    int64_t instances;     /* resolved count, >= 1 */
    uint64_t memory_bytes; /* hard limit; 0 = unlimited */
    int64_t millicpu;      /* CPU quota in millicpus; 0 = unlimited */
    cJSON *params;         /* resolved test parameters (an object) */
    char *artifact;        /* ready image / executable; NULL = build plan */
    /* A program instead of the plan (run.command, run.image; a group's or
     * global.run's). Either being set makes the group a black-box group:
     * it never runs the plan, and the plan's manifest says nothing about
     * it (no case groups, bounds or parameter checks). */
    /* run.command, NULL-terminated, or NULL. Without image: [0] is the
     * host program, resolved to an absolute path at load (PATH lookup
     * for a bare name, else relative to the composition's folder),
     * checked to be an executable regular file; local:docker packs it
     * with its libraries into an image. With image: as written, the
     * program inside the image (replaces its entrypoint and command). */
    char **command;
    char *image; /* run.image (local:docker only), or NULL */
    /* Where run.image (else run.command) was written, "FILE:LINE:COL:
     * groups[i].run.image" (or global.run.image), for errors found after
     * load (an image the engine does not have); NULL when neither. */
    char *program_at;
    char **args; /* run.args, NULL-terminated (never NULL: {NULL}) */
    /* run.env merged (global < group) as "KEY=value", NULL-terminated
     * (never NULL); merged over the instance environment, never naming
     * a variable testyard sets itself (TEST_*, SYNC_SERVICE_*, ...). */
    char **env;
    /* run.workdir, or NULL (local:exec: the instance's temp folder;
     * local:docker: the image's). local:exec: an absolute existing host
     * folder (a relative one is taken from the composition's folder);
     * local:docker: an absolute path in the container. */
    char *workdir;
    /* profiles.heap: preload (a group's run.profiles, else
     * global.run.profiles): the LD_PRELOAD heap profiler is loaded into
     * the group's program. Only black-box groups (a plan links it). */
    bool heap_preload;
    bool root;             /* run.root: containers run as uid 0 */
    uint64_t log_limit;    /* bytes kept of each of stdout and stderr */
    uint64_t output_quota; /* bytes an instance may upload and append */
    /* run.disk (a group's, else global.run's), NULL-terminated (never
     * NULL): paths whose disk usage is sampled into disk.csv, as
     * written: relative ones in the instance's outputs folder, absolute
     * ones in its file system. No ".." component. */
    char **disk;
    /* run.ready; ready.tcp == 0 && ready.command == NULL: none. Never
     * both: one probe says how the instance became ready. */
    struct composition_ready ready;
};

struct composition {
    char *path;        /* as given to composition_load */
    char *name;        /* metadata.name, else the file name sans extension */
    char *author;      /* NULL when not given */
    char *description; /* NULL when not given */
    /* NULL when the composition names no plan: then every group is a
     * black-box group, and manifest, tcase and plan_dir are NULL too. */
    char *plan;
    char *case_name;         /* NULL without a plan and global.case */
    char *runner;            /* one of composition_opts.runners */
    int64_t total_instances; /* sum of the groups' instances */
    int64_t timeout_ns;
    bool keep_containers;
    char *network; /* "host" or "bridge"; default bridge where possible */
    int64_t memory_sample_ns;
    int64_t diagnostics_ns;
    int64_t process_sample_ns; /* processes.csv; 0 = off */
    int64_t disk_sample_ns;    /* disk.csv */
    /* run_config.pre_oom_snapshot: the fraction of its memory limit at
     * which an instance is asked for a heap snapshot; 0 = off. */
    double pre_oom;
    int64_t heap_profile_ns; /* 0 = no periodic heap profiles */
    uint64_t heap_rate;      /* mean bytes between heap samples */
    uint64_t heap_peak;      /* heap growth between peak snapshots; 0 off */
    /* run_config.stages, in order (NULL, 0: the run is one stage, ended
     * by its instances or its timeout). Holds at least one STAGE_RUN; an
     * action never names a group twice in a way that cannot be (unpause
     * without pause; pause, restart or stop of a paused group; anything
     * after stop). The durations add up to at most timeout_ns. */
    struct composition_stage *stages;
    size_t nstages;
    struct composition_group *groups;
    size_t ngroups;
    struct manifest *manifest;
    const struct manifest_case *tcase; /* the case in manifest */
    char *plan_dir;                    /* folder holding the manifest */
};

/* A runner as the loader sees it: its name and what it cannot do, so
 * that a composition asking for it is refused. The list comes from the
 * backends' registry (backend_runners() in backend/backend.h): config/
 * sits below backend/ and names no backend itself. */
struct composition_runner {
    const char *name; /* "local:exec" */
    /* Why a run cannot have its own bridge network, or NULL when it can
     * (run_config.network is then bridge by default, else host). */
    const char *no_bridge;
    /* Why instances cannot run as uid 0 (run.root), or NULL. */
    const char *no_root;
    /* Why instances cannot run an image (run.image), or NULL. A runner
     * without images runs host programs: run.workdir is then a host
     * folder, otherwise a path in the container. */
    const char *no_image;
};

struct composition_opts {
    /* Searched first for the plan's folder; NULL = the TESTYARD_PLANS
     * environment variable, then the default search (manifest_locate). */
    const char *plans_dir;
    /* The runners there are, NULL-terminated, in the order messages name
     * them: backend_runners(). Required; borrowed. */
    const struct composition_runner *const *runners;
    /* Replaces global.runner (--runner of run and validate), before the
     * defaults that depend on it and every check; NULL = the
     * composition's. Must be one of runners (EXIT_USAGE otherwise). */
    const char *runner;
    /* The folder relative paths in the composition are taken from
     * (run.command with a '/', run.workdir, the plan search's
     * <folder>/../plans); NULL = the composition file's own folder. Set
     * when the file is a copy of one written elsewhere (a task of the
     * daemon runs the snapshot taken at submit from the folder it was
     * submitted from: `run --origin DIR`). */
    const char *base_dir;
};

/* The folder relative paths in c are taken from: opts->base_dir, else
 * the folder of c->path. Caller owns the result. */
char *composition_base_dir(const struct composition *c,
                           const struct composition_opts *opts);

/* Load, check and resolve the composition at path (.json files are read
 * as JSON). On failure err holds one line "FILE:LINE:COL: key.path: ..."
 * and err->status EXIT_DATAERR (or EXIT_NOINPUT when path cannot be
 * read). Caller owns the result. */
struct composition *composition_load(const char *path,
                                     const struct composition_opts *opts,
                                     struct err *err);
void composition_destroy(struct composition **c);

/* True when the group runs its own program (run.command or run.image)
 * rather than the plan. */
bool composition_group_blackbox(const struct composition_group *g);
/* True when some group runs the plan (the plan must be built). */
bool composition_needs_plan(const struct composition *c);

/* The resolved composition as `testyard validate` prints it, keys in a
 * fixed order. Caller owns the result (cJSON_Delete). */
cJSON *composition_to_json(const struct composition *c);

/* A plan's typed parameters (config/params.c). */
enum param_type {
    PARAM_INT,
    PARAM_FLOAT,
    PARAM_BOOL,
    PARAM_STRING,
    PARAM_ENUM,
    PARAM_SIZE,
    PARAM_DURATION,
    PARAM_ARRAY,
};

struct param {
    char *name;
    enum param_type type;
    enum param_type items; /* element type when type == PARAM_ARRAY */
    char **values;         /* NULL-terminated; enum (or enum items) only */
    size_t nvalues;
    cJSON *def;        /* checked default, resolved form; NULL: required */
    char *unit;        /* NULL when not given */
    char *description; /* NULL when not given */
};

/* An ordered list of declarations, held by value. */
struct params {
    struct param *v;
    size_t n;
    size_t cap;
};

/* "int", "size", "array of duration"... into buf. */
void params_type_name(const struct param *p, char *buf, size_t size);

/*
 * The manifest: a test plan's manifest, plans/<name>/manifest.yaml: the
 * plan's name, how to build it, its test cases with their instance bounds
 * and allowed groups, and its typed parameters (see docs/manifests.md).
 *
 * The manifest is checked as strictly as a composition: unknown keys,
 * wrong types and defaults that do not fit their type are one-line errors
 * pointing into the manifest file.
 *
 * Ownership: a struct manifest owns everything it points to; pointers into
 * it (cases, params) are borrowed and live until manifest_destroy().
 */

#define MANIFEST_FILE "manifest.yaml"

struct manifest_case {
    char *name;
    char *description;     /* NULL when not given */
    int64_t min_instances; /* >= 1 */
    int64_t max_instances; /* >= min_instances */
    char **groups;         /* NULL-terminated allowed group ids; NULL = any */
    size_t ngroups;
    struct params params; /* parameters of this case only */
};

struct manifest {
    char *path; /* the manifest file, as found */
    char *dir;  /* the plan directory (sources are relative to it) */
    char *name;
    char *description; /* NULL when not given */
    /* build: each a NULL-terminated list (never NULL) and its length */
    char **sources;
    size_t nsources;
    char **cflags;
    size_t ncflags;
    char **pkg_config;
    size_t npkg_config;
    char **ldlibs;
    size_t nldlibs;
    struct params params; /* shared by every case */
    struct manifest_case *cases;
    size_t ncases;
};

/* Load and check path (a manifest.yaml). When expect_name is not NULL the
 * manifest's name must equal it (the plan's folder name). Caller owns the
 * result. */
struct manifest *manifest_load(const char *path, const char *expect_name,
                               struct err *err);
void manifest_destroy(struct manifest **m);

/* The case called name, or NULL. Borrowed. */
const struct manifest_case *manifest_case(const struct manifest *m,
                                          const char *name);
/* Group ids: [a-z0-9][a-z0-9_-]*, at most 64 characters (they name
 * folders and containers). Plan and case names may also hold '.'. */
bool manifest_valid_id(const char *s, bool dots);
/* True when the case accepts group id (no list = any id). */
bool manifest_case_allows(const struct manifest_case *c, const char *id);

/* Where plan `plan` is looked for, in order: plans_dir (else the
 * TESTYARD_PLANS environment variable), <from_dir>/../plans (from_dir may
 * be NULL), ./plans, <dir of the testyard executable>/../plans and
 * TY_PREFIX/share/testyard/plans. Returns the first <dir>/<plan> holding a
 * manifest.yaml (caller owns it); otherwise fails (ENOENT, status
 * EXIT_DATAERR) with "plan "X" not found; looked in A, B, C". */
char *manifest_locate(const char *plan, const char *plans_dir,
                      const char *from_dir, struct err *err);

#endif
