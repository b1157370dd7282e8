/*
 * builder/builder.h — a plan's Docker image without a registry or a base image.
 *
 * The plan is compiled on the host; its executable, the shared libraries
 * the dynamic loader resolves for it, the loader itself, libgcc_s.so.1
 * (which backtrace() loads at run time) and three small
 * generated files (/etc/nsswitch.conf, /etc/passwd, /etc/group) are packed
 * into a tar build context whose Dockerfile (from docker/Dockerfile.plan)
 * starts FROM scratch. The image is tagged
 * testyard/<plan>:<first 16 hex digits of the SHA-256 of the context>, and
 * the build is skipped when an image with that tag exists, so an unchanged
 * plan is never rebuilt. Inside the image the plan is /plan/<plan>, the
 * entrypoint; libraries sit at the paths they have on the host.
 *
 * Ownership: options are borrowed; strings in the result and the arrays
 * returned are the caller's (imagebuild_result_release, strv_free of
 * base/strvec.h).
 */
#ifndef TY_IMAGEBUILD_H
#define TY_IMAGEBUILD_H

#include "base/err.h"
#include "docker/docker.h"

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

/* The PT_INTERP of the ELF file at path into interp ("" for a statically
 * linked program), fails (ENOEXEC) for a file that is not 64-bit ELF. */
int imagebuild_elf_interp(const char *path, char *interp, size_t size,
                          struct err *err);

/* The repository for a plan: "testyard/" + the name lowercased, with
 * characters Docker refuses turned into '-'. Caller frees. */
char *imagebuild_repo(const char *plan);

/* Where the Dockerfile template is: $TESTYARD_DOCKER_DIR, a docker/
 * folder next to the program or up to four levels above it (a build
 * tree), or the installed share/testyard/docker. Caller frees. */
char *imagebuild_template_path(struct err *err);

/*
 * Plan builds: compiling a test plan into a binary the backends can run.
 *
 * Plans are C sources listed in their manifest's `build` section. The
 * runner compiles them against the SDK (libtestyard.a, linked statically so
 * the heap profiler's allocator wrappers are in the binary) into a cache
 * folder named by a content hash of everything that goes into the build, so
 * an unchanged plan is not compiled again.
 */

struct planbuild_spec {
    const char *name;     /* plan name */
    const char *dir;      /* plan folder */
    char *const *sources; /* relative to dir */
    size_t nsources;
    char *const *cflags;
    size_t ncflags;
    char *const *pkg_config; /* extra pkg-config packages */
    size_t npkg_config;
    char *const *ldlibs;
    size_t nldlibs;
};

/* Compile the plan (or find it in the cache) and return the binary's path
 * (caller frees). The compiler's command and output are kept as build.log
 * next to the binary, and a failed build's message names that file.
 * *cached is set to 1 when nothing had to be compiled. */
char *planbuild(const struct planbuild_spec *spec, int *cached,
                struct err *err);

/* The LD_PRELOAD heap profiler's absolute path: libtestyard-heap.so
 * next to the running program (a build tree), in ../lib from it, or in
 * TY_PREFIX/lib (installed). Caller frees. */
char *planbuild_heap_library(struct err *err);

/* Where plan binaries are cached: $TESTYARD_CACHE, else
 * $XDG_CACHE_HOME/testyard, else $HOME/.cache/testyard. Caller frees. */
char *planbuild_cache_dir(void);

#endif
