/*
 * heaplib.c — what a container needs to load the LD_PRELOAD heap
 * profiler (planbuild_heap_library() finds it) into a program that is not
 * a plan (see builder/builder.h).
 *
 * A plan links the profiler; any other program gets it through LD_PRELOAD
 * (profiles.heap: preload). In a container whose image testyard did not
 * make, the profiler and the libraries it needs that the image may lack
 * (libcjson, zlib) are mounted one file each in one folder, and the
 * profiler, linked with RUNPATH $ORIGIN, finds them there. glibc's own
 * libraries are left out: a process has one libc, the image's, which the
 * program itself already loaded; mounting the host's would mix two.
 */
#include "builder/builder.h"

#include "base/strvec.h"
#include "base/util.h"

#include <string.h>

/* A library of glibc itself, by file name: the image brings its own. */
static bool
glibc_own(const char *path)
{
    static const char *const libs[] = {
        "libc.so",
        "libm.so",
        "libmvec.so",
        "libpthread.so",
        "libdl.so",
        "librt.so",
        "libresolv.so",
        "libutil.so",
        "libanl.so",
        "libnsl.so",
        "libnss_",
        "libthread_db.so",
        "libBrokenLocale.so",
        "libc_malloc_debug.so",
        "libmemusage.so",
        "libpcprofile.so",
        "ld-linux",
        "ld64.so",
        "ld.so",
    };
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;

    for (size_t i = 0; i < ARRAY_LEN(libs); i++)
        if (strncmp(base, libs[i], strlen(libs[i])) == 0)
            return true;
    return false;
}

char **
heaplib_files(const char *lib, struct err *err)
{
    char **deps = imagebuild_resolve(lib, err);
    struct strvec files = {0};

    if (deps == NULL)
        return err_prefix(err, "the heap profiler's libraries"), NULL;
    strvec_push(&files, lib);
    for (size_t i = 0; deps[i] != NULL; i++)
        if (!glibc_own(deps[i]) && strcmp(deps[i], lib) != 0)
            strvec_push(&files, deps[i]);
    strv_free(deps);
    return strvec_detach(&files);
}
