/*
 * syncsvc_board.c — the release board: barrier releases for instances on
 * the coordinator's own host without a message each.
 *
 * Releasing N instances over their connections costs N socket messages
 * after the last signal, each a trip through libzmq and the kernel's TCP
 * stack on both sides. Instances that share the coordinator's kernel
 * (local:exec, local:docker) can instead read their answers from a file
 * both sides map, and be woken together by one write to a FIFO:
 *
 *   <dir>/board  a header and slots of 16 bytes: the id of the request
 *                answered and its seq. The coordinator writes; instances
 *                map it read-only.
 *   <dir>/wake   a FIFO every instance opens for reading and watches with
 *                an edge-triggered epoll; it never reads it.
 *
 * A connection that says hello with "board": 1 gets an area of
 * TY_BOARD_AREA slots; a barrier or signal_and_wait that names one of
 * them is answered there when it is released: the seq is stored, then the
 * id, and after all of a release's slots one byte goes into the FIFO.
 * The FIFO always holds exactly one byte after a release (the previous one
 * is read back first), so the write finds the pipe empty and wakes every
 * reader, and a reader woken but not yet scheduled still sees it readable.
 * Failures, timeouts and cancels still travel as messages.
 *
 * Only the coordinator's user, and for containers the group they run
 * as, may open the folder, the file or the FIFO.
 *
 * The layout is in docs/sync-protocol.md ("Same-host release").
 */
#include "sync/syncsvc_int.h"

#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Areas per instance before the board is full: most instances hold one
 * connection; the rest fall back to messages. */
#define AREAS_PER_INST 2

/* Give gid (when > 0) the access mode grants the group, or keep fd to
 * its owner: no one else may open the board or the FIFO. An outsider
 * reading the FIFO would take the wake-up byte from every instance. */
static int
share(int fd, int gid, mode_t mode)
{
    if (gid > 0 && fchown(fd, (uid_t)-1, (gid_t)gid) < 0)
        return -1;
    return fchmod(fd, gid > 0 ? mode : mode & 0700);
}

/* The board's folder, made here (an existing one is refused: the
 * service removes what it made and nothing else). */
static int
make_dir(struct syncsvc *svc, const char *dir, int gid, struct err *err)
{
    int dfd;

    if (mkdir(dir, 0700) < 0)
        return err_sys(err, errno, "release board: %s", dir);
    svc->board_dir = xstrdup(dir);
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || share(dfd, gid, 0750) < 0) {
        err_sys(err, errno, "release board: %s", dir);
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    return dfd;
}

static int
make_file(struct syncsvc *svc, int dfd, int gid,
          const struct ty_board_header *h, struct err *err)
{
    int fd = openat(dfd, "board",
                    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

    if (fd < 0 || share(fd, gid, 0640) < 0 ||
        ftruncate(fd, (off_t)svc->board_bytes) < 0 ||
        pwrite(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h)) {
        err_sys(err, errno, "release board: %s/board", svc->board_dir);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    svc->board =
        mmap(NULL, svc->board_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (svc->board == MAP_FAILED) {
        svc->board = NULL;
        return err_sys(err, errno, "release board: mmap %s/board",
                       svc->board_dir);
    }
    svc->board_slots = h->nslots;
    return 0;
}

static int
make_fifo(struct syncsvc *svc, int dfd, int gid, struct err *err)
{
    if (mkfifoat(dfd, "wake", 0600) < 0 ||
        (svc->wake_fd = openat(
             dfd, "wake", O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        share(svc->wake_fd, gid, 0640) < 0)
        return err_sys(err, errno, "release board: %s/wake", svc->board_dir);
    return 0;
}

int
svc__board_open(struct syncsvc *svc, const char *dir, int gid, struct err *err)
{
    struct ty_board_header h = {.magic = TY_BOARD_MAGIC,
                                .version = TY_BOARD_VERSION,
                                .slot_bytes = sizeof(struct ty_board_slot),
                                .area_slots = TY_BOARD_AREA};
    int dfd, rc;

    h.nslots = (uint64_t)(svc->ninst ? svc->ninst : 1) * AREAS_PER_INST *
               TY_BOARD_AREA;
    svc->board_bytes = sizeof(h) + h.nslots * sizeof(struct ty_board_slot);
    svc->wake_fd = -1;
    dfd = make_dir(svc, dir, gid, err);
    if (dfd < 0)
        return -1;
    rc = make_file(svc, dfd, gid, &h, err) < 0 ||
                 make_fifo(svc, dfd, gid, err) < 0
             ? -1
             : 0;
    close(dfd);
    return rc;
}

void
svc__board_close(struct syncsvc *svc)
{
    if (svc->board != NULL)
        munmap(svc->board, svc->board_bytes);
    svc->board = NULL;
    if (svc->wake_fd >= 0)
        close(svc->wake_fd);
    svc->wake_fd = -1;
    if (svc->board_dir != NULL) {
        cleanup_free char *file = path_join(svc->board_dir, "board");
        cleanup_free char *fifo = path_join(svc->board_dir, "wake");

        unlink(file);
        unlink(fifo);
        rmdir(svc->board_dir);
    }
    free(svc->board_dir);
    svc->board_dir = NULL;
}

int64_t
svc__board_area(struct syncsvc *svc)
{
    int64_t first;

    if (svc->board == NULL ||
        svc->board_next + TY_BOARD_AREA > svc->board_slots)
        return 0;
    first = (int64_t)svc->board_next + 1;
    svc->board_next += TY_BOARD_AREA;
    return first;
}

void
svc__board_post(struct syncsvc *svc, int64_t slot, int64_t id, int64_t seq)
{
    struct ty_board_slot *s =
        (struct ty_board_slot *)(void *)((char *)svc->board +
                                         sizeof(struct ty_board_header)) +
        (slot - 1);

    __atomic_store_n(&s->seq, seq, __ATOMIC_RELAXED);
    __atomic_store_n(&s->id, (uint64_t)id, __ATOMIC_RELEASE);
}

void
svc__board_wake(struct syncsvc *svc)
{
    char c[64];

    while (read(svc->wake_fd, c, sizeof(c)) > 0)
        ;
    if (write(svc->wake_fd, "w", 1) != 1)
        log_warnx("release board: cannot wake instances: %s", strerror(errno));
}
