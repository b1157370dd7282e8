/*
 * imagebuild.h — a plan's Docker image without a registry or a base image.
 *
 * The plan is compiled on the host; its executable, the shared libraries
 * the dynamic loader resolves for it, the loader itself and three small
 * generated files (/etc/nsswitch.conf, /etc/passwd, /etc/group) are packed
 * into a tar build context whose Dockerfile (from docker/Dockerfile.plan)
 * starts FROM scratch. The image is tagged
 * testyard/<plan>:<first 16 hex digits of the SHA-256 of the context>, and
 * the build is skipped when an image with that tag exists, so an unchanged
 * plan is never rebuilt. Inside the image the plan is /plan/<plan>, the
 * entrypoint; libraries sit at the paths they have on the host.
 *
 * Ownership: options are borrowed; strings in the result and the arrays
 * returned are the caller's (imagebuild_result_release,
 * imagebuild_strv_free).
 */
#ifndef TY_IMAGEBUILD_H
#define TY_IMAGEBUILD_H

#include "docker.h"
#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct imagebuild_opts {
    const char *plan;   /* plan name; the image is testyard/<plan> */
    const char *binary; /* the plan's compiled executable (ELF) */
    /* More host files to put in the image at the same path, such as the
     * LD_PRELOAD heap profiler; shared objects among them have their
     * libraries resolved too. NULL-terminated, or NULL. */
    const char *const *extra;
    /* Labels on the image besides testyard.plan ("k=v"), or NULL. */
    const char *const *labels;
    /* The Dockerfile template; NULL = imagebuild_template_path(). */
    const char *template_path;
    void (*progress)(void *arg, const char *line); /* build output */
    void *arg;
    struct docker_cancel *cancel;
};

struct imagebuild_result {
    char *tag;      /* testyard/<plan>:<hash16> */
    char *image_id; /* sha256:... */
    bool built;     /* false: the tag existed, nothing was built */
    uint64_t context_bytes;
    uint64_t files; /* entries in the context */
};

/* Build (or find) the image of a plan. */
int imagebuild_build(struct docker *d, const struct imagebuild_opts *o,
                     struct imagebuild_result *res, struct err *err);
void imagebuild_result_release(struct imagebuild_result *res);

/* Write the build context for o into fd (uncompressed tar) and its tag
 * into *tag_out. Needs no engine. */
int imagebuild_context(const struct imagebuild_opts *o, int fd, char **tag_out,
                       uint64_t *files_out, struct err *err);

/* The absolute paths of the shared libraries and the loader that the
 * ELF file at path resolves to on this host, sorted; an empty list for a
 * static executable. Fails naming each library the loader cannot find. */
char **imagebuild_resolve(const char *path, struct err *err);
void imagebuild_strv_free(char ***v);

/* The repository for a plan: "testyard/" + the name lowercased, with
 * characters Docker refuses turned into '-'. Caller frees. */
char *imagebuild_repo(const char *plan);

/* Where the Dockerfile template is: $TESTYARD_DOCKER_DIR, a docker/
 * folder next to the program or up to four levels above it (a build
 * tree), or the installed share/testyard/docker. Caller frees. */
char *imagebuild_template_path(struct err *err);

#endif
