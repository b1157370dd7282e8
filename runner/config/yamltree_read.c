/*
 * yamltree_read.c — walking a loaded tree and reading typed values from it
 * (see config/yamltree_int.h), each failure one line that says where, what was
 * expected and what was found.
 *
 * Plain scalars are typed as YAML 1.2's core schema types them, so `4` is
 * an int and `"4"` a string: an int field given "4" is an error that says
 * to drop the quotes, which is the whole point of checking compositions
 * before a run rather than inside a plan.
 */
#include "config/yamltree_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "config/suggest_int.h"
#include "ty_units.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
yamltree__len(const struct ynode *n)
{
    if (n == NULL || n->kind == YNODE_SCALAR)
        return 0;
    return n->kind == YNODE_MAP ? n->nitems / 2 : n->nitems;
}

const struct ynode *
yamltree__key_at(const struct ynode *map, size_t i)
{
    return map->items[2 * i];
}

const struct ynode *
yamltree__val_at(const struct ynode *n, size_t i)
{
    return n->kind == YNODE_MAP ? n->items[2 * i + 1] : n->items[i];
}

const struct ynode *
yamltree__get(const struct ynode *map, const char *key)
{
    if (map == NULL || map->kind != YNODE_MAP)
        return NULL;
    for (size_t i = 0; i < map->nitems / 2; i++)
        if (strcmp(map->items[2 * i]->str, key) == 0)
            return map->items[2 * i + 1];
    return NULL;
}

static bool
is_int_text(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static bool
is_float_text(const char *s)
{
    static const char *const special[] = {".inf",  "-.inf", "+.inf", ".Inf",
                                          "-.Inf", "+.Inf", ".INF",  "-.INF",
                                          "+.INF", ".nan",  ".NaN",  ".NAN"};
    char *end;

    for (size_t i = 0; i < ARRAY_LEN(special); i++)
        if (strcmp(s, special[i]) == 0)
            return true;
    /* strtod also takes hex, "inf" and "nan", which YAML does not. */
    if (strpbrk(s, "xXnNiI") != NULL || *s == '\0')
        return false;
    if (strspn(s, "+-.0123456789eE") != strlen(s) || !strpbrk(s, "0123456789"))
        return false;
    strtod(s, &end);
    return *end == '\0';
}

static bool
is_one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return true;
    return false;
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const true_words[] = {"true", "True", "TRUE", NULL};
static const char *const false_words[] = {"false", "False", "FALSE", NULL};

enum yscalar_type
yamltree__scalar_type(const struct ynode *n)
{
    if (n->kind != YNODE_SCALAR || !n->plain)
        return YSCALAR_STRING;
    if (is_one_of(n->str, null_words))
        return YSCALAR_NULL;
    if (is_one_of(n->str, true_words) || is_one_of(n->str, false_words))
        return YSCALAR_BOOL;
    if (is_int_text(n->str))
        return YSCALAR_INT;
    return is_float_text(n->str) ? YSCALAR_FLOAT : YSCALAR_STRING;
}

/* "text" with quotes and backslashes escaped, control bytes as \xNN,
 * cut after 60 characters. */
static void
quote(const char *s, char *buf, size_t size)
{
    struct strbuf sb;
    size_t i;

    strbuf_init(&sb);
    strbuf_addc(&sb, '"');
    for (i = 0; i < 60 && s[i] != '\0'; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '"' || c == '\\')
            strbuf_addf(&sb, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            strbuf_addf(&sb, "\\x%02x", c);
        else
            strbuf_addc(&sb, (char)c);
    }
    strbuf_adds(&sb, s[i] != '\0' ? "...\"" : "\"");
    snprintf(buf, size, "%s", sb.buf);
    strbuf_release(&sb);
}

void
yamltree__got(const struct ynode *n, char *buf, size_t size)
{
    if (n == NULL) {
        snprintf(buf, size, "nothing");
        return;
    }
    if (n->kind != YNODE_SCALAR) {
        snprintf(buf, size, n->kind == YNODE_MAP ? "a mapping" : "a list");
        return;
    }
    switch (yamltree__scalar_type(n)) {
    case YSCALAR_NULL:
        snprintf(buf, size, n->str[0] ? "%s" : "nothing", n->str);
        return;
    case YSCALAR_STRING:
        quote(n->str, buf, size);
        return;
    default:
        snprintf(buf, size, "%.60s", n->str);
    }
}

const char *
yamltree__path_key(char *dst, const char *parent, const char *key)
{
    if (parent[0] == '\0')
        snprintf(dst, YAMLTREE_PATH_MAX, "%.100s", key);
    else
        snprintf(dst, YAMLTREE_PATH_MAX, "%.150s.%.100s", parent, key);
    return dst;
}

const char *
yamltree__path_index(char *dst, const char *parent, size_t i)
{
    snprintf(dst, YAMLTREE_PATH_MAX, "%.200s[%zu]", parent, i);
    return dst;
}

/* Control bytes of s as \xNN, in place (cut at size): a key or a name
 * from the file may hold any byte (a plain scalar folds line breaks into
 * it), and a message stays one line. */
static void
one_line(char *s, size_t size)
{
    struct strbuf sb;

    strbuf_init(&sb);
    for (const char *p = s; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;

        if (c < 0x20 || c == 0x7f)
            strbuf_addf(&sb, "\\x%02x", c);
        else
            strbuf_addc(&sb, (char)c);
    }
    snprintf(s, size, "%s", sb.buf ? sb.buf : "");
    strbuf_release(&sb);
}

int
yamltree__fail(const struct ynode *n, const char *path, struct err *err,
               const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (path[0] == '\0')
        err_set(err, EINVAL, "%s:%d:%d: %s", n->file, n->line, n->col, msg);
    else
        err_set(err, EINVAL, "%s:%d:%d: %s: %s", n->file, n->line, n->col, path,
                msg);
    if (err != NULL)
        one_line(err->msg, sizeof(err->msg));
    return err_status(err, EXIT_DATAERR);
}

/* "expected <what>, got <n>" at n. */
static int
fail_expected(const struct ynode *n, const char *path, const char *what,
              struct err *err)
{
    char got[128];

    yamltree__got(n, got, sizeof(got));
    return yamltree__fail(n, path, err, "expected %s, got %s", what, got);
}

int
yamltree__want_map(const struct ynode *n, const char *path, struct err *err)
{
    if (n->kind == YNODE_MAP)
        return 0;
    return fail_expected(n, path, "a mapping (key: value lines)", err);
}

int
yamltree__want_root_map(const struct yamltree *t, const char *what,
                        struct err *err)
{
    const struct ynode *r = t->root;

    if (r == NULL ||
        (r->kind == YNODE_SCALAR && yamltree__scalar_type(r) == YSCALAR_NULL)) {
        err_set(err, EINVAL, "%s:1:1: the file is empty; expected %s", t->file,
                what);
        return err_status(err, EXIT_DATAERR);
    }
    return r->kind == YNODE_MAP ? 0 : fail_expected(r, "", what, err);
}

int
yamltree__want_seq(const struct ynode *n, const char *path, struct err *err)
{
    if (n->kind == YNODE_SEQ)
        return 0;
    return fail_expected(n, path, "a list", err);
}

int
yamltree__check_keys(const struct ynode *map, const char *path,
                     const char *const *allowed, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    size_t nallowed = 0;

    while (allowed[nallowed] != NULL)
        nallowed++;
    for (size_t i = 0; i < yamltree__len(map); i++) {
        const struct ynode *key = yamltree__key_at(map, i);
        const char *hint;

        if (is_one_of(key->str, allowed))
            continue;
        yamltree__path_key(kpath, path, key->str);
        hint = suggest__closest(key->str, allowed, nallowed);
        if (hint != NULL)
            return yamltree__fail(key, kpath, err,
                                  "unknown key; did you mean \"%s\"?", hint);
        return yamltree__fail(key, kpath, err, "unknown key");
    }
    return 0;
}

const struct ynode *
yamltree__require(const struct ynode *map, const char *path, const char *key,
                  struct err *err)
{
    const struct ynode *v = yamltree__get(map, key);

    if (v == NULL)
        yamltree__fail(map, path, err, "missing required key \"%s\"", key);
    return v;
}

int
yamltree__string(const struct ynode *n, const char *path, char **out,
                 struct err *err)
{
    if (n->kind != YNODE_SCALAR || yamltree__scalar_type(n) == YSCALAR_NULL)
        return fail_expected(n, path, "a string", err);
    *out = xstrdup(n->str);
    return 0;
}

int
yamltree__opt_string(const struct ynode *map, const char *path, const char *key,
                     char **out, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    const struct ynode *v = yamltree__get(map, key);

    if (v == NULL)
        return 0;
    return yamltree__string(v, yamltree__path_key(kpath, path, key), out, err);
}

int
yamltree__strings(const struct ynode *n, const char *path, char ***out,
                  size_t *count, struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX];
    size_t len = yamltree__len(n);
    char **v;

    if (yamltree__want_seq(n, path, err) < 0)
        return -1;
    v = xcalloc(len + 1, sizeof(*v));
    for (size_t i = 0; i < len; i++) {
        yamltree__path_index(ipath, path, i);
        if (yamltree__string(yamltree__val_at(n, i), ipath, &v[i], err) < 0) {
            strv_free(v);
            return -1;
        }
    }
    *out = v;
    *count = len;
    return 0;
}

/* A quoted "4" where a number belongs is the mistake this checker exists
 * for; say how to fix it. */
static int
fail_number(const struct ynode *n, const char *path, const char *what,
            struct err *err)
{
    char got[128];

    yamltree__got(n, got, sizeof(got));
    if (n->kind == YNODE_SCALAR && !n->plain &&
        (is_int_text(n->str) || is_float_text(n->str)))
        return yamltree__fail(n, path, err,
                              "expected %s, got the string %s; remove the "
                              "quotes",
                              what, got);
    return yamltree__fail(n, path, err, "expected %s, got %s", what, got);
}

int
yamltree__int(const struct ynode *n, const char *path, int64_t min, int64_t max,
              int64_t *out, struct err *err)
{
    char what[96];
    long long v;
    char *end;

    if (min == INT64_MIN)
        snprintf(what, sizeof(what), "an integer");
    else if (max == INT64_MAX)
        snprintf(what, sizeof(what), "an integer >= %lld", (long long)min);
    else
        snprintf(what, sizeof(what), "an integer from %lld to %lld",
                 (long long)min, (long long)max);
    if (yamltree__scalar_type(n) != YSCALAR_INT)
        return fail_number(n, path, what, err);
    errno = 0;
    v = strtoll(n->str, &end, 10);
    if (errno != 0 || v < min || v > max)
        return fail_expected(n, path, what, err);
    *out = v;
    return 0;
}

int
yamltree__float(const struct ynode *n, const char *path, double *out,
                struct err *err)
{
    enum yscalar_type t = yamltree__scalar_type(n);
    double v;

    if (t != YSCALAR_INT && t != YSCALAR_FLOAT)
        return fail_number(n, path, "a number", err);
    v = strtod(n->str, NULL);
    if (!isfinite(v) || strpbrk(n->str, "iInN") != NULL)
        return fail_expected(n, path, "a finite number", err);
    *out = v;
    return 0;
}

int
yamltree__bool(const struct ynode *n, const char *path, bool *out,
               struct err *err)
{
    static const char *const yes[] = {"yes", "Yes", "YES", "on", "On",
                                      "ON",  "y",   "Y",   NULL};
    static const char *const no[] = {"no",  "No", "NO", "off", "Off",
                                     "OFF", "n",  "N",  NULL};
    char got[128];

    if (yamltree__scalar_type(n) == YSCALAR_BOOL) {
        *out = is_one_of(n->str, true_words);
        return 0;
    }
    yamltree__got(n, got, sizeof(got));
    if (n->kind == YNODE_SCALAR &&
        (is_one_of(n->str, yes) || is_one_of(n->str, no)))
        return yamltree__fail(n, path, err,
                              "expected true or false, got %s; did you mean "
                              "%s?",
                              got, is_one_of(n->str, yes) ? "true" : "false");
    if (n->kind == YNODE_SCALAR && !n->plain &&
        (is_one_of(n->str, true_words) || is_one_of(n->str, false_words)))
        return yamltree__fail(n, path, err,
                              "expected true or false, got the string %s; "
                              "remove the quotes",
                              got);
    return yamltree__fail(n, path, err, "expected true or false, got %s", got);
}

/* why comes from ty_units: "expected a size like ..." or a sentence of its
 * own ("ambiguous size unit ..."). */
static int
fail_unit(const struct ynode *n, const char *path, const char *why,
          struct err *err)
{
    char got[128];

    yamltree__got(n, got, sizeof(got));
    if (strncmp(why, "expected ", 9) == 0)
        return yamltree__fail(n, path, err, "%s, got %s", why, got);
    return yamltree__fail(n, path, err, "got %s: %s", got, why);
}

static bool
scalar_text(const struct ynode *n)
{
    return n->kind == YNODE_SCALAR && yamltree__scalar_type(n) != YSCALAR_NULL;
}

int
yamltree__size(const struct ynode *n, const char *path, uint64_t *out,
               struct err *err)
{
    char why[256];

    if (ty__parse_size(scalar_text(n) ? n->str : "", out, why, sizeof(why)) < 0)
        return fail_unit(n, path, why, err);
    return 0;
}

int
yamltree__duration(const struct ynode *n, const char *path, int64_t *out,
                   struct err *err)
{
    char why[256], got[128];

    if (ty__parse_duration(scalar_text(n) ? n->str : "", out, why,
                           sizeof(why)) == 0)
        return 0;
    if (scalar_text(n) && n->plain && is_int_text(n->str)) {
        yamltree__got(n, got, sizeof(got));
        return yamltree__fail(n, path, err, "%s, got %s; add a unit, e.g. %ss",
                              why, got, n->str);
    }
    return fail_unit(n, path, why, err);
}

int
yamltree__cpu(const struct ynode *n, const char *path, int64_t *millicpus,
              struct err *err)
{
    char why[256];

    if (ty__parse_cpu(scalar_text(n) ? n->str : "", millicpus, why,
                      sizeof(why)) < 0)
        return fail_unit(n, path, why, err);
    return 0;
}

int
yamltree__enum(const struct ynode *n, const char *path,
               const char *const *values, struct err *err)
{
    struct strbuf sb;
    char got[128];
    size_t count = 0;
    const char *hint;
    int rc;

    for (; values[count] != NULL; count++)
        if (scalar_text(n) && strcmp(n->str, values[count]) == 0)
            return (int)count;
    strbuf_init(&sb);
    strbuf_adds(&sb, "");
    for (size_t i = 0; i < count; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", values[i]);
    yamltree__got(n, got, sizeof(got));
    hint = scalar_text(n) ? suggest__closest(n->str, values, count) : NULL;
    if (hint != NULL)
        rc = yamltree__fail(n, path, err,
                            "expected one of %s, got %s; did you mean "
                            "\"%s\"?",
                            sb.buf, got, hint);
    else
        rc = yamltree__fail(n, path, err, "expected one of %s, got %s", sb.buf,
                            got);
    strbuf_release(&sb);
    return rc;
}
