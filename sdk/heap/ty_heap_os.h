/*
 * ty_heap_os.h — the memory the heap profiler maps for itself
 * (ty_heap_os.c): its tables and snapshot arrays come from here, never from
 * malloc, and each mapping is listed so that a snapshot can say how much of
 * it is resident. Internal to the profiler.
 */
#ifndef TY_HEAP_OS_H
#define TY_HEAP_OS_H

#include <stddef.h>

/* n bytes of zeroed memory from mmap, listed; NULL when out of memory.
 * Safe inside malloc (allocates nothing) and from any thread. */
void *ty__heap_os_alloc(size_t n);
/* Give back what ty__heap_os_alloc returned (n as asked then). */
void ty__heap_os_free(void *p, size_t n);

/* Held across fork by the profiler's prepare handler, taken after every
 * other lock of the profiler (the list's lock is innermost). */
void ty__heap_os_lock(void);
void ty__heap_os_unlock(void);

#endif
