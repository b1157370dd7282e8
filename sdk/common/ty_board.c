/*
 * ty_board.c — reading the release board (see ty_board.h).
 *
 * The wake FIFO is watched edge-triggered through a private epoll set:
 * the coordinator leaves one byte in it after every release, so a
 * level-triggered watch would always fire. Each write is a new edge for
 * every reader. This side never reads the FIFO: a byte taken out would
 * hide the release from every other instance on the host.
 */
#include "ty_board.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct ty__board {
    void *map;
    size_t len;
    const struct ty_board_slot *slots;
    uint64_t nslots;
    int fifo, ep;
    int64_t first;                /* the area's first slot, from 1; 0 = off */
    int64_t owner[TY_BOARD_AREA]; /* request id per slot, 0 = free */
    int waiting;
};

static char *
join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *s = malloc(a + b + 2);

    if (s == NULL)
        return NULL;
    memcpy(s, dir, a);
    s[a] = '/';
    memcpy(s + a + 1, name, b + 1);
    return s;
}

static bool
map_board(struct ty__board *b, const char *path)
{
    struct ty_board_header h;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool ok = false;

    if (fd < 0)
        return false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
        memcmp(h.magic, TY_BOARD_MAGIC, sizeof(TY_BOARD_MAGIC)) == 0 &&
        h.version == TY_BOARD_VERSION &&
        h.slot_bytes == sizeof(struct ty_board_slot) &&
        h.area_slots == TY_BOARD_AREA && h.nslots > 0 &&
        h.nslots < (uint64_t)1 << 32 &&
        (uint64_t)st.st_size >=
            sizeof(h) + h.nslots * sizeof(struct ty_board_slot)) {
        b->len = sizeof(h) + h.nslots * sizeof(struct ty_board_slot);
        b->map = mmap(NULL, b->len, PROT_READ, MAP_SHARED, fd, 0);
        if (b->map != MAP_FAILED) {
            b->slots = (const struct ty_board_slot
                            *)(const void *)((const char *)b->map + sizeof(h));
            b->nslots = h.nslots;
            ok = true;
        } else {
            b->map = NULL;
        }
    }
    close(fd);
    return ok;
}

static bool
watch_fifo(struct ty__board *b, const char *path)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
    struct stat st;

    b->fifo = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (b->fifo < 0 || fstat(b->fifo, &st) < 0 || !S_ISFIFO(st.st_mode))
        return false;
    b->ep = epoll_create1(EPOLL_CLOEXEC);
    return b->ep >= 0 && epoll_ctl(b->ep, EPOLL_CTL_ADD, b->fifo, &ev) == 0;
}

struct ty__board *
ty__board_open(const char *dir)
{
    struct ty__board *b = calloc(1, sizeof(*b));
    char *board = dir ? join(dir, "board") : NULL;
    char *wake = dir ? join(dir, "wake") : NULL;
    bool ok;

    if (b != NULL)
        b->fifo = b->ep = -1;
    ok = b != NULL && board != NULL && wake != NULL && map_board(b, board) &&
         watch_fifo(b, wake);
    free(board);
    free(wake);
    if (!ok)
        ty__board_close(&b);
    return b;
}

void
ty__board_close(struct ty__board **pb)
{
    struct ty__board *b = *pb;

    if (b == NULL)
        return;
    if (b->map != NULL)
        munmap(b->map, b->len);
    if (b->ep >= 0)
        close(b->ep);
    if (b->fifo >= 0)
        close(b->fifo);
    free(b);
    *pb = NULL;
}

bool
ty__board_enable(struct ty__board *b, int64_t first)
{
    if (first < 1 || (uint64_t)first - 1 + TY_BOARD_AREA > b->nslots)
        return false;
    b->first = first;
    return true;
}

bool
ty__board_enabled(const struct ty__board *b)
{
    return b != NULL && b->first > 0;
}

int
ty__board_fd(const struct ty__board *b)
{
    return b->ep;
}

int64_t
ty__board_reserve(struct ty__board *b, int64_t id)
{
    if (!ty__board_enabled(b))
        return 0;
    for (int k = 0; k < TY_BOARD_AREA; k++) {
        if (b->owner[k] == 0) {
            b->owner[k] = id;
            b->waiting++;
            return b->first + k;
        }
    }
    return 0;
}

void
ty__board_forget(struct ty__board *b, int64_t id)
{
    if (b == NULL)
        return;
    for (int k = 0; k < TY_BOARD_AREA; k++) {
        if (b->owner[k] == id) {
            b->owner[k] = 0;
            b->waiting--;
        }
    }
}

int
ty__board_waiting(const struct ty__board *b)
{
    return b ? b->waiting : 0;
}

size_t
ty__board_collect(struct ty__board *b, int64_t ids[TY_BOARD_AREA],
                  int64_t seqs[TY_BOARD_AREA])
{
    struct epoll_event ev[1];
    size_t n = 0;

    while (epoll_wait(b->ep, ev, 1, 0) < 0 && errno == EINTR)
        ;
    for (int k = 0; k < TY_BOARD_AREA; k++) {
        const struct ty_board_slot *s = &b->slots[b->first - 1 + k];

        if (b->owner[k] == 0 ||
            __atomic_load_n(&s->id, __ATOMIC_ACQUIRE) != (uint64_t)b->owner[k])
            continue;
        ids[n] = b->owner[k];
        seqs[n] = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
        n++;
        b->owner[k] = 0;
        b->waiting--;
    }
    return n;
}
