/*
 * config/yamltree_int.h — a YAML (or JSON) file as a tree of nodes that
 * remember where they were written, and typed readers that fail with one-line
 * errors.
 *
 * Compositions and plan manifests are loaded through here, so both formats
 * give the same tree: a .json file is first checked as strict JSON with
 * cJSON (its syntax errors get JSON's own line:col), then read with libyaml
 * like any YAML file, JSON being YAML flow syntax. Every node has the line
 * and column (1-based, in characters) where it starts and, for scalars,
 * whether it was written plain (typed: true, 12, 1.5, null) or quoted
 * (always a string).
 *
 * The loader refuses what a configuration file has no use for and what
 * could hurt: files over YAMLTREE_MAX_BYTES, nesting deeper than
 * YAMLTREE_MAX_DEPTH, more than YAMLTREE_MAX_NODES nodes once aliases are
 * counted as copies (the "billion laughs"), duplicate keys, non-scalar keys,
 * tags other than !!str / !!map / !!seq, and more than one document.
 *
 * Ownership: the tree owns every node and string in it; nodes are borrowed
 * from the tree and live until yamltree__destroy(). An alias shares the node
 * it refers to, so a node may appear in several places.
 *
 * Errors: every failing function fills err with
 * "FILE:LINE:COL: key.path: what was expected, got what" (FILE as passed
 * to yamltree__load), sets err->status to EXIT_DATAERR (EXIT_NOINPUT when
 * the file cannot be read) and returns -1 or NULL.
 */
#ifndef TY_YAMLTREE_H
#define TY_YAMLTREE_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define YAMLTREE_MAX_BYTES ((size_t)4 << 20)
#define YAMLTREE_MAX_DEPTH 64
#define YAMLTREE_MAX_NODES 200000
/* Key paths in messages ("groups[1].resources.memory") are cut to this. */
#define YAMLTREE_PATH_MAX 256

enum ynode_kind { YNODE_SCALAR, YNODE_MAP, YNODE_SEQ };

/* What a scalar means under YAML 1.2's core schema: plain scalars are
 * typed, quoted and block scalars are always strings. */
enum yscalar_type {
    YSCALAR_NULL,   /* ~, null, or nothing at all */
    YSCALAR_BOOL,   /* true, false (any case style YAML allows) */
    YSCALAR_INT,    /* [-+]?[0-9]+ */
    YSCALAR_FLOAT,  /* 1.5, -2e3, .5 */
    YSCALAR_STRING, /* everything else, and every non-plain scalar */
};

struct ynode {
    enum ynode_kind kind;
    const char *file; /* the tree's file name, for messages */
    int line, col;    /* 1-based; col counts characters */
    bool plain;       /* scalar written without quotes or | > */
    char *str;        /* scalar text as loaded (escapes resolved) */
    size_t len;
    /* Maps hold key, value, key, value...; sequences hold items. */
    struct ynode **items;
    size_t nitems;
    size_t cap;
    size_t weight; /* nodes in this subtree, aliases counted as copies */
    bool open;     /* container still being read */
};

struct yamltree {
    char *file;         /* as given to yamltree__load */
    struct ynode *root; /* NULL when the file holds no document */
    struct ynode **all; /* every node, for yamltree__destroy */
    size_t nall;
    size_t capall;
};

/* Read and parse path (.json: checked as strict JSON first). Caller owns
 * the result. */
struct yamltree *yamltree__load(const char *path, struct err *err);
/* Parse a buffer of len bytes (buf[len] must be '\0'); file is the name
 * used in messages. Caller owns the result. */
struct yamltree *yamltree__parse(const char *file, const char *buf, size_t len,
                                 bool json, struct err *err);
void yamltree__destroy(struct yamltree **t);
/* Load path and hand its tree to parse(t, arg, err), which fills whatever
 * arg points to; the tree is destroyed when this returns, so parse keeps
 * no node. Returns what parse returns, or -1 when the file cannot be
 * loaded. */
int yamltree__load_with(const char *path,
                        int (*parse)(const struct yamltree *t, void *arg,
                                     struct err *err),
                        void *arg, struct err *err);

/* Number of pairs of a map, items of a sequence, 0 for a scalar. */
size_t yamltree__len(const struct ynode *n);
/* The i-th key / value of a map, item of a sequence. Borrowed. */
const struct ynode *yamltree__key_at(const struct ynode *map, size_t i);
const struct ynode *yamltree__val_at(const struct ynode *n, size_t i);
/* The value under key, or NULL when absent or map is not a map. */
const struct ynode *yamltree__get(const struct ynode *map, const char *key);

enum yscalar_type yamltree__scalar_type(const struct ynode *n);
/* "a mapping", "a list", "nothing", "true", "12" or "\"text\"" (quoted,
 * escaped, cut at 60 characters): what a message says it got. */
void yamltree__got(const struct ynode *n, char *buf, size_t size);

/* Child paths: "parent.key" (or "key" at the top) and "parent[i]". */
const char *yamltree__path_key(char *dst, const char *parent, const char *key);
const char *yamltree__path_index(char *dst, const char *parent, size_t i);

/* Fill err with "FILE:LINE:COL: path: <fmt>" at node n (path may be "");
 * status EXIT_DATAERR. Returns -1. */
int yamltree__fail(const struct ynode *n, const char *path, struct err *err,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The document of t must be a mapping: fails "the file is empty; expected
 * <what>" or "expected <what>, got ..." otherwise. */
int yamltree__want_root_map(const struct yamltree *t, const char *what,
                            struct err *err);

/* Typed readers. Each checks node n (found at path) and fails with a
 * message naming what was expected and what n is. */
int yamltree__want_map(const struct ynode *n, const char *path,
                       struct err *err);
int yamltree__want_seq(const struct ynode *n, const char *path,
                       struct err *err);
/* Fail on the first key of map not in allowed (NULL-terminated), with a
 * suggestion when one is close. */
int yamltree__check_keys(const struct ynode *map, const char *path,
                         const char *const *allowed, struct err *err);
/* The value under key; fails "missing required key" at map when absent. */
const struct ynode *yamltree__require(const struct ynode *map, const char *path,
                                      const char *key, struct err *err);
/* Any non-null scalar, as text; *out is the caller's. */
int yamltree__string(const struct ynode *n, const char *path, char **out,
                     struct err *err);
/* The string under key of map (map may be NULL); when the key is absent
 * *out is left as it is. *out is the caller's. */
int yamltree__opt_string(const struct ynode *map, const char *path,
                         const char *key, char **out, struct err *err);
/* A list of scalars as text; *out (NULL-terminated) is the caller's, to
 * free with strv_free (base/strvec.h). */
int yamltree__strings(const struct ynode *n, const char *path, char ***out,
                      size_t *count, struct err *err);
int yamltree__int(const struct ynode *n, const char *path, int64_t min,
                  int64_t max, int64_t *out, struct err *err);
int yamltree__float(const struct ynode *n, const char *path, double *out,
                    struct err *err);
int yamltree__bool(const struct ynode *n, const char *path, bool *out,
                   struct err *err);
int yamltree__size(const struct ynode *n, const char *path, uint64_t *out,
                   struct err *err);
int yamltree__duration(const struct ynode *n, const char *path, int64_t *out,
                       struct err *err);
int yamltree__cpu(const struct ynode *n, const char *path, int64_t *millicpus,
                  struct err *err);
/* A scalar whose text is one of values (NULL-terminated); returns its
 * index. */
int yamltree__enum(const struct ynode *n, const char *path,
                   const char *const *values, struct err *err);

#endif
