/*
 * fakedocker_client.h — the runner's Docker client connected to a fake
 * engine, for the tests of the client (test_docker.c, test_docker_stream.c).
 *
 * Header-only because it calls the runner (docker_new), which only the
 * unit tests link: the helpers' .c files stay libc-only. The client is the
 * caller's (docker_destroy).
 */
#ifndef TY_FAKEDOCKER_CLIENT_H
#define TY_FAKEDOCKER_CLIENT_H

#include "docker/docker.h"
#include "fakedocker.h"
#include "th.h"

/* A client of f; a failure to connect fails the case (and returns NULL). */
static inline struct docker *
fakedocker_client(struct fakedocker *f)
{
    struct err err = {0};
    struct docker *d = docker_new(fakedocker_host(f), &err);

    CHECK_MSG(d != NULL, "docker_new: %s", err.msg);
    return d;
}

#endif
