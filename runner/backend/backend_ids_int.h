/*
 * backend/backend_ids_int.h — the users and the group a local:docker run's
 * containers run as, and the host folders only they may write (see
 * backend_ids.c).
 *
 * Ownership: paths are borrowed for the call.
 */
#ifndef TY_BACKEND_IDS_H
#define TY_BACKEND_IDS_H

#include "backend/backend.h"
#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>

struct composition;

/* Where a run's block of ids is drawn from: above every range Linux
 * distributions give to accounts, system users and subordinate ids. */
#define BACKEND_IDS_LOW 0x40000000u  /* 2^30 */
#define BACKEND_IDS_HIGH 0x7f000000u /* below 2^31, signed-uid safe */

/* A block of n + 1 ids no account or group of this host has: instance i
 * runs as uid *base + i, and every instance of the run has the gid *base
 * as its only group. Fails when no free block is found in a few draws. */
int backend__ids_pick(size_t n, int *base, struct err *err);

/* For a run of c by this process: b->instance_uid and instance_gid set to
 * a fresh block when it runs as root; left -1 (the coordinator's own)
 * otherwise, when no group may ask for root. */
int backend__ids_for_run(struct backend *b, const struct composition *c,
                         struct err *err);
/* "uid:gid" of instance in, into buf: its own uid in the run's block, 0
 * when its group asks for root, the coordinator's when b has no block.
 * *uid gets the uid its folders are given to (-1: leave them as made). */
const char *backend__ids_user(const struct backend *b,
                              const struct composition *c,
                              const struct backend_instance *in, int *uid,
                              char *buf, size_t size);

/* Make dir (its parents as they come, 0755) as a folder of uid:gid, mode
 * 0700; uid -1 leaves the owner alone. A dir that exists already is taken
 * only when it is a folder (not a link) of the coordinator's. */
int backend__ids_make_dir(const char *dir, int uid, int gid, struct err *err);

/* Give the folder open at fd (named dir in errors) to uid:gid, mode 0700;
 * uid -1 leaves the owner alone. */
int backend__ids_give(int fd, const char *dir, int uid, int gid,
                      struct err *err);

/* Give dir, made by backend__ids_make_dir(), back to the coordinator's
 * user with mode 0755 once no container can write it any more; what is in
 * it keeps its owner. Errors are logged. */
void backend__ids_give_back(const char *dir);

#endif
