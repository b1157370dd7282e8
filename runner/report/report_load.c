/*
 * report_load.c — read a run folder into the report's model.
 *
 * result.json says which groups and instances there were and how each
 * ended, with the monitor's memory figures, and the stages and restarts
 * (report_restarts.c). When it is missing (a run
 * still going, or a coordinator that died) composition.json gives the
 * groups, and the folders on disk the instances; the report then says the
 * outcomes are unknown. Then each instance's memory.csv, heap snapshots
 * and the series of report_work.c, and barriers.jsonl and stages.jsonl.
 *
 * Missing pieces become notes; a file that is there but malformed is an
 * error naming the file, line and key (status 65). Also here: the checked
 * JSON getters every reader of the report uses.
 */
#include "report/report_int.h"

#include "base/fsat.h"
#include "base/run_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JSON_MAX_BYTES ((size_t)64 << 20)

/* ---- JSON helpers ------------------------------------------------------ */

static void
line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p != '\0'; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

cJSON *
report__json_text(const char *text, size_t len, const char *name, int line,
                  struct err *err)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    const char *at = cJSON_GetErrorPtr();
    int l, c;

    if (j != NULL)
        return j;
    if (at == NULL || at < text || at > text + len)
        at = text + len;
    line_col(text, at, &l, &c);
    if (line > 0)
        err_set(err, EINVAL, "%s:%d: not valid JSON (column %d)", name, line,
                c);
    else
        err_set(err, EINVAL, "%s:%d:%d: not valid JSON", name, l, c);
    err_status(err, EXIT_DATAERR);
    return NULL;
}

/* path relative to the run folder (everything the report reads is built
 * with path_join(r->run_dir, ...)). */
static const char *
run_rel(const struct report *r, const char *path)
{
    size_t n = strlen(r->run_dir);

    while (n > 0 && r->run_dir[n - 1] == '/')
        n--;
    if (strncmp(path, r->run_dir, n) == 0 && path[n] == '/')
        return path + n + 1;
    return NULL;
}

char *
report__read(struct report *r, const char *path, size_t max_bytes, size_t *len,
             struct err *err)
{
    const char *rel = run_rel(r, path);
    struct err e = {0};
    char *text;

    if (rel == NULL || r->run_fd < 0)
        return file_read(path, max_bytes, len, err);
    text = fsat_read(r->run_fd, rel, max_bytes, len, &e);
    if (text == NULL && (e.code == ELOOP || e.code == EXDEV ||
                         (e.code == EINVAL && strstr(e.msg, "regular")))) {
        report__note(r, "%s: not read: %s", rel,
                     e.code == ELOOP ? "a symbolic link"
                                     : "not a regular file");
        err_set(err, ENOENT, "%s: not read", path);
        return NULL;
    }
    if (text == NULL) /* e.msg starts with rel */
        err_set(err, e.code, "%s/%s", r->run_dir, e.msg);
    return text;
}

DIR *
report__opendir(const struct report *r, const char *rel)
{
    int fd = r->run_fd >= 0 ? fsat_dir(r->run_fd, rel, false, 0, NULL) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

    if (d == NULL && fd >= 0)
        close(fd);
    return d;
}

cJSON *
report__json_file(struct report *r, const char *path, bool *absent,
                  struct err *err)
{
    size_t len;
    struct err e = {0};
    cleanup_free char *text = report__read(r, path, JSON_MAX_BYTES, &len, &e);

    *absent = false;
    if (text == NULL) {
        if (e.code == ENOENT) {
            *absent = true;
            return NULL;
        }
        *err = e;
        err_status(err, EXIT_DATAERR);
        return NULL;
    }
    return report__json_text(text, len, path, 0, err);
}

int
report__jsonl_lines(struct report *r, const char *path, const char *text,
                    size_t len,
                    int (*fn)(struct report *r, void *ctx, int line,
                              const char *text, size_t len, struct err *err),
                    void *ctx, struct err *err)
{
    int line = 0;

    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct err e = {0};

        line++;
        if (strspn(p, " \t\r") < n &&
            fn(r, ctx, line, p, n, nl ? err : &e) < 0) {
            if (nl != NULL)
                return -1;
            report__note(r, "%s:%d: the last line is cut short; ignored", path,
                         line);
            break;
        }
        p += n + 1;
    }
    return 0;
}

static const char *
type_name(int type)
{
    static const struct {
        int type;
        const char *name;
    } names[] = {{cJSON_Number, "a number"},    {cJSON_String, "a string"},
                 {cJSON_Array, "an array"},     {cJSON_Object, "an object"},
                 {cJSON_True, "true or false"}, {cJSON_False, "true or false"}};

    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (names[i].type == type)
            return names[i].name;
    return "another value";
}

/* o[key] when it has the given cJSON type; NULL when absent or null; NULL
 * and an error when it has another type. */
const cJSON *
report__jitem(struct report_jctx *c, const cJSON *o, const char *where,
              const char *key, int type)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    int t;

    if (v == NULL || cJSON_IsNull(v))
        return NULL;
    t = v->type & 0xff;
    if (t == type || (type == cJSON_True && t == cJSON_False))
        return v;
    if (!c->failed) {
        err_set(c->err, EINVAL, "%s: %s%s%s: expected %s, got %s", c->path,
                where ? where : "", where && *where ? "." : "", key,
                type_name(type), type_name(t));
        err_status(c->err, EXIT_DATAERR);
    }
    c->failed = true;
    return NULL;
}

int64_t
report__jnum(struct report_jctx *c, const cJSON *o, const char *where,
             const char *key)
{
    const cJSON *v = report__jitem(c, o, where, key, cJSON_Number);

    /* past INT64_MAX (2^63, exact as a double) is as good as unknown */
    return v && v->valuedouble >= 0 && v->valuedouble < 9223372036854775808.0
               ? (int64_t)v->valuedouble
               : -1;
}

double
report__jdouble(struct report_jctx *c, const cJSON *o, const char *where,
                const char *key)
{
    const cJSON *v = report__jitem(c, o, where, key, cJSON_Number);

    return v ? v->valuedouble : -1;
}

const char *
report__jstr(struct report_jctx *c, const cJSON *o, const char *where,
             const char *key)
{
    const cJSON *v = report__jitem(c, o, where, key, cJSON_String);

    return v ? v->valuestring : NULL;
}

bool
report__jbool(struct report_jctx *c, const cJSON *o, const char *where,
              const char *key)
{
    const cJSON *v = report__jitem(c, o, where, key, cJSON_True);

    return v != NULL && cJSON_IsTrue(v);
}

static char *
dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* ---- result.json --------------------------------------------------------- */

/* memory.pre_oom (docs/memory.md): null when the coordinator never
 * asked for a pre-OOM snapshot; absent in runs from before it could. */
static void
inst_preoom(struct report_jctx *c, struct report_inst *in, const cJSON *m,
            const char *where)
{
    char w[160];
    const cJSON *p;
    const char *via;

    in->preoom = (struct report_preoom){0, -1, -1, -1, -1, ""};
    in->has_preoom = m != NULL && cJSON_HasObjectItem(m, "pre_oom");
    snprintf(w, sizeof(w), "%s.pre_oom", where);
    p = report__jitem(c, m, where, "pre_oom", cJSON_Object);
    if (p == NULL)
        return;
    /* an object says it asked at least once */
    in->preoom.requests = report__jnum(c, p, w, "requests");
    if (in->preoom.requests < 1)
        in->preoom.requests = 1;
    in->preoom.first_ms = report__jnum(c, p, w, "first_ms");
    in->preoom.last_ms = report__jnum(c, p, w, "last_ms");
    in->preoom.usage = report__jnum(c, p, w, "usage_bytes");
    in->preoom.limit = report__jnum(c, p, w, "limit_bytes");
    via = report__jstr(c, p, w, "via");
    if (via != NULL)
        snprintf(in->preoom.via, sizeof(in->preoom.via), "%s", via);
}

static void
inst_memory(struct report_jctx *c, struct report_inst *in, const cJSON *m,
            const char *where)
{
    char w[128];

    snprintf(w, sizeof(w), "%s.memory", where);
    in->peak = report__jnum(c, m, w, "peak_bytes");
    in->peak_t_ms = report__jnum(c, m, w, "peak_at_ms");
    in->final = report__jnum(c, m, w, "final_bytes");
    in->limit = report__jnum(c, m, w, "limit_bytes");
    in->oom = in->oom || report__jbool(c, m, w, "oom_kill");
    in->oom_t_ms = report__jnum(c, m, w, "oom_at_ms");
    in->before_oom = report__jnum(c, m, w, "usage_before_oom_bytes");
    inst_preoom(c, in, m, w);
}

static int
result_inst(struct report *r, struct report_jctx *c, const cJSON *o, size_t i)
{
    char where[64];
    const char *group, *lost;
    const cJSON *conn;
    int64_t index;
    struct report_inst *in;

    snprintf(where, sizeof(where), "instances[%zu]", i);
    group = report__jstr(c, o, where, "group");
    index = report__jnum(c, o, where, "index");
    if (c->failed)
        return -1;
    if (group == NULL || index < 0 || strchr(group, '/') != NULL ||
        group[0] == '.') {
        err_set(c->err, EINVAL, "%s: %s: expected a group id and an index",
                c->path, where);
        c->failed = true;
        return err_status(c->err, EXIT_DATAERR);
    }
    in = report__inst_add(r, group, (int)index);
    in->listed = true;
    in->blackbox = report__group_get(r, group)->blackbox;
    in->outcome = dup_or_null(report__jstr(c, o, where, "outcome"));
    in->how = dup_or_null(report__jstr(c, o, where, "how"));
    in->error = dup_or_null(report__jstr(c, o, where, "error"));
    in->started = report__jstr(c, o, where, "started") != NULL;
    in->oom = report__jbool(c, o, where, "oom_killed");
    conn = report__jitem(c, o, where, "connected", cJSON_True);
    in->never_connected = conn != NULL && cJSON_IsFalse(conn);
    inst_memory(c, in, report__jitem(c, o, where, "memory", cJSON_Object),
                where);
    if (report__restarts_load(r, c, in, o, where) < 0)
        return -1;
    lost = report__jstr(c, o, where, "monitor_lost");
    if (lost != NULL)
        report__note(r, "%s: the memory monitor lost this instance: %s",
                     in->label, lost);
    return c->failed ? -1 : 0;
}

static void
result_groups(struct report *r, struct report_jctx *c, const cJSON *arr)
{
    const cJSON *o;
    size_t i = 0;

    cJSON_ArrayForEach (o, arr) {
        char where[64];
        const char *id, *program;

        snprintf(where, sizeof(where), "groups[%zu]", i++);
        id = report__jstr(c, o, where, "id");
        program = report__jstr(c, o, where, "program");
        if (id != NULL && strchr(id, '/') == NULL && id[0] != '.') {
            struct report_group *g = report__group_get(r, id);

            g->limit = report__jnum(c, o, where, "memory_limit_bytes");
            g->blackbox = program != NULL && strcmp(program, "plan") != 0;
        }
    }
}

static void
run_fields(struct report *r, struct report_jctx *c, const cJSON *j)
{
    r->run_id = dup_or_null(report__jstr(c, j, "", "run_id"));
    r->plan = dup_or_null(report__jstr(c, j, "", "plan"));
    r->name = dup_or_null(report__jstr(c, j, "", "name"));
    r->case_name = dup_or_null(report__jstr(c, j, "", "case"));
    r->runner = dup_or_null(report__jstr(c, j, "", "runner"));
}

static int
load_result(struct report *r, struct err *err)
{
    cleanup_free char *path = path_join(r->run_dir, "result.json");
    struct report_jctx c = {path, err, false};
    bool absent;
    cJSON *j = report__json_file(r, path, &absent, err);
    const cJSON *insts, *o;
    size_t i = 0;

    if (j == NULL)
        return absent ? 0 : -1;
    r->finished = true;
    run_fields(r, &c, j);
    r->outcome = dup_or_null(report__jstr(&c, j, "", "outcome"));
    r->started = dup_or_null(report__jstr(&c, j, "", "started"));
    r->start_ns = time_parse_rfc3339(r->started);
    r->duration_s = report__jdouble(&c, j, "", "duration_s");
    result_groups(r, &c, report__jitem(&c, j, "", "groups", cJSON_Array));
    if (!c.failed && report__result_stages(r, &c, j) < 0) {
        cJSON_Delete(j);
        return -1;
    }
    insts = report__jitem(&c, j, "", "instances", cJSON_Array);
    cJSON_ArrayForEach (o, insts) {
        if (c.failed || result_inst(r, &c, o, i++) < 0)
            break;
    }
    cJSON_Delete(j);
    return c.failed ? -1 : 0;
}

/* ---- without result.json ------------------------------------------------- */

static int
load_composition(struct report *r, struct err *err)
{
    cleanup_free char *path = path_join(r->run_dir, "composition.json");
    struct report_jctx c = {path, err, false};
    bool absent;
    cJSON *j = report__json_file(r, path, &absent, err);
    const cJSON *o;
    size_t i = 0;

    if (j == NULL)
        return absent ? 0 : -1;
    run_fields(r, &c, j);
    free(r->run_id);
    r->run_id = NULL;
    cJSON_ArrayForEach (o, report__jitem(&c, j, "", "groups", cJSON_Array)) {
        char where[64];
        const char *id;
        const cJSON *res;

        snprintf(where, sizeof(where), "groups[%zu]", i++);
        id = report__jstr(&c, o, where, "id");
        res = report__jitem(&c, o, where, "resources", cJSON_Object);
        if (id != NULL && strchr(id, '/') == NULL && id[0] != '.')
            report__group_get(r, id)->limit =
                report__jnum(&c, res, where, "memory_bytes");
    }
    cJSON_Delete(j);
    return c.failed ? -1 : 0;
}

static bool
all_digits(const char *s)
{
    return *s != '\0' && strspn(s, "0123456789") == strlen(s) && strlen(s) < 9;
}

/* entry of the folder d is a folder itself (a link is not). */
static bool
is_subdir(DIR *d, const struct dirent *e)
{
    struct stat st;

    if (e->d_type != DT_UNKNOWN)
        return e->d_type == DT_DIR;
    return fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISDIR(st.st_mode);
}

/* Add the <group>/<index> folders of one group. */
static void
scan_group(struct report *r, const char *group)
{
    DIR *d = report__opendir(r, group);
    struct dirent *e;

    while (d != NULL && (e = readdir(d)) != NULL)
        if (all_digits(e->d_name) && is_subdir(d, e))
            report__inst_add(r, group, atoi(e->d_name));
    if (d != NULL)
        closedir(d);
}

/* Without result.json: every folder of the run that holds numbered
 * instance folders is a group. */
static void
scan_folders(struct report *r)
{
    DIR *d = report__opendir(r, ".");
    struct dirent *e;

    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.' && is_subdir(d, e))
            scan_group(r, e->d_name);
    }
    if (d != NULL)
        closedir(d);
    for (size_t g = 0; g < r->ngroups; g++)
        scan_group(r, r->groups[g].id);
}

static int
cmp_inst(const void *a, const void *b)
{
    const struct report_inst *x = a, *y = b;
    int c = strcmp(x->group, y->group);

    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Order instances by group (in the groups' order) and index. */
static void
sort_insts(struct report *r)
{
    size_t k = 0;

    if (r->ninsts > 1)
        qsort(r->insts, r->ninsts, sizeof(*r->insts), cmp_inst);
    for (size_t g = 0; g < r->ngroups; g++) {
        for (size_t i = k; i < r->ninsts; i++) {
            struct report_inst t = r->insts[i];

            if (strcmp(t.group, r->groups[g].id) != 0)
                continue;
            memmove(&r->insts[k + 1], &r->insts[k], (i - k) * sizeof(t));
            r->insts[k++] = t;
        }
    }
}

/* ---- per instance ------------------------------------------------------ */

static bool
inst_dir_ok(const struct report *r, const struct report_inst *in)
{
    DIR *d = report__opendir(r, in->label);

    if (d == NULL)
        return false;
    closedir(d);
    return true;
}

static void
note_inst(struct report *r, const struct report_inst *in)
{
    if (in->listed && !in->started)
        report__note(r, "%s never started%s%s", in->label,
                     in->error ? ": " : "", in->error ? in->error : "");
    else if (!inst_dir_ok(r, in))
        report__note(r, "%s: no output folder", in->label);
    else if (in->series == NULL)
        report__note(r, "%s: no memory.csv (no memory samples)", in->label);
    else if (strcmp(in->series, "memory.csv") != 0)
        report__note(r, "%s: only %s: the memory series stopped early",
                     in->label, in->series);
}

static int
load_insts(struct report *r, struct err *err)
{
    for (size_t i = 0; i < r->ninsts; i++) {
        struct report_inst *in = &r->insts[i];

        if (report__csv_load(r, in, err) < 0 ||
            report__snaps_load(r, in, err) < 0 ||
            report__work_load(r, in, err) < 0)
            return -1;
        if (!r->finished)
            in->started = in->series != NULL || in->nsnaps > 0;
        note_inst(r, in);
    }
    return 0;
}

/* A run folder has composition.json from its start and result.json from
 * its end; a folder with neither is not one, and nothing is written in it. */
static bool
is_run_folder(const char *dir)
{
    cleanup_free char *c = path_join(dir, "composition.json");
    cleanup_free char *res = path_join(dir, "result.json");

    return path_exists(c) || path_exists(res);
}

/* Without result.json the run was interrupted (its coordinator is gone,
 * or `clean` found it so), is still running, or nobody can tell. */
static void
note_unfinished(struct report *r)
{
    struct run_lock lk;
    char why[320];

    if (run_lock_read(r->run_dir, &lk, NULL) == 0 &&
        run_lock_interrupted(&lk, why, sizeof(why))) {
        r->interrupted = true;
        free(r->outcome);
        r->outcome = xstrdup("interrupted");
        report__note(r,
                     "the run was interrupted: its coordinator ended before "
                     "the run did (%s); outcomes are unknown",
                     why);
        return;
    }
    report__note(r, "result.json is missing: the run did not finish (or "
                    "is still running); outcomes are unknown");
}

int
report__load(struct report *r, struct err *err)
{
    if (!path_is_dir(r->run_dir)) {
        err_set(err, path_exists(r->run_dir) ? ENOTDIR : ENOENT,
                "%s: no such run folder", r->run_dir);
        return err_status(err, EXIT_NOINPUT);
    }
    if (!is_run_folder(r->run_dir)) {
        err_set(err, ENOENT,
                "%s: not a run folder (it has neither composition.json nor "
                "result.json)",
                r->run_dir);
        return err_status(err, EXIT_NOINPUT);
    }
    r->run_fd = fsat_root(r->run_dir, err);
    if (r->run_fd < 0)
        return err_status(err, EXIT_NOINPUT);
    if (load_result(r, err) < 0)
        return -1;
    if (!r->finished) {
        note_unfinished(r);
        if (load_composition(r, err) < 0)
            return -1;
        scan_folders(r);
    }
    if (r->ngroups == 0 && r->ninsts == 0)
        report__note(r, "no groups and no instance folders found");
    sort_insts(r);
    if (load_insts(r, err) < 0 || report__bars_load(r, err) < 0 ||
        report__stages_load(r, err) < 0)
        return -1;
    report__snaps_clock(r);
    return 0;
}
