/*
 * cmd_collect.c — `testyard collect RUN_DIR [-o FILE]`: pack a run folder
 * into a .tgz laid out as Testground's collect lays it out,
 * <run-id>/<group>/<index>/..., so scripts written for Testground's
 * archives read ours.
 *
 * The archive streams through the tar writer (gzip through zlib) into a
 * temporary file next to the output, which is renamed into place once
 * complete: a failed or interrupted collect leaves no half archive.
 * Instances can write their folders, so nothing in the run is followed;
 * links that stay inside the run are archived as links, the others are
 * left out and named on stderr (tar_add_tree).
 */
#include "cmd.h"
#include "base/tar.h"
#include "base/util.h"
#include "ty_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard collect RUN_DIR [-o FILE]\n\n"
            "Pack a run folder into a gzipped tar whose paths are\n"
            "<run-id>/<group>/<index>/..., as Testground's collect writes.\n\n"
            "  -o FILE    where to write it (default: <run-id>.tgz here)\n\n"
            "Exit status: 0 written, 64 usage, 66 no such run folder,\n"
            "73 cannot create the output, 74 read or write error.\n");
}

static const struct cmd_usage collect_usage = {"collect", "one RUN_DIR", usage};

static int
collect_opt(int c, char *arg, void *ctx, struct err *err)
{
    const char **out = ctx;

    (void)c; /* 'o' */
    (void)err;
    *out = arg;
    return 0;
}

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, const char **dir, const char **out,
           struct err *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&collect_usage, ":o:h", longopts,
                                         collect_opt, 1};
    int rc = cmd_parse(&spec, argc, argv, (void *)out, err);

    if (rc == 0)
        *dir = argv[optind];
    return rc;
}

/* The run folder's real path and its last component, the run id. */
static int
resolve_run(const char *dir, char **real, const char **id, struct err *err)
{
    char buf[PATH_MAX];

    if (realpath(dir, buf) == NULL) {
        err_sys(err, errno, "%s", dir);
        return err_status(err, EXIT_NOINPUT);
    }
    if (!path_is_dir(buf)) {
        err_set(err, ENOTDIR, "%s: not a folder", dir);
        return err_status(err, EXIT_NOINPUT);
    }
    *real = xstrdup(buf);
    *id = strrchr(*real, '/') + 1;
    if (**id == '\0') {
        err_set(err, EINVAL, "%s: not a run folder", dir);
        return err_status(err, EXIT_USAGE);
    }
    return 0;
}

/* Refuse an output inside the folder being packed: it would pack itself. */
static int
check_outside(const char *run, const char *out, struct err *err)
{
    cleanup_free char *odir = path_dirname(out);
    char buf[PATH_MAX];
    size_t n = strlen(run);

    if (realpath(odir, buf) == NULL) {
        err_sys(err, errno, "%s", odir);
        return err_status(err, EXIT_CANTCREAT);
    }
    if (strncmp(buf, run, n) == 0 && (buf[n] == '\0' || buf[n] == '/')) {
        err_set(err, EINVAL,
                "%s is inside the run folder; choose another "
                "place with -o",
                out);
        return err_status(err, EXIT_USAGE);
    }
    return 0;
}

#define SKIPS_SHOWN 10

/* A link pointing outside the run, left out of the archive. */
static void
skipped(void *arg, const char *name, const char *target)
{
    size_t *n = arg;

    if ((*n)++ < SKIPS_SHOWN)
        fprintf(stderr,
                "testyard collect: left out %s -> %s: a link pointing "
                "outside the run\n",
                name, target);
}

static int
pack(const char *run, const char *id, int fd, uint64_t *entries,
     struct err *err)
{
    struct tar *t = tar_new_fd(fd, true);
    size_t nskipped = 0;
    int rc = 0;

    if (tar_add_tree(t, id, run, skipped, &nskipped, err) < 0 ||
        tar_finish(t, err) < 0)
        rc = err_status(err, EXIT_IOERR);
    *entries = tar_entries(t);
    tar_destroy(&t);
    if (nskipped > SKIPS_SHOWN)
        fprintf(stderr, "testyard collect: and %zu more such links\n",
                nskipped - SKIPS_SHOWN);
    return rc;
}

/* Write the archive to a temporary file and rename it over out. */
static int
collect(const char *run, const char *id, const char *out, uint64_t *entries,
        struct err *err)
{
    cleanup_free char *tmp = xasprintf("%s.tmp.XXXXXX", out);
    mode_t mask = umask(0);
    int fd, rc;

    umask(mask);
    if ((fd = mkstemp(tmp)) < 0) {
        err_sys(err, errno, "%s", out);
        return err_status(err, EXIT_CANTCREAT);
    }
    fchmod(fd, 0666 & ~mask);
    if (pack(run, id, fd, entries, err) < 0) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    if ((rc = ty__commit_at(fd, AT_FDCWD, tmp, out, true)) < 0) {
        err_sys(err, -rc, "%s", out);
        return err_status(err, err_io_status(-rc));
    }
    return 0;
}

int
cmd_collect(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *id = NULL;
    cleanup_free char *run = NULL;
    cleanup_free char *def = NULL;
    struct err err = {0};
    uint64_t entries = 0;
    struct stat st;
    int rc = parse_args(argc, argv, &dir, &out, &err);

    if (rc != 0)
        return cmd_args_end(&collect_usage, rc, &err);
    if (resolve_run(dir, &run, &id, &err) == 0) {
        if (out == NULL)
            out = def = xasprintf("%s.tgz", id);
        if (check_outside(run, out, &err) == 0 &&
            collect(run, id, out, &entries, &err) == 0) {
            stat(out, &st);
            printf("wrote %s: %llu entries, %lld bytes\n", out,
                   (unsigned long long)entries, (long long)st.st_size);
            return 0;
        }
    }
    fprintf(stderr, "testyard collect: %s\n", err.msg);
    return err.status ? err.status : EXIT_IOERR;
}
