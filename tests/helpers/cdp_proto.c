/*
 * cdp_proto.c — the browser driver's side of Chromium (tests/helpers/cdp.c
 * runs the steps): the process, started with --remote-debugging-pipe so
 * that it reads DevTools protocol messages (JSON, each ended by a NUL
 * byte) on its fd 3 and writes answers and events on fd 4, no websocket
 * needed; the messages, with the events that must be handled as they
 * come (a JavaScript dialog stops the page until it is answered); and
 * the end, where nothing of Chromium may be left running.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cdp.h"

const char *cdp_window_size = "1280,900";
bool cdp_verbose;
volatile sig_atomic_t cdp_signal;
sigset_t cdp_run_mask;

int64_t
cdp_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
cdp_fail(char *why, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, CDP_WHY, fmt, ap);
    va_end(ap);
}

/* Wait for fd to be ready (events) or ms to pass, with the signals let
 * through: 1 ready, 0 time out, -1 a signal or an error. */
static int
wait_fd(int fd, short events, int64_t ms)
{
    struct pollfd p = {fd, events, 0};
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    sigset_t open;
    int n;

    sigemptyset(&open);
    n = ppoll(&p, fd >= 0 ? 1 : 0, ms < 0 ? NULL : &ts, &open);
    if (n < 0 || cdp_signal)
        return -1;
    return n > 0;
}

void
cdp_nap(int64_t ms)
{
    wait_fd(-1, 0, ms);
}

/* ---- the pipe ---------------------------------------------------------- */

static int
send_raw(struct cdp *c, const char *s, size_t len, int64_t deadline)
{
    size_t off = 0;

    while (off < len) {
        ssize_t w = write(c->to_fd, s + off, len - off);

        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && errno == EAGAIN) {
            if (wait_fd(c->to_fd, POLLOUT, deadline - cdp_now_ms()) <= 0)
                return -1;
        } else if (!(w < 0 && errno == EINTR)) {
            c->gone = true;
            return -1;
        }
    }
    return 0;
}

/* Send a command (params is taken); its id, or -1. */
static int
send_cmd(struct cdp *c, const char *method, cJSON *params, bool to_page,
         int64_t deadline)
{
    cJSON *m = cJSON_CreateObject();
    int id = ++c->next_id;
    char *s;
    int rc;

    cJSON_AddNumberToObject(m, "id", id);
    cJSON_AddStringToObject(m, "method", method);
    cJSON_AddItemToObject(m, "params", params ? params : cJSON_CreateObject());
    if (to_page)
        cJSON_AddStringToObject(m, "sessionId", c->session);
    s = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    if (!s)
        return -1;
    if (cdp_verbose)
        fprintf(stderr, "cdp: -> %.300s\n", s);
    /* the NUL that ends the string ends the message */
    rc = send_raw(c, s, strlen(s) + 1, deadline);
    free(s);
    return rc < 0 ? -1 : id;
}

/* The next whole message already read, or NULL. */
static cJSON *
take_message(struct cdp *c)
{
    char *end;
    cJSON *m;
    size_t used;

    if (c->in.len == c->scanned)
        return NULL;
    end = memchr(c->in.buf + c->scanned, '\0', c->in.len - c->scanned);
    if (!end) {
        c->scanned = c->in.len;
        return NULL;
    }
    m = cJSON_Parse(c->in.buf);
    if (cdp_verbose)
        fprintf(stderr, "cdp: <- %.300s\n", c->in.buf);
    used = (size_t)(end - c->in.buf) + 1;
    memmove(c->in.buf, c->in.buf + used, c->in.len - used + 1);
    c->in.len -= used;
    c->scanned = 0;
    return m ? m : cJSON_CreateObject();
}

/* The next message, reading until deadline: NULL with why filled when
 * none came. */
static cJSON *
recv_msg(struct cdp *c, int64_t deadline, char *why)
{
    for (;;) {
        cJSON *m = take_message(c);
        int r;
        ssize_t n;

        if (m)
            return m;
        if (c->gone)
            return cdp_fail(why, "Chromium closed the pipe"), NULL;
        r = wait_fd(c->from_fd, POLLIN, deadline - cdp_now_ms());
        if (r == 0 || (r > 0 && deadline <= cdp_now_ms()))
            return cdp_fail(why, "timed out"), NULL;
        if (r < 0)
            return cdp_fail(why, "interrupted by signal %d", (int)cdp_signal),
                   NULL;
        if (ty__buf_reserve(&c->in, 65536) < 0)
            return cdp_fail(why, "out of memory"), NULL;
        n = read(c->from_fd, c->in.buf + c->in.len, 65536);
        if (n > 0) {
            c->in.len += (size_t)n;
            c->in.buf[c->in.len] = '\0';
        } else if (n == 0 || errno != EINTR) {
            c->gone = true;
        }
    }
}

const char *
cdp_str_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A dialog is answered at once: the page is stopped until it is. */
static void
on_dialog(struct cdp *c, const cJSON *p, int64_t deadline)
{
    cJSON *a = cJSON_CreateObject();

    cJSON_AddBoolToObject(a, "accept", !c->dismiss);
    fprintf(stderr, "cdp: %s dialog \"%s\": %s\n",
            cdp_str_at(p, "type") ? cdp_str_at(p, "type") : "a",
            cdp_str_at(p, "message") ? cdp_str_at(p, "message") : "",
            c->dismiss ? "dismissed" : "accepted");
    send_cmd(c, "Page.handleJavaScriptDialog", a, true, deadline);
}

static void
on_lifecycle(struct cdp *c, const cJSON *p)
{
    const char *name = cdp_str_at(p, "name"),
               *loader = cdp_str_at(p, "loaderId");

    if (!name || !loader || strcmp(name, "load") != 0)
        return;
    snprintf(c->loads[c->nloads % CDP_LOADS], sizeof(c->loads[0]), "%s",
             loader);
    c->nloads++;
}

static void
on_response(struct cdp *c, const cJSON *p)
{
    const char *type = cdp_str_at(p, "type");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "response");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "status");

    if (type && strcmp(type, "Document") == 0 && cJSON_IsNumber(st))
        c->status = st->valueint;
}

const char *
cdp_exception_text(const cJSON *details)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(details, "exception");
    const char *text = cdp_str_at(e, "description");

    if (!text)
        text = cdp_str_at(details, "text");
    return text ? text : "?";
}

static void
on_exception(const cJSON *p)
{
    fprintf(stderr, "cdp: page error: %s\n",
            cdp_exception_text(
                cJSON_GetObjectItemCaseSensitive(p, "exceptionDetails")));
}

static void
on_event(struct cdp *c, const cJSON *m, int64_t deadline)
{
    const char *method = cdp_str_at(m, "method");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "params");

    if (!method)
        return;
    if (strcmp(method, "Page.javascriptDialogOpening") == 0)
        on_dialog(c, p, deadline);
    else if (strcmp(method, "Page.lifecycleEvent") == 0)
        on_lifecycle(c, p);
    else if (strcmp(method, "Network.responseReceived") == 0)
        on_response(c, p);
    else if (strcmp(method, "Runtime.exceptionThrown") == 0)
        on_exception(p);
    else if (strcmp(method, "Inspector.targetCrashed") == 0 ||
             strcmp(method, "Target.detachedFromTarget") == 0)
        c->gone = true;
}

cJSON *
cdp_pump(struct cdp *c, int id, int64_t deadline, char *why)
{
    static cJSON handled;

    for (;;) {
        cJSON *m = recv_msg(c, deadline, why);
        const cJSON *mid;

        if (!m)
            return NULL;
        mid = cJSON_GetObjectItemCaseSensitive(m, "id");
        if (id > 0 && cJSON_IsNumber(mid) && mid->valueint == id)
            return m;
        on_event(c, m, deadline);
        cJSON_Delete(m);
        if (id == 0)
            return &handled;
    }
}

cJSON *
cdp_call(struct cdp *c, const char *method, cJSON *params, bool to_page,
         int64_t deadline, char *why)
{
    int id = send_cmd(c, method, params, to_page, deadline);
    cJSON *m, *res;
    const cJSON *e;

    if (id < 0)
        return cdp_fail(why, "%s: cannot write to Chromium", method), NULL;
    m = cdp_pump(c, id, deadline, why);
    if (!m) {
        char tail[CDP_WHY];

        snprintf(tail, sizeof(tail), "%s", why);
        return cdp_fail(why, "%s: %s", method, tail), NULL;
    }
    e = cJSON_GetObjectItemCaseSensitive(m, "error");
    if (e) {
        cdp_fail(why, "%s: %s", method,
                 cdp_str_at(e, "message") ? cdp_str_at(e, "message") : "error");
        cJSON_Delete(m);
        return NULL;
    }
    res = cJSON_DetachItemFromObjectCaseSensitive(m, "result");
    cJSON_Delete(m);
    return res ? res : cJSON_CreateObject();
}

int
cdp_run_cmd(struct cdp *c, const char *method, cJSON *params, int64_t deadline,
            char *why)
{
    cJSON *r = cdp_call(c, method, params, true, deadline, why);

    cJSON_Delete(r);
    return r ? 0 : -1;
}

/* ---- Chromium ---------------------------------------------------------- */

static const char *
chromium_bin(void)
{
    const char *bin = getenv("CHROMIUM");

    return bin && *bin ? bin : "/usr/bin/chromium";
}

/* In the child: the pipe ends onto fds 3 and 4, the signals as they
 * were, then Chromium. */
static void
exec_chromium(int rd, int wr, const char *tmp, const char *profile,
              const char *log)
{
    const char *bin = chromium_bin();
    char ud[512], ws[64];
    int null = open("/dev/null", O_RDWR);
    int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* its own temporary files (shared memory) go with the profile */
    setenv("TMPDIR", tmp, 1);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &cdp_run_mask, NULL);
    /* 0-2 first: /dev/null and the log may have opened as 3 or 4 */
    if (dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
        dup2(lfd < 0 ? null : lfd, 2) < 0 || dup2(rd, 3) < 0 || dup2(wr, 4) < 0)
        _exit(127);
    snprintf(ud, sizeof(ud), "--user-data-dir=%s", profile);
    snprintf(ws, sizeof(ws), "--window-size=%s", cdp_window_size);
    /* as tests/browser/run's chrome(), and shared memory in /tmp: a
     * container's /dev/shm is often 64 MiB, too small for a renderer */
    execl(bin, bin, "--headless", "--no-sandbox", "--disable-gpu",
          "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--disable-extensions", "--disable-default-apps",
          "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe", ud,
          ws, "about:blank", (char *)NULL);
    dprintf(2, "cdp: %s: %s\n", bin, strerror(errno));
    _exit(127);
}

/* A pipe whose ends sit above fd 4, so that the child's dup2 onto 3 and
 * 4 never overwrites one it still needs. */
static int
high_pipe(int fds[2])
{
    int p[2];

    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        fds[i] = fcntl(p[i], F_DUPFD_CLOEXEC, 10);
        close(p[i]);
    }
    return fds[0] < 0 || fds[1] < 0 ? -1 : 0;
}

int
cdp_start(struct cdp *c, char *why)
{
    const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char profile[300], log[300];
    int to[2], from[2];
    const char *bin = chromium_bin();

    if (access(bin, X_OK) < 0)
        return cdp_fail(why, "%s: %s", bin, strerror(errno)), -1;
    snprintf(c->tmp, sizeof(c->tmp), "%s/cdp.XXXXXX", tmpdir);
    if (!mkdtemp(c->tmp))
        return c->tmp[0] = '\0', cdp_fail(why, "mkdtemp: %s", strerror(errno)),
               -1;
    snprintf(profile, sizeof(profile), "%s/profile", c->tmp);
    snprintf(log, sizeof(log), "%s/chromium.log", c->tmp);
    if (high_pipe(to) < 0 || high_pipe(from) < 0)
        return cdp_fail(why, "pipe: %s", strerror(errno)), -1;
    c->pid = fork();
    if (c->pid < 0)
        return c->pid = 0, cdp_fail(why, "fork: %s", strerror(errno)), -1;
    if (c->pid == 0)
        exec_chromium(to[0], from[1], c->tmp, profile, log);
    setpgid(c->pid, c->pid);
    close(to[0]);
    close(from[1]);
    c->to_fd = to[1];
    c->from_fd = from[0];
    fcntl(c->to_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

/* Create the page and attach to it; every domain the steps use is
 * enabled on it. */
int
cdp_attach(struct cdp *c, int64_t deadline, char *why)
{
    static const char *const domains[] = {"Page.enable", "Runtime.enable",
                                          "Network.enable"};
    cJSON *p = cJSON_CreateObject(), *r;
    const char *s;

    cJSON_AddStringToObject(p, "url", "about:blank");
    r = cdp_call(c, "Target.createTarget", p, false, deadline, why);
    if (!r)
        return -1;
    p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "targetId", cdp_str_at(r, "targetId"));
    cJSON_AddBoolToObject(p, "flatten", true);
    cJSON_Delete(r);
    r = cdp_call(c, "Target.attachToTarget", p, false, deadline, why);
    s = cdp_str_at(r, "sessionId");
    if (s)
        snprintf(c->session, sizeof(c->session), "%s", s);
    cJSON_Delete(r);
    if (!s)
        return r ? cdp_fail(why, "no sessionId"), -1 : -1;
    for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++)
        if (cdp_run_cmd(c, domains[i], NULL, deadline, why) < 0)
            return -1;
    p = cJSON_CreateObject();
    cJSON_AddBoolToObject(p, "enabled", true);
    return cdp_run_cmd(c, "Page.setLifecycleEventsEnabled", p, deadline, why);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* SIGKILL every process whose parent is this one, but Chromium's main
 * process while it is still asked to close. */
static void
kill_children(pid_t spare)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    while (d && (e = readdir(d))) {
        char path[300], stat[512], *rp;
        int pid = atoi(e->d_name), ppid = 0;
        FILE *f;

        if (pid <= 0 || pid == spare)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        f = fopen(path, "r");
        if (f && fgets(stat, sizeof(stat), f) && (rp = strrchr(stat, ')')))
            sscanf(rp + 1, " %*c %d", &ppid);
        if (f)
            fclose(f);
        if (ppid == (int)getpid())
            kill(pid, SIGKILL);
    }
    if (d)
        closedir(d);
}

/* Kill and reap all that is left below cdp, for up to 3 s: cdp is a
 * subreaper, so what Chromium started and left behind (its crash
 * handler forks twice and leaves the process group) becomes its child
 * once its parent is gone. */
static void
reap_all(void)
{
    int64_t until = cdp_now_ms() + 3000;

    for (;;) {
        pid_t p;

        kill_children(0);
        p = waitpid(-1, NULL, WNOHANG);
        if (p < 0 || (p == 0 && cdp_now_ms() >= until))
            return;
        if (p == 0)
            cdp_nap(20);
    }
}

/* Ask Chromium to close, give it 3 s, then kill its process group
 * (renderers and helpers with it), what is left below cdp, and remove
 * the profile. */
void
cdp_stop(struct cdp *c)
{
    int64_t until = cdp_now_ms() + 3000;
    bool reaped = false;

    if (c->pid > 0) {
        if (!c->gone)
            send_cmd(c, "Browser.close", NULL, false, cdp_now_ms() + 500);
        while (!reaped && cdp_now_ms() < until) {
            reaped = waitpid(c->pid, NULL, WNOHANG) == c->pid;
            if (!reaped)
                cdp_nap(20);
        }
        kill(-c->pid, SIGKILL);
        if (!reaped)
            waitpid(c->pid, NULL, 0);
        c->pid = 0;
    }
    reap_all();
    if (c->to_fd > 0)
        close(c->to_fd);
    if (c->from_fd > 0)
        close(c->from_fd);
    c->to_fd = c->from_fd = -1;
    if (c->tmp[0])
        nftw(c->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    c->tmp[0] = '\0';
}

/* The last lines Chromium wrote on stderr, to say why it did not start. */
void
cdp_log_tail(const struct cdp *c)
{
    char path[300], lines[10][512];
    int n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/chromium.log", c->tmp);
    f = fopen(path, "r");
    while (f && fgets(lines[n % 10], sizeof(lines[0]), f))
        n++;
    if (f)
        fclose(f);
    for (int i = n > 10 ? n - 10 : 0; i < n; i++)
        fprintf(stderr, "cdp: chromium: %s", lines[i % 10]);
}
