/*
 * th.h — the unit test harness.
 *
 * A test program lists its cases in a table and hands it to th_main():
 *
 *     static void t_sizes(void) { CHECK_EQ_INT(parse("1Ki"), 1024); }
 *     static const struct th_case cases[] = {{"sizes", t_sizes}, {NULL, NULL}};
 *     int main(int argc, char **argv) { return th_main(argc, argv, cases); }
 *
 * Each case runs in its own forked child with a deadline (TH_TIMEOUT seconds,
 * 60 by default), so a crash or a hang fails that case only. Output is TAP:
 * "ok N - name", "not ok N - name", "ok N - name # SKIP why", and the last
 * line is "N passed, N failed". With TH_NOFORK=1 in the environment cases run
 * in-process (for gdb and valgrind). `prog NAME...` runs only those cases.
 */
#ifndef TY_TH_H
#define TY_TH_H

#include <stdbool.h>
#include <stdint.h>

struct th_case {
    const char *name;
    void (*fn)(void);
};

int th_main(int argc, char **argv, const struct th_case *cases);

void th_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void th_skip(const char *why) __attribute__((noreturn));
/* Number of failed checks in the current case so far. */
int th_failures(void);
/* A fresh directory for the current case, removed when it ends. */
const char *th_tmpdir(void);

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            th_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                   \
    } while (0)

#define CHECK_MSG(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond))                                                           \
            th_fail(__FILE__, __LINE__, __VA_ARGS__);                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
    do {                                                                       \
        long long th_a_ = (long long)(a), th_b_ = (long long)(b);              \
        if (th_a_ != th_b_)                                                    \
            th_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b,      \
                    th_a_, th_b_);                                             \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                     \
    do {                                                                       \
        const char *th_a_ = (a), *th_b_ = (b);                                 \
        if (th_a_ == NULL || th_b_ == NULL || strcmp(th_a_, th_b_) != 0)       \
            th_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,  \
                    th_a_ ? th_a_ : "(null)", th_b_ ? th_b_ : "(null)");       \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                            \
    do {                                                                       \
        const char *th_h_ = (hay), *th_n_ = (needle);                          \
        if (th_h_ == NULL || strstr(th_h_, th_n_) == NULL)                     \
            th_fail(__FILE__, __LINE__, "%s contains \"%s\": got \"%s\"",      \
                    #hay, th_n_, th_h_ ? th_h_ : "(null)");                    \
    } while (0)

#endif
