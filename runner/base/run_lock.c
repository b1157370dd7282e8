/*
 * run_lock.c — the coordinator's identity (see base/run_lock.h), so that
 * `testyard clean` removes only what a dead coordinator left and `report`
 * can say a run was interrupted rather than "still running".
 *
 * coordinator.json is written once when the run folder is made and
 * rewritten (write then rename) when the run ends; the run folder's top
 * level is the runner's own, and reads still follow no link and stop at a
 * few KiB. The same identity goes on containers and networks as labels,
 * so that `clean` decides from the engine's answer alone.
 */
#include "base/run_lock.h"

#include "ty_json.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_MAX_BYTES 4096
#define LABEL_PREFIX "testyard.coordinator."

/* Up to max-1 bytes of a small file, following no link; -1 with errno. */
static ssize_t
read_small(const char *path, char *buf, size_t max)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    ssize_t n = -1;
    int saved;

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0)
        n = -1;
    else if (!S_ISREG(st.st_mode))
        errno = EINVAL;
    else
        do
            n = read(fd, buf, max - 1);
        while (n < 0 && errno == EINTR);
    saved = errno;
    close(fd);
    errno = saved;
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* Field 22 of /proc/<pid>/stat, counted after the command's ")". */
static int
start_time_of(pid_t pid, unsigned long long *start)
{
    char path[64], buf[1024];
    const char *p;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return -1;
    if ((p = strrchr(buf, ')')) == NULL)
        return errno = EPROTO, -1;
    /* after ") " come field 3 (state) ... field 22 (starttime) */
    for (int field = 2; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p + 1, "%llu", start) != 1)
        return errno = EPROTO, -1;
    return 0;
}

static void
boot_id(char *out, size_t size)
{
    char buf[64];

    out[0] = '\0';
    if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) > 0)
        snprintf(out, size, "%.*s", (int)strcspn(buf, "\n"), buf);
}

int
run_identity_of(pid_t pid, struct run_identity *id, struct err *err)
{
    memset(id, 0, sizeof(*id));
    id->pid = pid ? (long)pid : (long)getpid();
    if (start_time_of((pid_t)id->pid, &id->start) < 0)
        return err_sys(err, errno, "/proc/%ld/stat", id->pid);
    boot_id(id->boot_id, sizeof(id->boot_id));
    if (gethostname(id->host, sizeof(id->host) - 1) < 0)
        return err_sys(err, errno, "gethostname");
    return 0;
}

enum run_liveness
run_identity_check(const struct run_identity *id, char *why, size_t size)
{
    struct run_identity me;
    unsigned long long start;

    if (run_identity_of(0, &me, NULL) < 0 || strcmp(me.host, id->host) != 0) {
        snprintf(why, size, "on another host (%s): can't tell", id->host);
        return RUN_ELSEWHERE;
    }
    if (me.boot_id[0] && id->boot_id[0] && strcmp(me.boot_id, id->boot_id)) {
        snprintf(why, size, "this host restarted since (pid %ld)", id->pid);
        return RUN_DEAD;
    }
    if (id->pid <= 0 || start_time_of((pid_t)id->pid, &start) < 0) {
        snprintf(why, size, "no process %ld on this host", id->pid);
        return RUN_DEAD;
    }
    if (start != id->start) {
        snprintf(why, size, "pid %ld is another process now", id->pid);
        return RUN_DEAD;
    }
    snprintf(why, size, "pid %ld on this host", id->pid);
    return RUN_ALIVE;
}

/* ---- labels ------------------------------------------------------------ */

int
run_identity_labels(char *out[RUN_LABELS_N], struct err *err)
{
    struct run_identity id;

    if (run_identity_of(0, &id, err) < 0)
        return -1;
    out[0] = xasprintf(LABEL_PREFIX "pid=%ld", id.pid);
    out[1] = xasprintf(LABEL_PREFIX "start=%llu", id.start);
    out[2] = xasprintf(LABEL_PREFIX "boot=%s", id.boot_id);
    out[3] = xasprintf(LABEL_PREFIX "host=%s", id.host);
    return 0;
}

static const char *
label(const cJSON *labels, const char *key)
{
    char name[64];
    const cJSON *v;

    snprintf(name, sizeof(name), LABEL_PREFIX "%s", key);
    v = cJSON_GetObjectItemCaseSensitive(labels, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A decimal number and nothing else. */
static int
parse_ull(const char *s, unsigned long long *v)
{
    char *end;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno || *end ? -1 : 0;
}

int
run_identity_from_labels(const cJSON *labels, struct run_identity *id)
{
    const char *boot = label(labels, "boot"), *host = label(labels, "host");
    unsigned long long pid;

    memset(id, 0, sizeof(*id));
    if (parse_ull(label(labels, "pid"), &pid) < 0 || pid > 1u << 30 ||
        parse_ull(label(labels, "start"), &id->start) < 0 || boot == NULL ||
        host == NULL)
        return -1;
    id->pid = (long)pid;
    snprintf(id->boot_id, sizeof(id->boot_id), "%s", boot);
    snprintf(id->host, sizeof(id->host), "%s", host);
    return 0;
}

/* ---- coordinator.json -------------------------------------------------- */

static int
write_lock(const char *run_dir, const struct run_identity *id,
           const char *state, struct err *err)
{
    cleanup_free char *path = path_join(run_dir, RUN_LOCK_FILE);
    cleanup_free char *text = NULL;
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "pid", (double)id->pid);
    cJSON_AddNumberToObject(o, "start_ticks", (double)id->start);
    ty__json_string(o, "boot_id", id->boot_id);
    ty__json_string(o, "host", id->host);
    ty__json_string(o, "state", state);
    ty__json_time(o, "updated", now_wall_ns());
    text = cJSON_Print(o);
    cJSON_Delete(o);
    return file_write_atomic(path, text, strlen(text), err);
}

int
run_lock_create(const char *run_dir, struct err *err)
{
    struct run_identity id;

    if (run_identity_of(0, &id, err) < 0)
        return err_prefix(err, "the coordinator's identity");
    return write_lock(run_dir, &id, "running", err);
}

int
run_lock_mark(const char *run_dir, const char *state, struct err *err)
{
    struct run_lock lk;

    if (run_lock_read(run_dir, &lk, err) < 0)
        return -1;
    return write_lock(run_dir, &lk.id, state, err);
}

static int
parse_lock(const cJSON *j, struct run_lock *lk)
{
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(j, "pid");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "start_ticks");
    const cJSON *boot = cJSON_GetObjectItemCaseSensitive(j, "boot_id");
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(j, "host");
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(j, "state");

    if (!cJSON_IsNumber(pid) || !cJSON_IsNumber(st) || !cJSON_IsString(host) ||
        !cJSON_IsString(state) || pid->valuedouble < 1 ||
        pid->valuedouble > (double)(1 << 30) || st->valuedouble < 0)
        return -1;
    lk->id.pid = (long)pid->valuedouble;
    lk->id.start = (unsigned long long)st->valuedouble;
    snprintf(lk->id.boot_id, sizeof(lk->id.boot_id), "%s",
             cJSON_IsString(boot) ? boot->valuestring : "");
    snprintf(lk->id.host, sizeof(lk->id.host), "%s", host->valuestring);
    snprintf(lk->state, sizeof(lk->state), "%s", state->valuestring);
    return 0;
}

int
run_lock_read(const char *run_dir, struct run_lock *lk, struct err *err)
{
    cleanup_free char *path = path_join(run_dir, RUN_LOCK_FILE);
    char buf[LOCK_MAX_BYTES];
    cJSON *j;
    int rc;

    memset(lk, 0, sizeof(*lk));
    if (read_small(path, buf, sizeof(buf)) < 0)
        return err_sys(err, errno, "%s", path);
    j = cJSON_Parse(buf);
    rc = parse_lock(j, lk);
    cJSON_Delete(j);
    if (rc < 0)
        return err_set(err, EINVAL,
                       "%s: expected pid, start_ticks, host and state", path);
    return 0;
}

bool
run_lock_interrupted(const struct run_lock *lk, char *why, size_t size)
{
    if (strcmp(lk->state, "interrupted") == 0) {
        snprintf(why, size, "pid %ld on %s, found gone by testyard clean",
                 lk->id.pid, lk->id.host);
        return true;
    }
    return strcmp(lk->state, "running") == 0 &&
           run_identity_check(&lk->id, why, size) == RUN_DEAD;
}
