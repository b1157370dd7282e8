/*
 * series_procs.c — reading an instance's processes for processes.csv (see
 * run/series_int.h): the pids of its cgroup (cgroup.procs), or of its main
 * process and that process's descendants found by a scan of /proc, and
 * per process its /proc/<pid>/stat, status and comm, each read once into
 * a bounded buffer beneath the process's own /proc folder, so the three
 * are of one process even if its pid is reused a moment later.
 */
#include "run/series_int.h"

#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
series__parse_stat(const char *text, pid_t *ppid, int64_t *utime,
                   int64_t *stime)
{
    const char *p = strrchr(text, ')');
    long long v[13];
    char *end;

    if (p == NULL || strchr(text, '(') == NULL || p[1] != ' ')
        return -1;
    p += 2;
    if (*p == '\0' || *p == ' ')
        return -1;
    p++; /* the state letter */
    /* ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
     * utime stime */
    for (int i = 1; i < 13; i++) {
        if (*p != ' ')
            return -1;
        v[i] = strtoll(p + 1, &end, 10);
        if (end == p + 1)
            return -1;
        p = end;
    }
    *ppid = (pid_t)v[1];
    *utime = v[11];
    *stime = v[12];
    return 0;
}

void
series__comm_name(const char *text, size_t len, char *out)
{
    size_t n = 0;

    for (size_t i = 0; i < len && n < SERIES_NAME_MAX; i++) {
        unsigned char c = (unsigned char)text[i];

        if (c < 0x20 || c == 0x7f)
            continue;
        out[n++] = (char)c;
    }
    out[n] = '\0';
}

void
series__csv_text(char *buf, size_t size, size_t *len, const char *text)
{
    bool quote = strpbrk(text, ",\"\r\n") != NULL;
    size_t n = *len;

    if (n + 1 >= size)
        return;
    buf[n++] = ',';
    if (quote && n + 1 < size)
        buf[n++] = '"';
    for (const char *p = text; *p != '\0' && n + 2 < size; p++) {
        if (*p == '"')
            buf[n++] = '"';
        buf[n++] = *p;
    }
    if (quote && n + 1 < size)
        buf[n++] = '"';
    buf[n] = '\0';
    *len = n;
}

size_t
series__parse_pids(const char *text, pid_t *out, size_t max, bool *more)
{
    size_t n = 0;
    char *end;

    for (const char *p = text; *p != '\0'; p = end) {
        long long v = strtoll(p, &end, 10);

        if (end == p) {
            end = (char *)p + 1;
            continue;
        }
        if (v <= 0 || v > INT32_MAX)
            continue;
        if (n == max) {
            *more = true;
            break;
        }
        out[n++] = (pid_t)v;
    }
    return n;
}

ssize_t
series__read_at(int dirfd, const char *name, char *buf, size_t max)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t len = 0;
    ssize_t n = 0;

    if (fd < 0)
        return -errno;
    while (len < max - 1 && ((n = read(fd, buf + len, max - 1 - len)) > 0 ||
                             (n < 0 && errno == EINTR)))
        len += n > 0 ? (size_t)n : 0;
    if (n < 0)
        n = -errno;
    close(fd);
    buf[len] = '\0';
    return n < 0 ? n : (ssize_t)len;
}

static int64_t
status_bytes(const char *status, const char *key)
{
    int64_t kb = monitor__status_value(status, key);

    return kb < 0 ? -1 : kb * 1024;
}

int
series__read_proc(int procfd, pid_t pid, struct series_proc *p)
{
    char name[24], stat[1024], status[4096], comm[64];
    ssize_t n;
    int fd;

    snprintf(name, sizeof(name), "%d", (int)pid);
    fd = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    if (series__read_at(fd, "stat", stat, sizeof(stat)) < 0 ||
        series__parse_stat(stat, &p->ppid, &p->utime, &p->stime) < 0 ||
        series__read_at(fd, "status", status, sizeof(status)) < 0 ||
        (n = series__read_at(fd, "comm", comm, sizeof(comm))) < 0) {
        close(fd);
        return -1;
    }
    close(fd);
    series__comm_name(comm, (size_t)n, p->name);
    p->vmsize = status_bytes(status, "VmSize");
    p->rss = status_bytes(status, "VmRSS");
    p->vmhwm = status_bytes(status, "VmHWM");
    return 0;
}

/* ---- descendants ------------------------------------------------------- */

static void
ptab_push(struct series_ptab *t, pid_t pid, pid_t ppid)
{
    xgrow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
    t->v[t->n++] = (struct series_pair){ppid, pid};
}

static int
by_ppid(const void *a, const void *b)
{
    const struct series_pair *x = a, *y = b;

    if (x->ppid != y->ppid)
        return x->ppid < y->ppid ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void
series__ptab_scan(struct series_ptab *t, int procfd, size_t max)
{
    int fd = openat(procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    struct dirent *e;

    t->n = 0;
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((e = readdir(d)) != NULL && t->n < max) {
        char path[48], stat[1024];
        int64_t ut, st;
        pid_t ppid;

        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "%.24s/stat", e->d_name);
        if (series__read_at(dirfd(d), path, stat, sizeof(stat)) < 0 ||
            series__parse_stat(stat, &ppid, &ut, &st) < 0)
            continue;
        ptab_push(t, (pid_t)atoi(e->d_name), ppid);
    }
    closedir(d);
    qsort(t->v, t->n, sizeof(*t->v), by_ppid);
}

void
series__ptab_release(struct series_ptab *t)
{
    free(t->v);
    memset(t, 0, sizeof(*t));
}

/* The first index whose ppid is ppid, or t->n. */
static size_t
first_child(const struct series_ptab *t, pid_t ppid)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (t->v[mid].ppid < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t
series__descendants(const struct series_ptab *t, pid_t root, pid_t *out,
                    size_t max, bool *more)
{
    size_t n = 0;

    if (max == 0)
        return 0;
    out[n++] = root;
    /* breadth first: out[] is the queue */
    for (size_t q = 0; q < n; q++) {
        for (size_t i = first_child(t, out[q]);
             i < t->n && t->v[i].ppid == out[q]; i++) {
            if (t->v[i].pid == out[q])
                continue;
            if (n == max) {
                *more = true;
                return n;
            }
            out[n++] = t->v[i].pid;
        }
    }
    return n;
}
