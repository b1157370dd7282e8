/*
 * manifest.h — a test plan's manifest, plans/<name>/manifest.yaml: the
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
#ifndef TY_MANIFEST_H
#define TY_MANIFEST_H

#include "err.h"
#include "params.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
