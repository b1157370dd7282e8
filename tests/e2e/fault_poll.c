/*
 * fault_poll.c — an LD_PRELOAD library for tests/e2e/exec-errors.sh: once
 * the file named by TY_FAULT_POLL exists, zmq_poll fails with EFAULT, so
 * that a test can make the coordinator's run loop fail in the middle of a
 * run. libzmq's own zmq_poll does the work until then.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int zmq_poll(void *items, int nitems, long timeout);

int
zmq_poll(void *items, int nitems, long timeout)
{
    static int (*real)(void *, int, long);
    const char *flag = getenv("TY_FAULT_POLL");

    if (flag != NULL && access(flag, F_OK) == 0) {
        errno = EFAULT;
        return -1;
    }
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "zmq_poll");
    return real(items, nitems, timeout);
}
