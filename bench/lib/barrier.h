/*
 * barrier.h — what bench/barrier.c and its kinds of clients share.
 *
 * The barrier benchmark drives N clients of one kind from one thread:
 * libzmq DEALER sockets, ZMTP over plain sockets (lib/zmtp.c), plain
 * sockets sending lines, or Redis connections. Each kind is three
 * functions in a table — connect every client (and say hello where the
 * server wants it), run one round, close — and calls bar_on_answer for each
 * release it reads. The kinds live in barrier_clients.c and
 * barrier_redis.c; barrier.c measures.
 *
 * Ownership: struct bar belongs to barrier.c; the kinds own what they open
 * for their clients and close it in their close function.
 */
#ifndef TY_BENCH_BARRIER_H
#define TY_BENCH_BARRIER_H

#include "bench.h"
#include "resp.h"
#include "ty_board.h"
#include "svcproc.h"
#include "zmtp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BAR_RUN_ID "bench"
#define BAR_WAIT_MS 60000
/* Epoll tags: the client index, with this bit for its wake FIFO. */
#define BAR_BOARD_TAG 0x80000000u

/* What a redis client's command connection waits for. */
enum bar_rwait { RW_NONE, RW_INCR, RW_PUBLISH, RW_GET };

struct bar_client {
    void *sock;                  /* libzmq */
    struct zmtp_conn *z;         /* ZMTP */
    int fd;                      /* lines */
    struct resp_conn *cmd, *sub; /* redis */
    int64_t sent_ns, rel_ns;
    int round;           /* last round this client was released, -1 = none */
    enum bar_rwait wait; /* redis: the answer expected next */
    int64_t due_ns;      /* redis-poll: next GET, 0 = none */
    int64_t slot;        /* testyard: its release board slot, 0 = none */
    int wake;            /* testyard: its descriptor of the wake FIFO */
};

struct bar {
    size_t n;
    bool check;      /* testyard: check every answer (bar_on_answer) */
    bool redis_poll; /* redis: GET every poll_ms instead of SUBSCRIBE */
    bool board;      /* testyard: releases on the release board */
    int redis_port;
    int poll_ms;
    struct svcproc sp; /* the server, unless redis */
    void *ctx;
    struct bench_zpoll *zp; /* libzmq */
    int ep;                 /* the others */
    struct bar_client *c;
    int round;           /* current round, from 1; 0 while saying hello */
    size_t released;     /* clients released this round */
    unsigned char *seen; /* check: the seqs answered this round */
    char state[32];      /* "round-<r>" */
    const struct ty_board_slot *slots; /* the board, mapped (b->board) */
    void *map;
    size_t maplen;
    char nonce[32]; /* redis key prefix */
};

struct bar_ops {
    void (*connect)(struct bar *b);
    void (*round)(struct bar *b); /* sends, then waits for every release */
    void (*close)(struct bar *b);
};

extern const struct bar_ops bar_zmq_ops, bar_zmtp_ops, bar_lines_ops,
    bar_redis_ops;

/* barrier_clients.c: what every kind uses. */

/* A release (or, in round 0, the answer to hello) for client i; when
 * b->check, data must be a testyard answer for this round. */
void bar_on_answer(struct bar *b, size_t i, const char *data, size_t len);
/* A release read from client i's board slot. */
void bar_on_board(struct bar *b, size_t i);
/* This round's signal_and_wait, encoded by ty_wire without the closing
 * brace (every client sends the same bytes, then its board slot if it has
 * one: bar_request_end), and client i's hello; the caller frees them. */
char *bar_round_request(const struct bar *b, size_t *len);
size_t bar_request_end(const struct bar_client *c, char *buf, size_t size);
char *bar_hello_request(const struct bar *b, size_t i, size_t *len);
/* Map the service's release board (b->board). */
void bar_board_map(struct bar *b);
/* Open client i's wake FIFO and add it to epoll ep, edge-triggered. */
void bar_board_watch(struct bar *b, size_t i, int ep);
void bar_epoll_add(struct bar *b, int fd, uint32_t tag);
/* Wait (a little) for fd to take more: a full socket buffer, rare. */
void bar_wait_writable(int fd);
/* Die saying how many clients were released this round. */
void bar_stuck(const struct bar *b) __attribute__((noreturn));

#endif
