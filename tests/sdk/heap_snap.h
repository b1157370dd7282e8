/*
 * heap_snap.h — the heap profiler's current profile, decoded, for tests.
 */
#ifndef TY_HEAP_SNAP_H
#define TY_HEAP_SNAP_H

#include "heap_pb.h"

/* Collect the sampler's tables, build the gzipped profile as a snapshot
 * would, and decode it into p (release with heap_pb_free). 0, or -1 with
 * the reason printed as a TAP comment. */
int heap_snap_now(struct heap_pb *p);

/* Index of the sample value types in a heap profile. */
enum {
    HEAP_ALLOC_OBJECTS,
    HEAP_ALLOC_SPACE,
    HEAP_INUSE_OBJECTS,
    HEAP_INUSE_SPACE
};

#endif
