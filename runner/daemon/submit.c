/*
 * submit.c — a composition submitted to the queue: checked at once with
 * the loader a run uses (its file:line:col message goes back as it is),
 * refused when larger than the whole budget, then copied with its plan's
 * source into DATA/tasks/ID/ so later edits do not change what runs; and
 * cancel. Nothing is stored for a refused submission.
 */
#include "daemon/daemon_int.h"

#include "backend/backend.h"
#include "base/fsat.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define COMPOSITION_MAX ((size_t)4 << 20)

void
daemon__wake(struct daemon *d)
{
    uint64_t one = 1;

    if (write(d->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        return;
}

static int
bad_request(int *http, struct err *err, const char *what)
{
    *http = 400;
    err_set(err, EINVAL, "%s", what);
    return err_status(err, EXIT_USAGE);
}

/* The request's fields into t (name, priority) and *path, *plans. */
static int
read_request(const cJSON *req, struct daemon_task *t, const char **path,
             const char **plans, int *http, struct err *err)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, "composition");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "plans");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(req, "priority");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(req, "name");

    if (!cJSON_IsString(c) || c->valuestring[0] != '/')
        return bad_request(http, err,
                           "composition: expected an absolute "
                           "path");
    if (p != NULL && !cJSON_IsNull(p) &&
        (!cJSON_IsString(p) || p->valuestring[0] != '/'))
        return bad_request(http, err, "plans: expected an absolute path");
    if (pr != NULL && !cJSON_IsNull(pr) &&
        (!cJSON_IsNumber(pr) || pr->valuedouble != (double)pr->valueint))
        return bad_request(http, err, "priority: expected a whole number");
    if (n != NULL && !cJSON_IsNull(n) &&
        (!cJSON_IsString(n) || n->valuestring[0] == '\0'))
        return bad_request(http, err, "name: expected a string");
    *path = c->valuestring;
    *plans = cJSON_IsString(p) ? p->valuestring : NULL;
    t->priority = cJSON_IsNumber(pr) ? pr->valueint : 0;
    t->name = cJSON_IsString(n) ? xstrdup(n->valuestring) : NULL;
    t->build_seconds = -1;
    return 0;
}

static int
copy_composition(const char *path, int dirfd, const char *file, struct err *err)
{
    size_t len;
    cleanup_free char *text = file_read(path, COMPOSITION_MAX, &len, err);
    cleanup_close int fd = -1;

    if (text == NULL)
        return -1;
    fd = fsat_open(dirfd, file, O_WRONLY | O_CREAT | O_EXCL, 0644, err);
    if (fd < 0)
        return -1;
    if (fd_write_all(fd, text, len) < 0)
        return err_sys(err, errno, "%s", file);
    return 0;
}

char *
daemon__snapshot_dir(struct daemon *d, struct err *err)
{
    char *tmp = xasprintf("%s/tasks/.new-XXXXXX", d->data);

    if (mkdtemp(tmp) != NULL)
        return tmp;
    err_sys(err, errno, "%s", tmp);
    err_prefix(err, "the task's snapshot");
    err_status(err, err_io_status(err->code));
    free(tmp);
    return NULL;
}

/* The snapshot in *tmp, a fresh DATA/tasks/.new-XXXXXX made when NULL. */
static int
snapshot(struct daemon *d, const struct composition *c,
         const struct daemon_task *t, char **tmp, struct err *err)
{
    cleanup_close int fd = -1;
    cleanup_free char *rel = NULL;

    if (*tmp == NULL && (*tmp = daemon__snapshot_dir(d, err)) == NULL)
        return -1;
    if ((fd = fsat_root(*tmp, err)) < 0 ||
        copy_composition(c->path, fd, t->file, err) < 0)
        goto fail;
    if (c->plan_dir != NULL) {
        rel = xasprintf("plans/%s", c->plan);
        if (admit__copy_tree(c->plan_dir, fd, rel, err) < 0)
            goto fail;
    }
    return 0;
fail:
    err_prefix(err, "the task's snapshot");
    err_status(err, err_io_status(err->code));
    rm_rf(*tmp, NULL);
    free(*tmp);
    *tmp = NULL;
    return -1;
}

struct composition *
daemon__load(struct daemon *d, const char *path, const char *plans, int *http,
             struct err *err)
{
    struct composition_opts copts = {0};
    struct composition *c;

    copts.plans_dir = plans ? plans : d->o->plans_dir;
    copts.runners = backend_runners();
    c = composition_load(path, &copts, err);
    if (c == NULL) {
        *http = 400;
        err_status(err, err->status ? err->status : EXIT_DATAERR);
    }
    return c;
}

static void
describe(struct daemon_task *t, const struct composition *c, const char *path)
{
    const char *slash = strrchr(path, '/');

    t->comp_name = xstrdup(c->name);
    if (t->name == NULL)
        t->name = xstrdup(c->name);
    t->path = xstrdup(path);
    t->file = xstrdup(slash + 1);
    t->origin = path_dirname(path);
    t->state = TASK_QUEUED;
    t->exit_status = -1;
    t->submitted_ns = now_wall_ns();
    admit__need(c, &t->need);
}

int
daemon__enqueue(struct daemon *d, struct daemon_task *t, const char *tmp,
                struct err *err)
{
    cleanup_free char *dst = NULL;

    if (daemon__exec(d->db, "BEGIN IMMEDIATE;", err) < 0)
        return -1;
    if (daemon__task_insert(d->db, t, err) < 0)
        goto fail;
    dst = xasprintf("%s/tasks/%lld", d->data, (long long)t->id);
    /* a folder under this id is a daemon's that died before its commit:
     * no row names it */
    if (rename(tmp, dst) < 0 && (errno == ENOTEMPTY || errno == EEXIST))
        rm_rf(dst, NULL);
    if (path_exists(tmp) && rename(tmp, dst) < 0) {
        err_sys(err, errno, "%s", dst);
        goto fail;
    }
    if (daemon__exec(d->db, "COMMIT;", err) == 0)
        return 0;
    rename(dst, tmp);
fail:
    daemon__exec(d->db, "ROLLBACK;", NULL);
    return -1;
}

int
daemon__submit_path(struct daemon *d, const char *path, const char *plans,
                    struct daemon_task *t, char **tmp, int *http,
                    struct err *err)
{
    struct composition *c = NULL;
    char why[256];
    int rc = -1;

    *http = 500;
    if ((c = daemon__load(d, path, plans, http, err)) == NULL)
        return -1;
    describe(t, c, path);
    if (admit__too_large(&t->need, &d->budget, why, sizeof(why))) {
        *http = 422;
        err_set(err, EFBIG, "%s: larger than the daemon's whole budget: %s",
                path, why);
        err_status(err, EXIT_DATAERR);
    } else if (snapshot(d, c, t, tmp, err) == 0) {
        pthread_mutex_lock(&d->mu);
        rc = daemon__enqueue(d, t, *tmp, err);
        pthread_mutex_unlock(&d->mu);
        *http = rc == 0 ? 201 : 500;
    } else {
        *http = err->status == EXIT_IOERR ? 507 : 500;
    }
    composition_destroy(&c);
    if (rc == 0)
        daemon__wake(d);
    return rc;
}

int
daemon__submit(struct daemon *d, const cJSON *req, struct daemon_task *t,
               int *http, struct err *err)
{
    const char *path = NULL, *plans = NULL;
    cleanup_free char *tmp = NULL;
    int rc;

    *http = 500;
    if (read_request(req, t, &path, &plans, http, err) < 0)
        return -1;
    rc = daemon__submit_path(d, path, plans, t, &tmp, http, err);
    if (rc < 0 && tmp != NULL)
        rm_rf(tmp, NULL);
    return rc;
}

int
daemon__cancel(struct daemon *d, int64_t id, struct daemon_task *t,
               struct err *err)
{
    if (daemon__task_get(d->db, id, t, err) < 0)
        return -1;
    if (t->state == TASK_QUEUED) {
        t->state = TASK_CANCELED;
        t->ended_ns = now_wall_ns();
        free(t->reason);
        t->reason = xstrdup("canceled before it started");
        if (daemon__task_update(d->db, t, err) < 0)
            return -1;
        daemon__task_ended(d, t);
        return 0;
    }
    for (size_t i = 0; i < d->nruns; i++) {
        struct daemon_run *r = &d->runs[i];

        if (r->id != id || r->exited)
            continue;
        r->cancel = true;
        if (r->sigint_ns == 0) {
            kill(r->pid, SIGINT);
            r->sigint_ns = now_mono_ns();
        }
        t->cancel = true;
        return daemon__task_update(d->db, t, err);
    }
    return 0; /* ended already: nothing to do */
}
