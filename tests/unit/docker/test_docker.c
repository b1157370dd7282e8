/*
 * test_docker.c — the Docker client against the fake engine: version
 * negotiation, DOCKER_HOST, connection failures and their hints, the
 * daemon's message on HTTP errors, the exact requests each endpoint sends,
 * and the request sequence of a caller that rolls back after an injected
 * error. Streaming endpoints are in test_docker_stream.c.
 */
#include "docker/docker.h"
#include "fakedocker.h"
#include "fakedocker_client.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Negotiate against an engine reporting (api, min) and return what the
 * client picked, or the error message. */
static char *
negotiated(const char *api, const char *min)
{
    struct fakedocker *f = fakedocker_new(false);
    struct err err = {0};
    struct docker *d;
    char *out;

    fakedocker_set_versions(f, api, min);
    d = docker_new(fakedocker_host(f), &err);
    out = xstrdup(d ? docker_api_version(d) : err.msg);
    docker_destroy(&d);
    fakedocker_destroy(&f);
    return out;
}

static void
t_negotiation(void)
{
    static const struct {
        const char *api, *min, *want;
    } cases[] = {
        {"1.41", "1.12", "1.41"},            /* this machine's engine */
        {"1.38", "1.12", "1.38"},            /* an older engine: its version */
        {"1.52", "1.44", DOCKER_API_NEWEST}, /* newer: ours */
        {"1.60", "1.50", "1.50"}, /* newer and refusing ours: its min */
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *got = negotiated(cases[i].api, cases[i].min);

        CHECK_EQ_STR(got, cases[i].want);
        free(got);
    }
}

static void
t_handshake_requests(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct err err = {0};
    cJSON *info;
    char *log;

    fakedocker_answer(f, "GET", "/v1.41/info", 200,
                      "{\"Driver\":\"overlay2\",\"CgroupVersion\":\"1\"}");
    info = docker_info(d, &err);
    CHECK_MSG(info != NULL, "%s", err.msg);
    CHECK_EQ_STR(cJSON_GetObjectItem(info, "Driver")->valuestring, "overlay2");
    CHECK_EQ_STR(docker_engine_version(d), "20.10.24-fake");
    CHECK_EQ_STR(docker_engine_min_api(d), "1.12");
    CHECK(docker_ping(d, &err) == 0);
    log = fakedocker_log(f, false);
    CHECK_EQ_STR(log, "GET /_ping\nGET /version\nGET /v1.41/info\n"
                      "GET /v1.41/_ping\n");
    free(log);
    cJSON_Delete(info);
    docker_destroy(&d);
    CHECK(d == NULL);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_docker_host(void)
{
    struct fakedocker *u = fakedocker_new(false), *t = fakedocker_new(true);
    const char *host = getenv("DOCKER_HOST");
    char *saved = host ? xstrdup(host) : NULL;
    struct err err = {0};
    struct docker *d;

    setenv("DOCKER_HOST", fakedocker_host(u), 1);
    d = docker_new(NULL, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    CHECK_EQ_STR(d ? docker_host(d) : "", fakedocker_host(u));
    docker_destroy(&d);
    setenv("DOCKER_HOST", fakedocker_host(t), 1);
    d = docker_new(NULL, &err);
    CHECK_MSG(d != NULL, "tcp: %s", err.msg);
    CHECK(fakedocker_count(t) == 2);
    docker_destroy(&d);
    setenv("DOCKER_HOST", "ssh://somewhere", 1);
    CHECK(docker_new(NULL, &err) == NULL);
    CHECK_EQ_INT(err.code, EINVAL);
    CHECK_CONTAINS(err.msg, "expected unix:///path/to/socket or tcp://");
    if (saved)
        setenv("DOCKER_HOST", saved, 1);
    else
        unsetenv("DOCKER_HOST");
    free(saved);
    fakedocker_destroy(&u);
    fakedocker_destroy(&t);
}

static void
t_unreachable_hints(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    struct err err = {0};
    char *host;
    int fd;

    CHECK(docker_new("unix:///nonexistent/docker.sock", &err) == NULL);
    CHECK_EQ_INT(err.status, EXIT_UNAVAILABLE);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "cannot reach the Docker engine at "
                            "unix:///nonexistent/docker.sock");
    CHECK_CONTAINS(err.msg, "start the engine");
    /* a socket that is bound but nobody listens on: refused */
    snprintf(a.sun_path, sizeof(a.sun_path), "%s/dead.sock", th_tmpdir());
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    host = xasprintf("unix://%s", a.sun_path);
    err_clear(&err);
    CHECK(docker_new(host, &err) == NULL);
    CHECK_EQ_INT(err.status, EXIT_UNAVAILABLE);
    CHECK_EQ_INT(err.code, ECONNREFUSED);
    CHECK_CONTAINS(err.msg, "nothing listens");
    free(host);
    close(fd);
}

static void
t_http_error_message(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct err err = {0};
    cJSON *cfg = cJSON_CreateObject();
    char *id = NULL;

    fakedocker_answer(f, "POST", "/v1.41/containers/create", 409,
                      "{\"message\":\"Conflict. The container name "
                      "\\\"/ty-x\\\" is already in use\"}");
    CHECK(docker_container_create(d, "ty-x", cfg, &id, &err) < 0);
    CHECK(id == NULL);
    CHECK_EQ_INT(err.code, EBUSY);
    CHECK_EQ_STR(err.msg, "Docker engine: POST /containers/create: HTTP "
                          "409: Conflict. The container name \"/ty-x\" is "
                          "already in use");
    /* not JSON: the text itself */
    fakedocker_answer(f, "POST", "/v1.41/containers/*/start", 500,
                      "oci runtime error\n");
    CHECK(docker_container_start(d, "abc", &err) < 0);
    CHECK_EQ_INT(err.code, EIO);
    CHECK_CONTAINS(err.msg, "HTTP 500: oci runtime error");
    /* unscripted: the fake's 404 */
    CHECK(docker_container_inspect(d, "nope", &err) == NULL);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "page not found");
    cJSON_Delete(cfg);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static const struct docker_container_spec spec = {
    .image = "testyard/ping:0123456789abcdef",
    .cmd = (const char *const[]){"--round", "3", NULL},
    .env = (const char *const[]){"TEST_RUN=r1", "TEST_GROUP_ID=g", NULL},
    .labels =
        (const char *const[]){"testyard.run=r1", "testyard.plan=ping",
                              "testyard.group=g", "testyard.index=0", NULL},
    .binds = (const char *const[]){"/runs/r1/g/0:/outputs", NULL},
    .network_mode = "host",
    .memory = 64 << 20,
    .memory_swap = 64 << 20,
    .nano_cpus = 500000000,
    .pids_limit = 512,
    .no_new_privileges = true,
    .cap_drop_all = true,
    .init = true,
    .user = "1073741824:1073741824",
    .readonly_rootfs = true,
    .tmpfs = (const char *const[]){"/tmp:rw,size=64m", NULL},
};

static void
t_create_body(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    cJSON *cfg = docker_container_config(&spec), *sent, *hc;
    const struct fakedocker_request *r;
    struct err err = {0};
    char *id = NULL, *text;

    fakedocker_answer(f, "POST", "/v1.41/containers/create", 201,
                      "{\"Id\":\"c0ffee\",\"Warnings\":[]}");
    CHECK_MSG(docker_container_create(d, "ty-r1-g-0", cfg, &id, &err) == 0,
              "%s", err.msg);
    CHECK_EQ_STR(id, "c0ffee");
    r = fakedocker_request(f, 2);
    CHECK_EQ_STR(r->target, "/v1.41/containers/create?name=ty-r1-g-0");
    sent = cJSON_Parse(r->body);
    hc = cJSON_GetObjectItem(sent, "HostConfig");
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "Memory")->valuedouble, 67108864);
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "MemorySwap")->valuedouble, 67108864);
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "NanoCpus")->valuedouble, 500000000);
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "PidsLimit")->valuedouble, 512);
    text = cJSON_PrintUnformatted(sent);
    CHECK_CONTAINS(text, "\"Image\":\"testyard/ping:0123456789abcdef\"");
    CHECK_CONTAINS(text, "\"Cmd\":[\"--round\",\"3\"]");
    CHECK_CONTAINS(text, "\"Env\":[\"TEST_RUN=r1\",\"TEST_GROUP_ID=g\"]");
    CHECK_CONTAINS(text, "\"Labels\":{\"testyard.run\":\"r1\","
                         "\"testyard.plan\":\"ping\",\"testyard.group\":"
                         "\"g\",\"testyard.index\":\"0\"}");
    CHECK_CONTAINS(text, "\"Binds\":[\"/runs/r1/g/0:/outputs\"]");
    CHECK_CONTAINS(text, "\"NetworkMode\":\"host\"");
    CHECK_CONTAINS(text, "\"SecurityOpt\":[\"no-new-privileges\"]");
    CHECK_CONTAINS(text, "\"CapDrop\":[\"ALL\"]");
    CHECK_CONTAINS(text, "\"Init\":true");
    CHECK_CONTAINS(text, "\"User\":\"1073741824:1073741824\"");
    CHECK_CONTAINS(text, "\"ReadonlyRootfs\":true");
    CHECK_CONTAINS(text, "\"Tmpfs\":{\"/tmp\":\"rw,size=64m\"}");
    CHECK(strstr(text, "Entrypoint") == NULL);
    CHECK(strstr(text, "CapAdd") == NULL);
    free(text);
    cJSON_Delete(sent);
    cJSON_Delete(cfg);
    free(id);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

/* What a backend does: create and start n containers; on the first
 * failure remove what it created, newest first. */
static int
start_all(struct docker *d, int n, struct err *err)
{
    char *ids[8] = {0};
    int made = 0, rc = 0;
    cJSON *cfg = docker_container_config(&spec);

    for (; made < n; made++) {
        char name[32];

        snprintf(name, sizeof(name), "ty-r1-g-%d", made);
        if (docker_container_create(d, name, cfg, &ids[made], err) < 0 ||
            docker_container_start(d, ids[made], err) < 0) {
            rc = -1;
            made += ids[made] != NULL;
            break;
        }
    }
    while (rc < 0 && made-- > 0)
        docker_container_remove(d, ids[made], true, NULL);
    for (int i = 0; i < n; i++)
        free(ids[i]);
    cJSON_Delete(cfg);
    return rc;
}

static void
t_rollback_order(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct err err = {0};
    char *log;

    fakedocker_answer(f, "POST", "/v1.41/containers/create", 201,
                      "{\"Id\":\"cid\"}");
    fakedocker_answer(f, "POST", "/v1.41/containers/*/start", 204, NULL);
    fakedocker_answer(f, "DELETE", "/v1.41/containers/*", 204, NULL);
    fakedocker_fail_nth(f, "POST", "/v1.41/containers/create", 3, 500,
                        "{\"message\":\"injected: no space left\"}");
    CHECK(start_all(d, 4, &err) < 0);
    CHECK_CONTAINS(err.msg, "injected: no space left");
    log = fakedocker_log(f, true);
    CHECK_EQ_STR(log, "POST /v1.41/containers/create?name=ty-r1-g-0\n"
                      "POST /v1.41/containers/cid/start\n"
                      "POST /v1.41/containers/create?name=ty-r1-g-1\n"
                      "POST /v1.41/containers/cid/start\n"
                      "POST /v1.41/containers/create?name=ty-r1-g-2\n"
                      "DELETE /v1.41/containers/cid?v=1&force=1\n"
                      "DELETE /v1.41/containers/cid?v=1&force=1\n");
    free(log);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_wait_and_state(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct docker_state st;
    struct err err = {0};
    int code = -1;
    char *log;

    fakedocker_answer(f, "POST", "/v1.41/containers/*/wait", 200,
                      "{\"Error\":null,\"StatusCode\":137}");
    fakedocker_answer(f, "GET", "/v1.41/containers/*/json", 200,
                      "{\"Id\":\"abc\",\"State\":{\"Status\":\"exited\","
                      "\"Running\":false,\"OOMKilled\":true,\"Pid\":0,"
                      "\"ExitCode\":137,\"Error\":\"\",\"StartedAt\":"
                      "\"2026-11-29T18:55:35.5Z\",\"FinishedAt\":"
                      "\"2026-11-29T18:55:36.75Z\"}}");
    CHECK(docker_container_wait(d, "abc", DOCKER_WAIT_NEXT_EXIT, NULL, &code,
                                &err) == 0);
    CHECK_EQ_INT(code, 137);
    CHECK_MSG(docker_container_state(d, "abc", &st, &err) == 0, "%s", err.msg);
    CHECK_EQ_STR(st.status, "exited");
    CHECK(st.oom_killed && !st.running);
    CHECK_EQ_INT(st.exit_code, 137);
    CHECK_EQ_INT(st.finished_ns - st.started_ns, 1250000000);
    CHECK_EQ_INT(st.started_ns, 1795978535500000000LL);
    log = fakedocker_log(f, true);
    CHECK_EQ_STR(log, "POST /v1.41/containers/abc/wait?condition=next-exit\n"
                      "GET /v1.41/containers/abc/json\n");
    free(log);
    /* the engine's error while waiting is ours */
    fakedocker_answer(f, "POST", "/v1.41/containers/*/wait", 200,
                      "{\"Error\":{\"Message\":\"container removed\"},"
                      "\"StatusCode\":-1}");
    CHECK(docker_container_wait(d, "abc", DOCKER_WAIT_NOT_RUNNING, NULL, &code,
                                &err) < 0);
    CHECK_CONTAINS(err.msg, "container removed");
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_kill_remove_list(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    const char *const labels[] = {"testyard.run=r 1", "testyard.plan", NULL};
    struct err err = {0};
    cJSON *list;
    char *log, *nid = NULL;

    fakedocker_answer(f, NULL, "/v1.41/*", 204, NULL);
    fakedocker_answer(f, "GET", "/v1.41/containers/json", 200,
                      "[{\"Id\":\"a\"},{\"Id\":\"b\"}]");
    fakedocker_answer(f, "GET", "/v1.41/networks", 200, "[]");
    fakedocker_answer(f, "POST", "/v1.41/networks/create", 201,
                      "{\"Id\":\"n1\"}");
    CHECK(docker_container_kill(d, "a", NULL, &err) == 0);
    CHECK(docker_container_kill(d, "a", "SIGTERM", &err) == 0);
    CHECK(docker_container_remove(d, "a", false, &err) == 0);
    list = docker_container_list(d, labels, true, &err);
    CHECK(cJSON_GetArraySize(list) == 2);
    cJSON_Delete(list);
    list = docker_network_list(d, labels, &err);
    CHECK(cJSON_IsArray(list) && cJSON_GetArraySize(list) == 0);
    cJSON_Delete(list);
    CHECK(docker_network_create(d, "ty-r1", labels, &nid, &err) == 0);
    CHECK_EQ_STR(nid, "n1");
    CHECK_EQ_STR(fakedocker_request(f, fakedocker_count(f) - 1)->body,
                 "{\"Name\":\"ty-r1\",\"Driver\":\"bridge\",\"CheckDuplicate"
                 "\":true,\"Labels\":{\"testyard.run\":\"r 1\","
                 "\"testyard.plan\":\"\"}}");
    CHECK(docker_network_remove(d, "n1", &err) == 0);
    CHECK(docker_image_remove(d, "testyard/p:1", true, &err) == 0);
    log = fakedocker_log(f, true);
    CHECK_EQ_STR(log,
                 "POST /v1.41/containers/a/kill?signal=SIGKILL\n"
                 "POST /v1.41/containers/a/kill?signal=SIGTERM\n"
                 "DELETE /v1.41/containers/a?v=1\n"
                 "GET /v1.41/containers/json?all=1&filters=%7B%22label%22%3A"
                 "%5B%22testyard.run%3Dr%201%22%2C%22testyard.plan%22%5D%7D\n"
                 "GET /v1.41/networks?filters=%7B%22label%22%3A%5B%22"
                 "testyard.run%3Dr%201%22%2C%22testyard.plan%22%5D%7D\n"
                 "POST /v1.41/networks/create\n"
                 "DELETE /v1.41/networks/n1\n"
                 "DELETE /v1.41/images/testyard/p:1?force=1\n");
    free(log);
    free(nid);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

/* pause, unpause and an exec: its body, a detached start, and an exec
 * that has not run yet (ExitCode null) not taken for one that ended. */
static void
t_pause_exec(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct docker_exec_state st;
    struct err err = {0};
    char *log, *xid = NULL;

    fakedocker_answer(f, NULL, "/v1.41/*", 204, NULL);
    fakedocker_answer(f, "POST", "/v1.41/containers/a/exec", 201,
                      "{\"Id\":\"x1\"}");
    fakedocker_answer(f, "GET", "/v1.41/exec/x1/json", 200,
                      "{\"Running\":false,\"ExitCode\":null,\"Pid\":0}");
    fakedocker_fail_nth(f, "GET", "/v1.41/exec/x1/json", 2, 200,
                        "{\"Running\":false,\"ExitCode\":7,\"Pid\":42}");
    CHECK(docker_container_pause(d, "a", true, &err) == 0);
    CHECK(docker_container_pause(d, "a", false, &err) == 0);
    CHECK_MSG(docker_exec_create(d, "a",
                                 (const char *const[]){"pg", "-q", NULL},
                                 "1000:1000", &xid, &err) == 0,
              "%s", err.msg);
    CHECK_EQ_STR(xid, "x1");
    CHECK_EQ_STR(fakedocker_request(f, fakedocker_count(f) - 1)->body,
                 "{\"AttachStdin\":false,\"AttachStdout\":false,"
                 "\"AttachStderr\":false,\"Cmd\":[\"pg\",\"-q\"],"
                 "\"User\":\"1000:1000\"}");
    CHECK(docker_exec_start(d, "x1", &err) == 0);
    CHECK_EQ_STR(fakedocker_request(f, fakedocker_count(f) - 1)->body,
                 "{\"Detach\":true,\"Tty\":false}");
    CHECK(docker_exec_inspect(d, "x1", &st, &err) == 0);
    CHECK(!st.ended);
    CHECK(docker_exec_inspect(d, "x1", &st, &err) == 0);
    CHECK(st.ended);
    CHECK_EQ_INT(st.exit_code, 7);
    CHECK_EQ_INT(st.pid, 42);
    log = fakedocker_log(f, true);
    CHECK_EQ_STR(log, "POST /v1.41/containers/a/pause\n"
                      "POST /v1.41/containers/a/unpause\n"
                      "POST /v1.41/containers/a/exec\n"
                      "POST /v1.41/exec/x1/start\n"
                      "GET /v1.41/exec/x1/json\n"
                      "GET /v1.41/exec/x1/json\n");
    free(log);
    free(xid);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_image_exists(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct err err = {0};

    fakedocker_answer(f, "GET", "/v1.41/images/testyard/p:1/json", 200,
                      "{\"Id\":\"sha256:1\"}");
    fakedocker_answer(f, "GET", "/v1.41/images/testyard/p:2/json", 404,
                      "{\"message\":\"No such image: testyard/p:2\"}");
    fakedocker_answer(f, "GET", "/v1.41/images/testyard/p:3/json", 500,
                      "{\"message\":\"boom\"}");
    CHECK_EQ_INT(docker_image_exists(d, "testyard/p:1", &err), 1);
    CHECK_EQ_INT(docker_image_exists(d, "testyard/p:2", &err), 0);
    CHECK_EQ_INT(docker_image_exists(d, "testyard/p:3", &err), -1);
    CHECK_CONTAINS(err.msg, "boom");
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static const struct th_case cases[] = {
    {"negotiation", t_negotiation},
    {"handshake_requests", t_handshake_requests},
    {"docker_host", t_docker_host},
    {"unreachable_hints", t_unreachable_hints},
    {"http_error_message", t_http_error_message},
    {"create_body", t_create_body},
    {"rollback_order", t_rollback_order},
    {"wait_and_state", t_wait_and_state},
    {"kill_remove_list", t_kill_remove_list},
    {"pause_exec", t_pause_exec},
    {"image_exists", t_image_exists},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
