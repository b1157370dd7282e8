/*
 * ty_sync.c — the sync primitives a plan calls, and its outputs.
 *
 * Each primitive builds a ty_wire request, hands it to the connection
 * (ty_conn.c) and waits for the answer. Waits that the coordinator holds —
 * barriers and topic fetches — carry their timeout to the coordinator, which
 * answers "timeout" itself; the SDK waits a little longer than that, so a
 * coordinator that has gone away is still noticed. A negative timeout means
 * the run's deadline (TESTYARD_DEADLINE_MS).
 *
 * Outputs go to the coordinator when connected: files as an upload with a
 * window of acknowledged chunks, lines as appends. Without a coordinator
 * they are written under TEST_OUTPUTS_PATH, files through a temporary name
 * and a rename so they are whole or absent.
 */
#include "ty_conn.h"
#include "ty_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRACE_MS 5000         /* beyond a wait the coordinator holds */
#define REPLY_MS (120 * 1000) /* for an answer that involves no wait */
#define HELLO_MS (60 * 1000)
#define FLUSH_MS (10 * 1000) /* for events still in flight at close */
#define FETCH_BATCH 256
#define UPLOAD_WINDOW 8

struct ty_sub {
    struct ty *ty;
    char *topic;
    int64_t next; /* cursor: the next sequence number to ask for */
    cJSON *batch; /* the last answer */
    cJSON *cur;   /* the next item in it */
};

/* ---- helpers ----------------------------------------------------------- */

/* How long a wait of timeout_ms may last: the run's deadline when < 0. */
static int64_t
budget_ms(const struct ty *ty, int64_t timeout_ms)
{
    int64_t left;

    if (timeout_ms >= 0)
        return timeout_ms < TY_WIRE_INT_MAX ? timeout_ms : TY_WIRE_INT_MAX;
    if (ty->deadline_ms <= 0)
        return TY_WIRE_INT_MAX;
    left = ty->deadline_ms - ty__now_ms();
    return left > 0 ? left : 0;
}

static int64_t
deadline_after(int64_t ms)
{
    return ms >= TY_WIRE_INT_MAX - GRACE_MS ? INT64_MAX / 4 : ty__now_ms() + ms;
}

static int
not_connected(struct ty *ty, const char *what)
{
    if (ty->conn == NULL)
        return ty__seterr(ty, -ENOTCONN,
                          "%s: no coordinator to talk to (neither "
                          "TESTYARD_SYNC_URL nor SYNC_SERVICE_HOST is set): "
                          "running standalone",
                          what);
    if (ty__conn_error(ty->conn)[0] != '\0')
        return ty__seterr(ty, -ENOTCONN,
                          "%s: the sync connection to %s is down: %s", what,
                          ty__conn_url(ty->conn), ty__conn_error(ty->conn));
    return ty__seterr(ty, -ENOTCONN,
                      "%s: the sync connection to %s is not usable here (it "
                      "is down, or this is a forked child of the process "
                      "that opened it)",
                      what, ty__conn_url(ty->conn));
}

/* Send req and wait up to wait_ms. On 0, resp is the caller's to release;
 * otherwise the handle has the message. */
static int
call(struct ty *ty, struct ty_wire_req *req, int64_t wait_ms,
     struct ty_wire_resp *resp)
{
    const char *op = ty__wire_op_name(req->op);
    struct ty__creq *cr;
    int rc;

    if (!ty__conn_usable(ty->conn))
        return not_connected(ty, op);
    cr = ty__conn_submit(ty->conn, req, false, &rc);
    if (cr == NULL)
        return rc == -EINVAL ? ty__seterr(ty, rc, "%s: invalid request", op)
                             : not_connected(ty, op);
    rc = ty__conn_wait(ty->conn, cr, deadline_after(wait_ms), resp);
    if (rc == -ETIMEDOUT)
        return ty__seterr(ty, rc,
                          "%s: no answer from the coordinator at %s "
                          "within %lld ms",
                          op, ty__conn_url(ty->conn), (long long)wait_ms);
    if (rc < 0)
        return not_connected(ty, op);
    rc = ty__wire_status_errno(resp->status);
    if (rc < 0) {
        ty__seterr(ty, rc, "%s", resp->error ? resp->error : op);
        ty__wire_resp_release(resp);
    }
    return rc;
}

/* A request whose answer carries a sequence number. */
static int64_t
call_seq(struct ty *ty, struct ty_wire_req *req, int64_t wait_ms)
{
    struct ty_wire_resp resp;
    int rc = call(ty, req, wait_ms, &resp);
    int64_t seq;

    if (rc < 0)
        return rc;
    seq = resp.seq;
    ty__wire_resp_release(&resp);
    return seq > 0 ? seq : 0;
}

static int
call_ok(struct ty *ty, struct ty_wire_req *req, int64_t wait_ms)
{
    struct ty_wire_resp resp;
    int rc = call(ty, req, wait_ms, &resp);

    if (rc == 0)
        ty__wire_resp_release(&resp);
    return rc;
}

static int
check_name(struct ty *ty, const char *what, const char *s)
{
    if (s == NULL || s[0] == '\0' || strlen(s) > TY_WIRE_NAME_MAX)
        return ty__seterr(ty, -EINVAL,
                          "%s: expected a name of 1 to %d "
                          "bytes",
                          what, TY_WIRE_NAME_MAX);
    return 0;
}

/* ---- connection -------------------------------------------------------- */

/* The endpoint from TESTYARD_SYNC_URL or SYNC_SERVICE_HOST/PORT, or NULL. */
static char *
sync_url(void)
{
    const char *url = getenv("TESTYARD_SYNC_URL");
    const char *host = getenv("SYNC_SERVICE_HOST");
    const char *port = getenv("SYNC_SERVICE_PORT");
    char *s;

    if (url != NULL && url[0] != '\0')
        return strdup(url);
    if (host == NULL || host[0] == '\0')
        return NULL;
    if (asprintf(&s, "tcp://%s:%s", host, port && port[0] ? port : "5050") < 0)
        return NULL;
    return s;
}

/* Hello with the run's secret (TESTYARD_SYNC_SECRET), asking for an area
 * of the release board when the coordinator shares this host
 * (TESTYARD_SYNC_BOARD names its folder). */
static int
hello(struct ty *ty)
{
    struct ty_wire_req req = {.op = TY_WIRE_HELLO};
    struct ty_wire_resp resp;
    int64_t wait = budget_ms(ty, -1);
    const char *board = getenv("TESTYARD_SYNC_BOARD");
    const char *secret = getenv("TESTYARD_SYNC_SECRET");
    int rc;

    if (ty->run_id[0] == '\0' || ty->group_id[0] == '\0')
        return ty__seterr(ty, -EINVAL,
                          "hello: TEST_RUN and TEST_GROUP_ID "
                          "must be set to use the sync service");
    req.run = ty->run_id;
    req.group = ty->group_id;
    req.group_index = ty->group_index;
    req.global_index = ty->global_index;
    if (secret != NULL && secret[0] != '\0')
        req.secret = secret;
    if (board != NULL && board[0] != '\0' &&
        ty__conn_board_open(ty->conn, board))
        req.board = 1;
    rc = call(ty, &req, wait < HELLO_MS ? wait : HELLO_MS, &resp);
    if (rc < 0)
        return rc;
    if (req.board == 1)
        ty__conn_board_enable(ty->conn, resp.board);
    ty__wire_resp_release(&resp);
    return 0;
}

int
ty__sync_connect(struct ty *ty)
{
    char *url = sync_url();
    char why[512];
    int rc;

    if (url == NULL)
        return 0;
    ty->conn = ty__conn_open(url, ty->global_index, why, sizeof(why));
    free(url);
    if (ty->conn == NULL)
        return ty__seterr(ty, -ENOTCONN, "sync service: %s", why);
    rc = hello(ty);
    if (rc < 0) {
        snprintf(why, sizeof(why), "%s", ty_errmsg(ty));
        ty__seterr(ty, rc, "sync service at %s: %s", ty__conn_url(ty->conn),
                   why);
        ty__conn_close(&ty->conn, 0);
    }
    return rc;
}

void
ty__sync_close(struct ty *ty)
{
    ty__conn_close(&ty->conn, FLUSH_MS);
}

void
ty__sync_event(struct ty *ty, const cJSON *event)
{
    struct ty_wire_req req = {.op = TY_WIRE_EVENT, .event = event};
    int rc;

    if (ty__conn_usable(ty->conn))
        ty__conn_submit(ty->conn, &req, true, &rc);
}

/* ---- snapshots the coordinator asks for -------------------------------- */

/* Not waited for here: the heap profiler's snapshot thread polls for the
 * answer while it serves its other snapshots (ty_heapctl_thread.c). */
struct ty__creq *
ty__sync_snapshot_wait(struct ty *ty, int64_t timeout_ms, int fd, int *rc)
{
    struct ty_wire_req req = {.op = TY_WIRE_SNAPSHOT_WAIT};
    struct ty__creq *cr;

    req.timeout_ms = budget_ms(ty, timeout_ms);
    if (!ty__conn_usable(ty->conn))
        return *rc = -ENOTCONN, NULL;
    cr = ty__conn_submit(ty->conn, &req, false, rc);
    if (cr != NULL)
        ty__conn_notify(ty->conn, cr, fd);
    return cr;
}

int
ty__sync_snapshot_answer(struct ty *ty, struct ty__creq *cr)
{
    struct ty_wire_resp resp;
    int rc = ty__conn_wait(ty->conn, cr, ty__now_ms(), &resp);

    if (rc < 0)
        return rc;
    rc = ty__wire_status_errno(resp.status);
    ty__wire_resp_release(&resp);
    return rc;
}

/* ---- states and barriers ----------------------------------------------- */

int64_t
ty_signal_entry(struct ty *ty, const char *state)
{
    struct ty_wire_req req = {.op = TY_WIRE_SIGNAL, .state = state};

    if (check_name(ty, "signal_entry", state) < 0)
        return -EINVAL;
    return call_seq(ty, &req, REPLY_MS);
}

/* A barrier or signal_and_wait; group (NULL: every instance) names the
 * instances that take part. */
static int64_t
wait_state(struct ty *ty, enum ty_wire_op op, const char *state,
           const char *group, int64_t target, int64_t timeout_ms)
{
    struct ty_wire_req req = {
        .op = op, .state = state, .group = group, .target = target};
    int64_t t = budget_ms(ty, timeout_ms);

    if (check_name(ty, ty__wire_op_name(op), state) < 0 ||
        (group != NULL && check_name(ty, ty__wire_op_name(op), group) < 0))
        return -EINVAL;
    if (target < 1)
        return ty__seterr(ty, -EINVAL,
                          "%s \"%s\": target %lld is not a "
                          "positive count",
                          ty__wire_op_name(op), state, (long long)target);
    req.timeout_ms = t;
    return call_seq(ty, &req, t + GRACE_MS);
}

int
ty_barrier(struct ty *ty, const char *state, int64_t target, int64_t timeout_ms)
{
    int64_t rc =
        wait_state(ty, TY_WIRE_BARRIER, state, NULL, target, timeout_ms);

    return rc < 0 ? (int)rc : 0;
}

int64_t
ty_signal_and_wait(struct ty *ty, const char *state, int64_t target,
                   int64_t timeout_ms)
{
    return wait_state(ty, TY_WIRE_SIGNAL_WAIT, state, NULL, target, timeout_ms);
}

int
ty_barrier_in(struct ty *ty, const char *state, const char *group,
              int64_t target, int64_t timeout_ms)
{
    int64_t rc = wait_state(ty, TY_WIRE_BARRIER, state, group ? group : "",
                            target, timeout_ms);

    return rc < 0 ? (int)rc : 0;
}

int64_t
ty_signal_and_wait_in(struct ty *ty, const char *state, const char *group,
                      int64_t target, int64_t timeout_ms)
{
    return wait_state(ty, TY_WIRE_SIGNAL_WAIT, state, group ? group : "",
                      target, timeout_ms);
}

/* ---- topics ------------------------------------------------------------ */

int64_t
ty_publish(struct ty *ty, const char *topic, const char *json)
{
    struct ty_wire_req req = {.op = TY_WIRE_PUBLISH, .topic = topic};
    cJSON *v;
    int64_t rc;

    if (check_name(ty, "publish", topic) < 0)
        return -EINVAL;
    v = json ? cJSON_Parse(json) : NULL;
    if (v == NULL)
        return ty__seterr(ty, -EINVAL,
                          "publish to \"%s\": the value is not "
                          "valid JSON",
                          topic);
    req.value = v;
    rc = call_seq(ty, &req, REPLY_MS);
    cJSON_Delete(v);
    return rc;
}

struct ty_sub *
ty_subscribe(struct ty *ty, const char *topic, int64_t from)
{
    struct ty_sub *sub;

    if (check_name(ty, "subscribe", topic) < 0)
        return NULL;
    if (!ty__conn_usable(ty->conn)) {
        not_connected(ty, "subscribe");
        return NULL;
    }
    sub = calloc(1, sizeof(*sub));
    if (sub == NULL || (sub->topic = strdup(topic)) == NULL) {
        free(sub);
        ty__seterr(ty, -ENOMEM, "subscribe: out of memory");
        return NULL;
    }
    sub->ty = ty;
    sub->next = from > 0 ? from : 1;
    return sub;
}

static int
sub_fetch(struct ty_sub *sub, int64_t timeout_ms)
{
    struct ty_wire_req req = {.op = TY_WIRE_FETCH, .topic = sub->topic};
    struct ty_wire_resp resp;
    int64_t t = budget_ms(sub->ty, timeout_ms);
    int rc;

    req.from = sub->next;
    req.max = FETCH_BATCH;
    req.timeout_ms = t;
    rc = call(sub->ty, &req, t + GRACE_MS, &resp);
    if (rc < 0)
        return rc;
    cJSON_Delete(sub->batch);
    sub->batch = resp.root;
    sub->cur = resp.items ? resp.items->child : NULL;
    if (resp.next > sub->next)
        sub->next = resp.next;
    if (sub->cur == NULL)
        return ty__seterr(sub->ty, -ETIMEDOUT, "topic \"%s\": nothing new",
                          sub->topic);
    return 0;
}

int
ty_sub_next(struct ty_sub *sub, char **json, int64_t *seq, int64_t timeout_ms)
{
    const cJSON *it;
    int rc;

    if (sub->cur == NULL && (rc = sub_fetch(sub, timeout_ms)) < 0)
        return rc;
    it = sub->cur;
    sub->cur = it->next;
    *json =
        cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(it, "value"));
    if (*json == NULL)
        return ty__seterr(sub->ty, -ENOMEM, "subscribe: out of memory");
    if (seq != NULL)
        *seq =
            (int64_t)cJSON_GetObjectItemCaseSensitive(it, "seq")->valuedouble;
    return 0;
}

void
ty_sub_close(struct ty_sub **psub)
{
    struct ty_sub *sub = *psub;

    if (sub == NULL)
        return;
    cJSON_Delete(sub->batch);
    free(sub->topic);
    free(sub);
    *psub = NULL;
}

/* ---- outputs ----------------------------------------------------------- */

/* Make the folders above path (which is under outputs_path). */
static int
make_parents(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];

    if (slash == NULL || slash == path)
        return 0;
    if ((size_t)(slash - path) >= sizeof(dir))
        return -ENAMETOOLONG;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    return ty__mkdir_p(dir, 0755, NULL);
}

static char *
local_path(const struct ty *ty, const char *name)
{
    char *path;

    if (asprintf(&path, "%s/%s", ty->outputs_path, name) < 0)
        return NULL;
    return path;
}

static int
local_file(struct ty *ty, const char *name, const void *data, size_t len)
{
    char *path = local_path(ty, name);
    int rc = -ENOMEM;

    if (path != NULL && (rc = make_parents(path)) == 0)
        rc = ty__write_atomic(path, data, len, 0644);
    if (rc < 0)
        ty__seterr(ty, rc, "%s: %s", path ? path : name, strerror(-rc));
    free(path);
    return rc;
}

static int
local_append(struct ty *ty, const char *name, const void *data, size_t len)
{
    char *path = local_path(ty, name);
    int fd = -1, rc = -ENOMEM;

    if (path != NULL && (rc = make_parents(path)) == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        rc = fd < 0 ? -errno : ty__write_all(fd, data, len);
        if (fd >= 0)
            close(fd);
    }
    if (rc < 0)
        ty__seterr(ty, rc, "%s: %s", path ? path : name, strerror(-rc));
    free(path);
    return rc;
}

/* Wait for the oldest chunk in the window; 0 or -errno. */
static int
chunk_ack(struct ty *ty, struct ty__creq *cr)
{
    struct ty_wire_resp resp;
    int rc = ty__conn_wait(ty->conn, cr, ty__now_ms() + REPLY_MS, &resp);

    if (rc < 0)
        return ty__seterr(ty, rc,
                          "upload: no acknowledgement from the "
                          "coordinator within %d ms",
                          REPLY_MS);
    rc = ty__wire_status_errno(resp.status);
    if (rc < 0)
        ty__seterr(ty, rc, "upload: %s", resp.error);
    ty__wire_resp_release(&resp);
    return rc;
}

/* Send data in chunks with up to UPLOAD_WINDOW unacknowledged. */
static int
send_chunks(struct ty *ty, int64_t uid, const char *data, size_t len)
{
    struct ty__creq *win[UPLOAD_WINDOW];
    size_t head = 0, n = 0, off = 0;
    int rc = 0;

    while (rc == 0 && (off < len || n > 0)) {
        if (off < len && n < UPLOAD_WINDOW) {
            struct ty_wire_req req = {.op = TY_WIRE_UPLOAD_CHUNK};
            size_t clen = len - off < TY_WIRE_CHUNK ? len - off : TY_WIRE_CHUNK;

            req.upload = uid;
            req.offset = (int64_t)off;
            req.data = data + off;
            req.len = clen;
            win[(head + n) % UPLOAD_WINDOW] =
                ty__conn_submit(ty->conn, &req, false, &rc);
            if (rc < 0) {
                rc = not_connected(ty, "upload");
                break;
            }
            n++;
            off += clen;
            continue;
        }
        rc = chunk_ack(ty, win[head]);
        head = (head + 1) % UPLOAD_WINDOW;
        n--;
    }
    for (; n > 0; n--, head = (head + 1) % UPLOAD_WINDOW)
        ty__conn_forget(ty->conn, win[head]);
    return rc;
}

static int
upload(struct ty *ty, const char *name, const void *data, size_t len)
{
    struct ty_wire_req req = {.op = TY_WIRE_UPLOAD_BEGIN, .name = name};
    struct ty_wire_resp resp;
    int64_t uid;
    int rc;

    req.size = (int64_t)len;
    rc = call(ty, &req, REPLY_MS, &resp);
    if (rc < 0)
        return rc;
    uid = resp.upload;
    ty__wire_resp_release(&resp);
    rc = send_chunks(ty, uid, data, len);
    memset(&req, 0, sizeof(req));
    req.op = rc == 0 ? TY_WIRE_UPLOAD_END : TY_WIRE_UPLOAD_ABORT;
    req.upload = uid;
    if (rc < 0) {
        char why[sizeof(ty->errmsg)];

        snprintf(why, sizeof(why), "%s", ty_errmsg(ty));
        call_ok(ty, &req, REPLY_MS);
        return ty__seterr(ty, rc, "%s", why);
    }
    return call_ok(ty, &req, REPLY_MS);
}

int
ty__output_file(struct ty *ty, const char *name, const void *data, size_t len)
{
    if (!ty__wire_name_ok(name))
        return ty__seterr(ty, -EINVAL,
                          "output \"%s\": expected a relative "
                          "file name without \"..\" or a .tmp suffix",
                          name ? name : "(null)");
    if (ty->conn == NULL)
        return local_file(ty, name, data, len);
    return upload(ty, name, data, len);
}

static int
append_piece(struct ty *ty, const char *name, const char *data, size_t len)
{
    struct ty_wire_req req = {.op = TY_WIRE_APPEND, .name = name};

    req.data = data;
    req.len = len;
    return call_ok(ty, &req, REPLY_MS);
}

/* Send data in pieces that end at a newline where one is near. */
static int
remote_append(struct ty *ty, const char *name, const char *data, size_t len)
{
    size_t off = 0;
    int rc = 0;

    while (rc == 0 && off < len) {
        size_t n = len - off;

        if (n > TY_WIRE_CHUNK) {
            const char *nl = memrchr(data + off, '\n', TY_WIRE_CHUNK);

            n = nl ? (size_t)(nl - (data + off)) + 1 : TY_WIRE_CHUNK;
        }
        rc = append_piece(ty, name, data + off, n);
        off += n;
    }
    return rc;
}

int
ty__output_append(struct ty *ty, const char *name, const char *data, size_t len)
{
    char *copy = NULL;
    int rc;

    if (!ty__wire_name_ok(name))
        return ty__seterr(ty, -EINVAL,
                          "output \"%s\": expected a relative "
                          "file name without \"..\" or a .tmp suffix",
                          name ? name : "(null)");
    if (len > 0 && data[len - 1] != '\n') {
        copy = malloc(len + 1);
        if (copy == NULL)
            return ty__seterr(ty, -ENOMEM, "append: out of memory");
        memcpy(copy, data, len);
        copy[len++] = '\n';
        data = copy;
    }
    if (ty->conn == NULL)
        rc = local_append(ty, name, data, len);
    else
        rc = remote_append(ty, name, data, len);
    free(copy);
    return rc;
}
