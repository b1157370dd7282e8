/*
 * heap_snap.c — the heap profiler's current profile, decoded (see
 * heap_snap.h).
 */
#include "heap_snap.h"
#include "ty_pprof.h"

#include <stdio.h>
#include <stdlib.h>

int
heap_snap_now(struct heap_pb *p)
{
    struct ty__heap_snap s = {0};
    struct ty__heap_totals tot = {0};
    char err[128];
    void *gz = NULL;
    size_t len = 0;
    int was = ty__heap_quiet_begin(), r;

    r = ty__heap_collect(&s);
    if (r == 0)
        r = ty__heap_profile(&s, &gz, &len, &tot);
    ty__heap_snap_release(&s);
    ty__heap_totals_release(&tot);
    if (r == 0 && heap_pb_parse_gz(gz, len, p, err, sizeof(err)) < 0) {
        printf("#   profile does not decode: %s\n", err);
        r = -1;
    }
    free(gz);
    ty__heap_quiet_end(was);
    return r < 0 ? -1 : 0;
}
