/*
 * cmd_history.c — `testyard history NAME`: the recorded runs of a
 * composition or a schedule and the change points of each figure
 * (runner/history/history.h), read from DATA/testyard.db; and `testyard
 * history import RUN_DIR...`, which records finished run folders as the
 * daemon records its runs (how runs made without the daemon get into the
 * history). `--fits` shows the slopes of the report's fits against the
 * work done in place of the runs. docs/scheduling.md, "History and change
 * points", says what is recorded and how the change points are found.
 */
#include "cmd.h"
#include "daemon/daemon.h"
#include "history/history.h"
#include "ty_time.h"
#include "ty_units.h"
#include "base/jsonpretty.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum history_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV };

struct history_args {
    const char *data, *name, *version, *since;
    enum history_format format;
    bool fits;         /* --fits: the fits' slopes in place of the runs */
    double min_effect; /* < 0: the default */
    int64_t since_ns;
};

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard history [--data DIR] [--since TIME] [--csv | "
            "--json]\n"
            "                        [--fits] [--min-effect PCT] NAME\n"
            "       testyard history import [--data DIR] [--name NAME] "
            "[--version V]\n"
            "                        RUN_DIR...\n\n"
            "Print the recorded runs of NAME (a composition's metadata.name\n"
            "or a schedule's name): per run its date, version and outcome,\n"
            "per group its peak, final and growth per round; then the\n"
            "change points of each figure (E-Divisive means), and the\n"
            "slopes of the report's fits against the work done.\n"
            "`import` records finished run folders (result.json and\n"
            "summary.json), numbered in the order given.\n\n"
            "  --data DIR        the data folder (default $TESTYARD_DATA, "
            "else\n"
            "                    $XDG_STATE_HOME/testyard)\n"
            "  --since TIME      runs started at or after TIME: RFC 3339, or "
            "a\n"
            "                    duration back from now (36h, 30d)\n"
            "  --json            an array, one object per run\n"
            "  --csv             one row per run and group\n"
            "  --fits            the fits' slopes: per fit its last slope, "
            "the\n"
            "                    change since the run before, its verdict, "
            "its\n"
            "                    slope per run and their change points "
            "(with\n"
            "                    --json one object per fit, --csv one row "
            "per\n"
            "                    run and fit)\n"
            "  --min-effect PCT  smallest change of a figure's mean reported\n"
            "                    (default 5)\n"
            "  --name NAME       import: record under NAME (default: the "
            "run's)\n"
            "  --version V       import: the version (commit) to record\n\n"
            "Exit status: 0, 64 usage, 65 a malformed run folder or "
            "database,\n"
            "66 no such name, run folder or database, 74 cannot write the\n"
            "database.\n");
}

static const struct cmd_usage history_usage = {"history", "one NAME", usage};
static const struct cmd_usage import_usage = {"history import",
                                              "one or more RUN_DIR", usage};

/* "36h", "90m", "30d" (days, which Go's durations lack). */
static int
parse_ago(const char *s, int64_t *ns)
{
    char why[128], *end;
    long long days;

    errno = 0;
    days = strtoll(s, &end, 10);
    if (end != s && strcmp(end, "d") == 0 && errno == 0 && days >= 0 &&
        days < 100000) {
        *ns = days * 86400LL * 1000000000LL;
        return 0;
    }
    return ty__parse_duration(s, ns, why, sizeof(why));
}

static int
parse_since(struct history_args *a, const char *s, struct err *err)
{
    int64_t ns;

    a->since = s;
    if (ty__parse_rfc3339(s, &a->since_ns) == 0)
        return 0;
    if (parse_ago(s, &ns) == 0 && ns >= 0) {
        a->since_ns = now_wall_ns() - ns;
        return 0;
    }
    return cmd_usage_err(err, CMD_EVALUE,
                         "--since: expected an RFC 3339 time or a duration "
                         "like 36h or 30d, got \"%s\"",
                         s);
}

static int
parse_pct(struct history_args *a, const char *s, struct err *err)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end != s && *end == '%')
        end++;
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < 0 ||
        v > 10000)
        return cmd_usage_err(err, CMD_EVALUE,
                             "--min-effect: expected a percentage like 5 or "
                             "2.5%%, got \"%s\"",
                             s);
    a->min_effect = v / 100;
    return 0;
}

static int
history_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct history_args *a = ctx;

    switch (c) {
    case 'd':
        a->data = arg;
        return 0;
    case 'n':
        a->name = arg;
        return 0;
    case 'V':
        a->version = arg;
        return 0;
    case 's':
        return parse_since(a, arg, err);
    case 'e':
        return parse_pct(a, arg, err);
    case 'f':
        a->fits = true;
        return 0;
    default: /* 'j', 'c' */
        if (a->format != FORMAT_TABLE)
            return cmd_usage_err(err, CMD_ESHAPE,
                                 "--csv and --json: one or the other");
        a->format = c == 'j' ? FORMAT_JSON : FORMAT_CSV;
        return 0;
    }
}

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, bool import, struct history_args *a,
           struct err *err)
{
    static const struct option show[] = {
        {"data", required_argument, NULL, 'd'},
        {"since", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"fits", no_argument, NULL, 'f'},
        {"min-effect", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct option imp[] = {
        {"data", required_argument, NULL, 'd'},
        {"name", required_argument, NULL, 'n'},
        {"version", required_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const struct cmd_spec spec = {import ? &import_usage : &history_usage, ":h",
                                  import ? imp : show, history_opt,
                                  import ? -1 : 1};

    return cmd_parse(&spec, argc, argv, a, err);
}

/* ---- the data folder and the database ------------------------------ */

/* DATA (as the daemon finds it: daemon_data_dir) and its database,
 * opened and migrated as the daemon opens it; made when create. */
static sqlite3 *
open_db(const char *opt, bool create, struct err *err)
{
    cleanup_free char *dir = daemon_data_dir(opt, create, err);
    sqlite3 *db = NULL;

    if (dir == NULL)
        return NULL;
    if (daemon_db_open(dir, create, &db, err) == 0)
        return db;
    if (err->code == ENOENT && !create) {
        err_set(err, ENOENT,
                "%s/testyard.db: no history yet (no such "
                "database)",
                dir);
        err_status(err, EXIT_NOINPUT);
    }
    return NULL;
}

/* ---- the commands --------------------------------------------------- */

static int
fail(const char *cmd, const struct err *err)
{
    fprintf(stderr, "testyard %s: %s\n", cmd, err->msg);
    return err->status ? err->status : EXIT_SOFTWARE;
}

static void
print_history(const struct history *h, enum history_format f, bool fits)
{
    char *text;
    cJSON *j;

    if (f == FORMAT_CSV) {
        (fits ? history_fits_csv : history_csv)(h, stdout);
        return;
    }
    if (f == FORMAT_TABLE) {
        (fits ? history_print_fits : history_print)(h, stdout);
        return;
    }
    j = fits ? history_fits_json(h) : history_json(h);
    text = jsonpretty_print(j);
    fputs(text, stdout);
    free(text);
    cJSON_Delete(j);
}

static int
show(const struct history_args *a)
{
    struct err err = {0};
    sqlite3 *db = open_db(a->data, false, &err);
    struct history_cp_opts o;
    struct history *h;

    if (db == NULL)
        return fail("history", &err);
    h = history_load(db, a->name, a->since_ns, &err);
    sqlite3_close(db);
    if (h == NULL)
        return fail("history", &err);
    history_cp_defaults(&o);
    if (a->min_effect >= 0)
        o.min_effect = a->min_effect;
    history_analyse(h, &o);
    print_history(h, a->format, a->fits);
    history_destroy(&h);
    return fflush(stdout) == 0 ? 0 : EXIT_IOERR;
}

static int
import(const struct history_args *a, int n, char **dirs)
{
    struct err err = {0};
    sqlite3 *db = open_db(a->data, true, &err);
    struct history_meta m = {
        .name = a->name, .version = a->version, .build_seconds = -1};
    int status = 0;

    if (db == NULL)
        return fail("history import", &err);
    for (int i = 0; i < n; i++) {
        int64_t num = history_record(db, &m, dirs[i], &err);

        if (num < 0) {
            int rc = fail("history import", &err);

            status = status ? status : rc;
            err_clear(&err);
            continue;
        }
        printf("%s: run %lld\n", dirs[i], (long long)num);
    }
    sqlite3_close(db);
    return status;
}

int
cmd_history(int argc, char **argv)
{
    struct history_args a = {.min_effect = -1};
    struct err err = {0};
    bool imp = argc > 1 && strcmp(argv[1], "import") == 0;
    int rc = parse_args(argc - imp, argv + imp, imp, &a, &err);

    if (rc != 0)
        return cmd_args_end(imp ? &import_usage : &history_usage, rc, &err);
    if (imp)
        return import(&a, argc - imp - optind, argv + imp + optind);
    a.name = argv[optind];
    return show(&a);
}
