/*
 * config/composition_int.h — what the files of the composition loader share
 * while a composition is being loaded (composition.c reads the top and
 * global sections and drives the load, composition_groups.c reads the
 * groups and resolves instances and parameters, composition_program.c
 * the programs groups run instead of the plan, composition_stages.c
 * run_config.stages and run.ready). Not for other modules.
 *
 * Nodes are borrowed from the tree being loaded; the struct composition
 * being filled is owned by composition_load() until it returns it.
 */
#ifndef TY_COMPOSITION_INT_H
#define TY_COMPOSITION_INT_H

#include "config/config.h"
#include "config/params_int.h"
#include "config/yamltree_int.h"

/* Sampling or profiling faster than this only measures the sampler. */
#define MIN_INTERVAL_NS (INT64_C(10) * 1000000)

/* The keys of a run section (global.run or a group's) that name a
 * program instead of the plan, each NULL when absent; checked for type
 * when read, resolved per group (global < group) once all are read. */
struct comp_prog {
    const struct ynode *command;
    const struct ynode *image;
    const struct ynode *args;
    const struct ynode *env;
    const struct ynode *workdir;
    const struct ynode *artifact;
    /* A group's run.profiles.heap (preload or off); in global.run, its
     * profiles.heap when it is preload. */
    const struct ynode *heap;
};

/* What a group was written as, kept until instances are resolved. */
struct comp_group_src {
    const struct ynode *node;        /* the group's mapping */
    const struct ynode *id;          /* its id value */
    const struct ynode *count;       /* instances.count, or NULL */
    const struct ynode *percentage;  /* instances.percentage, or NULL */
    double fraction;                 /* of total_instances, 0 < f <= 1 */
    const struct ynode *test_params; /* run.test_params, or NULL */
    const struct ynode *root;        /* run.root, or NULL */
    struct comp_prog prog;           /* its run section's program keys */
};

struct comp_load {
    struct composition *c;
    const struct composition_opts *opts;
    const struct composition_runner *runner; /* c->runner's entry */
    const struct ynode *root;
    const struct ynode *global;
    const struct ynode *plan;          /* global.plan value, or NULL */
    const struct ynode *tcase;         /* global.case value, or NULL */
    const struct ynode *total;         /* global.total_instances, or NULL */
    const struct ynode *global_params; /* global.run.test_params, or NULL */
    const char *global_artifact;       /* global.run.artifact, or NULL */
    const struct ynode *global_root;   /* global.run.root, or NULL */
    struct comp_prog global_prog;      /* global.run's program keys */
    bool root_default;                 /* its value, false when absent */
    uint64_t global_log_limit;         /* global.run.log_limit or default */
    uint64_t global_output_quota;      /* global.run.output_quota or default */
    char **global_disk;                /* global.run.disk, or NULL; owned */
    struct composition_ready global_ready; /* global.run.ready; owned */
    const struct ynode *stages;            /* run_config.stages, or NULL */
    const struct ynode *groups;            /* the groups list */
    struct comp_group_src *src;            /* one per group */
};

/* Keys Testground compositions have and testyard does not: the hint
 * replaces the bare "unknown key". */
int composition__check_keys(const struct ynode *map, const char *path,
                            const char *const *allowed, struct err *err);
/* run.root at v (when not NULL) into *out. */
int composition__read_root(const struct ynode *v, const char *run_path,
                           bool *out, struct err *err);
/* run.log_limit and run.output_quota of a run section (global or a
 * group's); absent keys leave *log_limit and *quota as they are. */
int composition__run_outputs(const struct ynode *run, const char *run_path,
                             uint64_t *log_limit, uint64_t *quota,
                             struct err *err);
/* run.disk of a run section into *out (NULL-terminated, the caller's;
 * left as it is when absent): a list of at most COMPOSITION_MAX_DISK
 * distinct paths without "..". */
int composition__read_disk(const struct ynode *run, const char *run_path,
                           char ***out, struct err *err);
/* An interval at map[key] of at least MIN_INTERVAL_NS (or 0 when
 * zero_ok); *out is left as it is when the key is absent. */
int composition__read_interval(const struct ynode *map, const char *path,
                               const char *key, bool zero_ok, int64_t *out,
                               struct err *err);
/* A duration above 0 at map[key]; *out is left as it is when absent. */
int composition__read_positive(const struct ynode *map, const char *path,
                               const char *key, int64_t *out, struct err *err);
/* Whether s is a percentage such as "25%" or "12.5%" (*pct: 25, 12.5). */
bool composition__percent_text(const char *s, double *pct);
/* Read the groups list into l->c->groups and l->src. */
int composition__parse_groups(struct comp_load *l, struct err *err);
/* Counts from percentages, and the total checked against total_instances. */
int composition__resolve_instances(struct comp_load *l, struct err *err);
/* Against the manifest: instance bounds, allowed groups, parameters of
 * the groups that run the plan; the others' parameters as written. */
int composition__check_case(struct comp_load *l, struct err *err);

/* composition_program.c: a scalar with some text (not null, not empty);
 * "expected WHAT, got ..." at v (an empty list said so). */
bool composition__is_text(const struct ynode *v);
int composition__fail_got(const struct ynode *v, const char *path,
                          const char *what, struct err *err);
/* composition_program.c: the program keys of the run section at run
 * (global.run when global), type-checked into *p. */
int composition__read_program(const struct ynode *run, const char *run_path,
                              bool global, struct comp_prog *p,
                              struct err *err);
/* Each group's command, image, args, env, workdir and heap_preload from
 * global < group, commands and folders resolved, checked against the
 * runner. */
int composition__resolve_programs(struct comp_load *l, struct err *err);

/* composition_stages.c: run.ready of the run section at run (global.run
 * or a group's) into *out, replacing it (off: none); left as it is when
 * absent. */
int composition__read_ready(const struct ynode *run, const char *run_path,
                            struct composition_ready *out, struct err *err);
/* A copy of src for a group, which owns it. */
struct composition_ready
composition__ready_copy(const struct composition_ready *src);
/* l->stages into l->c->stages, once the groups are read. */
int composition__parse_stages(struct comp_load *l, struct err *err);

#endif
