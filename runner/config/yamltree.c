/*
 * yamltree.c — loading a YAML or JSON file into a tree of nodes that know
 * where they were written (see config/yamltree_int.h). The typed readers and
 * the message helpers are in yamltree_read.c.
 *
 * libyaml's event parser drives a small stack machine: a scalar or a new
 * container is attached to the container on top of the stack (maps take
 * key, value, key, value...), containers are pushed on start and popped on
 * end. Aliases share the node they name; the weight of every node counts
 * aliases as copies so that a file cannot expand into a billion nodes for
 * whoever walks the tree later. libyaml's own messages are kept, with the
 * file name and position in front.
 */
#include "config/yamltree_int.h"

#include "base/log.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

struct anchor {
    char *name;
    struct ynode *node;
};

struct loader {
    yaml_parser_t parser;
    struct yamltree *t;
    const char *buf;
    size_t len;
    struct ynode *stack[YAMLTREE_MAX_DEPTH];
    size_t depth;
    struct anchor *anchors;
    size_t nanchors;
    size_t capanchors;
    size_t expanded;
    int docs;
};

/* Line and column (1-based, columns in characters) of byte offset off. */
static void
pos_at(const char *buf, size_t len, size_t off, int *line, int *col)
{
    int l = 1, c = 1;

    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        if (buf[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int fail_at(const char *file, int line, int col, struct err *err,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
fail_at(const char *file, int line, int col, struct err *err, const char *fmt,
        ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    err_set(err, EINVAL, "%s:%d:%d: %s", file, line, col, msg);
    return err_status(err, EXIT_DATAERR);
}

static int
fail_mark(struct loader *ld, yaml_mark_t mark, struct err *err,
          const char *what)
{
    return fail_at(ld->t->file, (int)mark.line + 1, (int)mark.column + 1, err,
                   "%s", what);
}

static int
syntax_error(struct loader *ld, struct err *err)
{
    yaml_parser_t *p = &ld->parser;
    const char *problem = p->problem ? p->problem : "cannot be parsed";
    int line = (int)p->problem_mark.line + 1;
    int col = (int)p->problem_mark.column + 1;

    if (p->error == YAML_READER_ERROR) {
        pos_at(ld->buf, ld->len, p->problem_offset, &line, &col);
        return fail_at(ld->t->file, line, col, err,
                       "invalid YAML: %s (0x%x); the file must be UTF-8 "
                       "text",
                       problem, (unsigned)p->problem_value);
    }
    if (p->error == YAML_MEMORY_ERROR)
        return fail_at(ld->t->file, line, col, err, "out of memory");
    if (p->problem_mark.index < ld->len &&
        ld->buf[p->problem_mark.index] == '\t')
        return fail_at(ld->t->file, line, col, err,
                       "invalid YAML: a tab character here; YAML indents "
                       "with spaces");
    if (p->context != NULL)
        return fail_at(ld->t->file, line, col, err,
                       "invalid YAML: %s (%s at %d:%d)", problem, p->context,
                       (int)p->context_mark.line + 1,
                       (int)p->context_mark.column + 1);
    return fail_at(ld->t->file, line, col, err, "invalid YAML: %s", problem);
}

/* The key path of the container on top of the stack. */
static void
stack_path(const struct loader *ld, char *dst)
{
    char tmp[YAMLTREE_PATH_MAX];

    dst[0] = '\0';
    for (size_t i = 1; i < ld->depth; i++) {
        const struct ynode *parent = ld->stack[i - 1];

        memcpy(tmp, dst, YAMLTREE_PATH_MAX);
        if (parent->kind == YNODE_MAP)
            yamltree__path_key(dst, tmp,
                               parent->items[parent->nitems - 2]->str);
        else
            yamltree__path_index(dst, tmp, parent->nitems - 1);
    }
}

static struct ynode *
node_new(struct loader *ld, enum ynode_kind kind, yaml_mark_t mark,
         struct err *err)
{
    struct yamltree *t = ld->t;
    struct ynode *n;

    if (++ld->expanded > YAMLTREE_MAX_NODES) {
        fail_at(t->file, (int)mark.line + 1, (int)mark.column + 1, err,
                "more than %d values; a composition or manifest is much "
                "smaller than this",
                YAMLTREE_MAX_NODES);
        return NULL;
    }
    n = xcalloc(1, sizeof(*n));
    n->kind = kind;
    n->file = t->file;
    n->line = (int)mark.line + 1;
    n->col = (int)mark.column + 1;
    n->weight = 1;
    xgrow(&t->all, &t->capall, t->nall + 1, sizeof(*t->all));
    t->all[t->nall++] = n;
    return n;
}

static void
node_push(struct ynode *parent, struct ynode *child)
{
    xgrow(&parent->items, &parent->cap, parent->nitems + 1,
          sizeof(*parent->items));
    parent->items[parent->nitems++] = child;
}

static int
attach(struct loader *ld, struct ynode *n, yaml_mark_t mark, struct err *err)
{
    struct ynode *parent;

    if (ld->depth == 0) {
        ld->t->root = n;
        return 0;
    }
    parent = ld->stack[ld->depth - 1];
    if (parent->kind == YNODE_MAP && parent->nitems % 2 == 0 &&
        n->kind != YNODE_SCALAR)
        return fail_mark(ld, mark, err,
                         "a mapping key must be a plain word, not a "
                         "mapping or a list");
    node_push(parent, n);
    return 0;
}

static int
add_anchor(struct loader *ld, const yaml_char_t *name, struct ynode *n)
{
    if (name == NULL)
        return 0;
    xgrow(&ld->anchors, &ld->capanchors, ld->nanchors + 1,
          sizeof(*ld->anchors));
    ld->anchors[ld->nanchors].name = xstrdup((const char *)name);
    ld->anchors[ld->nanchors].node = n;
    ld->nanchors++;
    return 0;
}

/* Tags are refused except the standard ones that change nothing (or, for
 * !!str and "!", make a plain scalar a string). */
static int
check_tag(struct loader *ld, const yaml_char_t *tag, const char *allowed,
          yaml_mark_t mark, struct err *err)
{
    const char *t = (const char *)tag;
    char msg[256];

    if (t == NULL || strcmp(t, allowed) == 0)
        return 0;
    if (strncmp(t, "tag:yaml.org,2002:", 18) == 0)
        snprintf(msg, sizeof(msg), "tag !!%.100s is not supported; remove it",
                 t + 18);
    else
        snprintf(msg, sizeof(msg), "tag %.100s is not supported; remove it", t);
    return fail_mark(ld, mark, err, msg);
}

static int
on_scalar(struct loader *ld, yaml_event_t *ev, struct err *err)
{
    const char *value = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    struct ynode *n = node_new(ld, YNODE_SCALAR, ev->start_mark, err);

    if (n == NULL)
        return -1;
    if (memchr(value, '\0', len) != NULL)
        return fail_mark(ld, ev->start_mark, err,
                         "NUL characters are not allowed in a value");
    n->str = xstrndup(value, len);
    n->len = len;
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (tag != NULL && strcmp(tag, "!") == 0)
        tag = NULL, n->plain = false;
    if (tag != NULL && strcmp(tag, YAML_STR_TAG) == 0)
        tag = NULL, n->plain = false;
    if (check_tag(ld, (const yaml_char_t *)tag, "", ev->start_mark, err) < 0)
        return -1;
    add_anchor(ld, ev->data.scalar.anchor, n);
    return attach(ld, n, ev->start_mark, err);
}

static int
on_start(struct loader *ld, yaml_event_t *ev, struct err *err)
{
    bool map = ev->type == YAML_MAPPING_START_EVENT;
    const yaml_char_t *tag =
        map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    const yaml_char_t *anchor =
        map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    struct ynode *n;

    if (check_tag(ld, tag, map ? YAML_MAP_TAG : YAML_SEQ_TAG, ev->start_mark,
                  err) < 0)
        return -1;
    if (ld->depth == YAMLTREE_MAX_DEPTH)
        return fail_at(ld->t->file, (int)ev->start_mark.line + 1,
                       (int)ev->start_mark.column + 1, err,
                       "nested more than %d levels deep", YAMLTREE_MAX_DEPTH);
    n = node_new(ld, map ? YNODE_MAP : YNODE_SEQ, ev->start_mark, err);
    if (n == NULL || attach(ld, n, ev->start_mark, err) < 0)
        return -1;
    add_anchor(ld, anchor, n);
    n->open = true;
    ld->stack[ld->depth++] = n;
    return 0;
}

/* qsort_r comparator over key indices of the map's items (arg). */
static int
cmp_keys(const void *a, const void *b, void *arg)
{
    const struct ynode *const *items = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(items[2 * i]->str, items[2 * j]->str);

    if (c != 0)
        return c;
    return i < j ? -1 : i > j;
}

/* Sort key indices so that duplicates are neighbours: n log n, because a
 * 4 MiB file can hold a map with a hundred thousand keys. */
static int
check_duplicates(struct loader *ld, const struct ynode *map, struct err *err)
{
    size_t n = map->nitems / 2, *idx;
    char path[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    int rc = 0;

    if (n < 2)
        return 0;
    idx = xmalloc(n * sizeof(*idx));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof(*idx), cmp_keys, map->items);
    for (size_t i = 1; i < n && rc == 0; i++) {
        const struct ynode *first = map->items[2 * idx[i - 1]];
        const struct ynode *again = map->items[2 * idx[i]];

        if (strcmp(first->str, again->str) != 0)
            continue;
        stack_path(ld, path);
        rc = yamltree__fail(again, yamltree__path_key(kpath, path, again->str),
                            err, "duplicate key (first at line %d)",
                            first->line);
    }
    free(idx);
    return rc;
}

static int
on_end(struct loader *ld, struct err *err)
{
    struct ynode *n = ld->stack[ld->depth - 1];

    if (n->kind == YNODE_MAP && check_duplicates(ld, n, err) < 0)
        return -1;
    for (size_t i = 0; i < n->nitems; i++)
        n->weight += n->items[i]->weight;
    n->open = false;
    ld->depth--;
    return 0;
}

static int
on_alias(struct loader *ld, yaml_event_t *ev, struct err *err)
{
    const char *name = (const char *)ev->data.alias.anchor;
    char msg[256];
    struct ynode *target = NULL;

    for (size_t i = ld->nanchors; i > 0 && target == NULL; i--)
        if (strcmp(ld->anchors[i - 1].name, name) == 0)
            target = ld->anchors[i - 1].node;
    if (target == NULL || target->open) {
        snprintf(msg, sizeof(msg),
                 target ? "alias *%.100s is inside the value it names"
                        : "alias *%.100s names no anchor",
                 name);
        return fail_mark(ld, ev->start_mark, err, msg);
    }
    ld->expanded += target->weight;
    if (ld->expanded > YAMLTREE_MAX_NODES)
        return fail_at(ld->t->file, (int)ev->start_mark.line + 1,
                       (int)ev->start_mark.column + 1, err,
                       "aliases expand to more than %d values; refusing "
                       "(\"billion laughs\")",
                       YAMLTREE_MAX_NODES);
    return attach(ld, target, ev->start_mark, err);
}

static int
on_event(struct loader *ld, yaml_event_t *ev, struct err *err)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++ld->docs > 1)
            return fail_mark(ld, ev->start_mark, err,
                             "a second YAML document; a file holds one "
                             "composition or manifest");
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(ld, ev, err);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        return on_start(ld, ev, err);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(ld, err);
    case YAML_ALIAS_EVENT:
        return on_alias(ld, ev, err);
    default:
        return 0;
    }
}

static int
load_events(struct loader *ld, struct err *err)
{
    yaml_event_t ev;

    for (;;) {
        bool done;
        int rc;

        if (!yaml_parser_parse(&ld->parser, &ev))
            return syntax_error(ld, err);
        rc = on_event(ld, &ev, err);
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (rc < 0)
            return -1;
        if (done)
            return 0;
    }
}

static bool
blank(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!strchr(" \t\r\n", buf[i]) || buf[i] == '\0')
            return false;
    return true;
}

/* cJSON points one character past a key that does not start with '"'
 * (in {'a': 1} or {"a": 1,}); everywhere else it points at the culprit. */
static size_t
json_error_offset(const char *buf, size_t len, size_t off)
{
    size_t q;

    if (off == 0 || off > len || strchr(" \t\r\n\"", buf[off - 1]))
        return off;
    for (q = off - 1; q > 0 && strchr(" \t\r\n", buf[q - 1]); q--)
        ;
    if (q > 0 && (buf[q - 1] == '{' || buf[q - 1] == ','))
        return off - 1;
    return off;
}

/* True when buf ends inside a string or an open { or [: whatever cJSON
 * points at, the file was cut short. */
static bool
json_unterminated(const char *buf, size_t len)
{
    long depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = buf[i];

        if (in_string && c == '\\')
            i++;
        else if (c == '"')
            in_string = !in_string;
        else if (!in_string && (c == '{' || c == '['))
            depth++;
        else if (!in_string && (c == '}' || c == ']'))
            depth--;
    }
    return in_string || depth > 0;
}

/* Strict JSON first: libyaml would take some things JSON does not (and
 * say so in YAML's words). buf[len] is the '\0' cJSON needs to see. */
static int
json_check(const char *file, const char *buf, size_t len, struct err *err)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
    size_t off, n = 1;
    int line, col;

    if (j != NULL) {
        cJSON_Delete(j);
        return 0;
    }
    off = end != NULL && end >= buf ? (size_t)(end - buf) : 0;
    off = json_error_offset(buf, len, off);
    if (json_unterminated(buf, len))
        off = len;
    pos_at(buf, len, off, &line, &col);
    if (off >= len)
        return fail_at(file, line, col, err,
                       "invalid JSON: unexpected end of file");
    if ((unsigned char)buf[off] <= 0x20 || (unsigned char)buf[off] >= 0x7f)
        return fail_at(file, line, col, err,
                       "invalid JSON: unexpected byte 0x%02x",
                       (unsigned char)buf[off]);
    while (
        off + n < len && n < 20 && isalnum((unsigned char)buf[off]) &&
        (isalnum((unsigned char)buf[off + n]) || strchr("_.+-", buf[off + n])))
        n++;
    return fail_at(file, line, col, err, "invalid JSON: unexpected '%.*s'",
                   (int)n, buf + off);
}

struct yamltree *
yamltree__parse(const char *file, const char *buf, size_t len, bool json,
                struct err *err)
{
    struct loader ld = {.buf = buf, .len = len};
    struct yamltree *t;
    int rc;

    if (json && !blank(buf, len) && json_check(file, buf, len, err) < 0)
        return NULL;
    t = xcalloc(1, sizeof(*t));
    t->file = xstrdup(file);
    ld.t = t;
    if (!yaml_parser_initialize(&ld.parser))
        fatalx("out of memory starting the YAML parser");
    yaml_parser_set_input_string(&ld.parser, (const unsigned char *)buf, len);
    yaml_parser_set_encoding(&ld.parser, YAML_UTF8_ENCODING);
    rc = load_events(&ld, err);
    yaml_parser_delete(&ld.parser);
    for (size_t i = 0; i < ld.nanchors; i++)
        free(ld.anchors[i].name);
    free(ld.anchors);
    if (rc < 0)
        yamltree__destroy(&t);
    return t;
}

static bool
is_json_name(const char *path)
{
    size_t n = strlen(path);

    return n >= 5 && strcasecmp(path + n - 5, ".json") == 0;
}

struct yamltree *
yamltree__load(const char *path, struct err *err)
{
    size_t len = 0;
    cleanup_free char *buf = file_read(path, YAMLTREE_MAX_BYTES, &len, err);

    if (buf == NULL && err != NULL && err->code == EFBIG) {
        err_set(err, EFBIG,
                "%s: file is larger than 4 MiB; compositions and manifests "
                "are small text files",
                path);
        return err_status(err, EXIT_DATAERR), NULL;
    }
    if (buf == NULL)
        return err_status(err, EXIT_NOINPUT), NULL;
    return yamltree__parse(path, buf, len, is_json_name(path), err);
}

int
yamltree__load_with(const char *path,
                    int (*parse)(const struct yamltree *t, void *arg,
                                 struct err *err),
                    void *arg, struct err *err)
{
    struct yamltree *t = yamltree__load(path, err);
    int rc;

    if (t == NULL)
        return -1;
    rc = parse(t, arg, err);
    yamltree__destroy(&t);
    return rc;
}

void
yamltree__destroy(struct yamltree **tp)
{
    struct yamltree *t = tp ? *tp : NULL;

    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nall; i++) {
        free(t->all[i]->str);
        free(t->all[i]->items);
        free(t->all[i]);
    }
    free(t->all);
    free(t->file);
    free(t);
    *tp = NULL;
}
