/*
 * docker_images.c — image endpoints of the Docker client: build from a tar
 * context, pull, inspect, exists and remove.
 *
 * /build answers 200 at once and then streams JSON lines: {"stream": text}
 * for the builder's output, {"aux": {"ID": ...}} with the new image's id,
 * and {"errorDetail": {...}, "error": ...} when a step fails — so a failed
 * build is only visible in the stream, never in the status code. A pull
 * (/images/create) streams the same way: progress lines, then an
 * {"error": ...} line when the registry refused or went away midway.
 */
#include "docker/docker_int.h"

#include "base/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct build {
    const struct docker_build_opts *o;
    char *error;    /* the first error the stream reported */
    char *image_id; /* from aux.ID */
};

static void
build_progress(const struct build *b, const char *text)
{
    char *copy, *save = NULL;

    if (b->o->progress == NULL || text == NULL)
        return;
    /* a "stream" value may hold several lines, or part of one */
    copy = xstrdup(text);
    for (char *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (line[0] != '\0')
            b->o->progress(b->o->arg, line);
    free(copy);
}

static int
build_line(void *arg, char *line, struct err *err)
{
    struct build *b = arg;
    cJSON *j = cJSON_Parse(line);
    const cJSON *detail;
    const char *msg;

    (void)err;
    if (j == NULL)
        return 0; /* not ours to judge: keep reading */
    detail = cJSON_GetObjectItemCaseSensitive(j, "errorDetail");
    msg = docker__str(detail, "message");
    if (msg == NULL)
        msg = docker__str(j, "error");
    if (msg != NULL && b->error == NULL)
        b->error = xstrdup(msg);
    build_progress(b, docker__str(j, "stream"));
    msg = docker__str(cJSON_GetObjectItemCaseSensitive(j, "aux"), "ID");
    if (msg != NULL && b->image_id == NULL)
        b->image_id = xstrdup(msg);
    cJSON_Delete(j);
    return 0;
}

static char *
build_path(const struct docker_build_opts *o)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "/build?rm=1&forcerm=1");
    if (o->tag) {
        cleanup_free char *t = docker__esc_query(o->tag);

        strbuf_addf(&sb, "&t=%s", t);
    }
    if (o->dockerfile) {
        cleanup_free char *f = docker__esc_query(o->dockerfile);

        strbuf_addf(&sb, "&dockerfile=%s", f);
    }
    if (o->labels) {
        cJSON *obj = docker__labels_object(o->labels);
        char *text = cJSON_PrintUnformatted(obj);
        cleanup_free char *e = docker__esc_query(text);

        strbuf_addf(&sb, "&labels=%s", e);
        cJSON_free(text);
        cJSON_Delete(obj);
    }
    if (o->nocache)
        strbuf_adds(&sb, "&nocache=1");
    return strbuf_detach(&sb);
}

/* Bytes from fd's offset to its end. */
static int
upload_size(int fd, uint64_t *size, struct err *err)
{
    struct stat st;
    off_t pos = lseek(fd, 0, SEEK_CUR);

    if (pos < 0 || fstat(fd, &st) < 0)
        return err_sys(err, errno, "build context");
    if (!S_ISREG(st.st_mode))
        return err_set(err, EINVAL, "build context: not a regular file");
    *size = (uint64_t)(st.st_size - pos);
    return 0;
}

/* The image id when the stream gave none: from inspecting the tag. */
static char *
id_from_tag(struct docker *d, const char *tag, struct err *err)
{
    cJSON *j = tag ? docker_image_inspect(d, tag, err) : NULL;
    char *id = docker__str(j, "Id") ? xstrdup(docker__str(j, "Id")) : NULL;

    if (id == NULL && j != NULL)
        err_set(err, EPROTO, "build of %s: no image id", tag);
    else if (id == NULL && tag == NULL)
        err_set(err, EPROTO, "build: the engine reported no image id");
    cJSON_Delete(j);
    return id;
}

static int
build_finish(struct docker *d, const struct docker_build_opts *o,
             struct build *b, char **image_id_out, struct err *err)
{
    if (b->error != NULL)
        return err_set(err, EIO, "image build%s%s failed: %s",
                       o->tag ? " of " : "", o->tag ? o->tag : "", b->error);
    if (b->image_id == NULL &&
        (b->image_id = id_from_tag(d, o->tag, err)) == NULL)
        return -1;
    if (image_id_out) {
        *image_id_out = b->image_id;
        b->image_id = NULL;
    }
    return 0;
}

int
docker_build(struct docker *d, int context_fd,
             const struct docker_build_opts *o, char **image_id_out,
             struct err *err)
{
    struct build b = {.o = o};
    struct docker_lines lines;
    cleanup_free char *path = build_path(o);
    struct docker_req r = {.method = "POST",
                           .path = path,
                           .ctype = "application/x-tar",
                           .body_fd = context_fd,
                           .stream = true,
                           .cancel = o->cancel,
                           .on_data = docker__lines_feed,
                           .arg = &lines};
    struct docker_resp resp;
    int rc;

    if (upload_size(context_fd, &r.body_size, err) < 0)
        return -1;
    docker__lines_init(&lines, build_line, &b);
    rc = docker__call(d, &r, &resp, err);
    if (rc == 0 && lines.buf.len > 0) /* a last line without '\n' */
        build_line(&b, lines.buf.buf, err);
    if (rc == 0)
        rc = build_finish(d, o, &b, image_id_out, err);
    docker__lines_release(&lines);
    docker__resp_release(&resp);
    free(b.error);
    free(b.image_id);
    return rc;
}

cJSON *
docker_image_inspect(struct docker *d, const char *ref, struct err *err)
{
    cleanup_free char *eref = docker__esc_path(ref);
    cleanup_free char *path = xasprintf("/images/%s/json", eref);

    return docker__call_json(d, "GET", path, NULL, err);
}

int
docker_image_exists(struct docker *d, const char *ref, struct err *err)
{
    struct err e = {0};
    cJSON *j = docker_image_inspect(d, ref, &e);

    if (j != NULL) {
        cJSON_Delete(j);
        return 1;
    }
    if (e.code == ENOENT)
        return 0;
    if (err)
        *err = e;
    return -1;
}

int
docker_image_remove(struct docker *d, const char *ref, bool force,
                    struct err *err)
{
    cleanup_free char *eref = docker__esc_path(ref);
    cleanup_free char *path =
        xasprintf("/images/%s%s", eref, force ? "?force=1" : "");

    return docker__call_simple(d, "DELETE", path, NULL, err);
}

/* --- pull ------------------------------------------------------------- */

/* The first error a pull's stream reported. */
static int
pull_line(void *arg, char *line, struct err *err)
{
    char **error = arg;
    cJSON *j = cJSON_Parse(line);
    const char *msg = docker__str(
        cJSON_GetObjectItemCaseSensitive(j, "errorDetail"), "message");

    (void)err;
    if (msg == NULL)
        msg = docker__str(j, "error");
    if (msg != NULL && *error == NULL)
        *error = xstrdup(msg);
    cJSON_Delete(j);
    return 0;
}

/* fromImage and tag of ref: "name@sha256:..." is pulled by digest, a
 * name without a tag is name:latest (an empty tag would pull every tag
 * of the repository). */
static char *
pull_path(const char *ref)
{
    const char *slash = strrchr(ref, '/');
    const char *colon = strrchr(slash ? slash : ref, ':');
    cleanup_free char *name = NULL;
    cleanup_free char *ename = NULL;
    cleanup_free char *etag = NULL;

    if (strchr(ref, '@') != NULL || colon == NULL) {
        ename = docker__esc_query(ref);
        return xasprintf("/images/create?fromImage=%s%s", ename,
                         strchr(ref, '@') ? "" : "&tag=latest");
    }
    name = xstrndup(ref, (size_t)(colon - ref));
    ename = docker__esc_query(name);
    etag = docker__esc_query(colon + 1);
    return xasprintf("/images/create?fromImage=%s&tag=%s", ename, etag);
}

int
docker_image_pull(struct docker *d, const char *ref, int64_t timeout_ms,
                  struct docker_cancel *cancel, struct err *err)
{
    cleanup_free char *path = pull_path(ref);
    char *error = NULL;
    struct docker_lines lines;
    struct docker_req r = {.method = "POST",
                           .path = path,
                           .body_fd = -1,
                           .timeout_ms = timeout_ms,
                           .cancel = cancel,
                           .on_data = docker__lines_feed,
                           .arg = &lines};
    struct docker_resp resp;
    int rc;

    docker__lines_init(&lines, pull_line, &error);
    rc = docker__call(d, &r, &resp, err);
    if (rc == 0 && lines.buf.len > 0)
        pull_line(&error, lines.buf.buf, err);
    if (rc == 0 && error != NULL)
        rc = err_set(err, EIO, "%s", error);
    docker__lines_release(&lines);
    docker__resp_release(&resp);
    free(error);
    return rc;
}
