/*
 * test_buf.c — the shared growable buffer (sdk/common/ty_buf.c): growth
 * past the first capacity, formatting, a size past size_t refused
 * without touching what the buffer holds, and CSV fields.
 */
#include "th.h"
#include "ty_buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void
t_grows(void)
{
    struct ty__buf b = {0};
    size_t caps = 0, last = 0;

    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_INT(ty__buf_addc(&b, (char)('a' + i % 26)), 0);
        if (b.cap != last) {
            CHECK_MSG(last == 0 ? b.cap == TY__BUF_MIN : b.cap == last * 2,
                      "capacity %zu after %zu", b.cap, last);
            last = b.cap;
            caps++;
        }
    }
    CHECK_EQ_INT(b.len, 1000);
    CHECK_EQ_INT(strlen(b.buf), 1000);
    CHECK_EQ_INT(caps, 3); /* 256, 512, 1024 */
    CHECK(b.buf[0] == 'a' && b.buf[999] == 'a' + 999 % 26);
    CHECK(!b.oom);
    ty__buf_release(&b);
    CHECK(b.buf == NULL && b.len == 0 && b.cap == 0);
}

static void
t_formats(void)
{
    struct ty__buf b = {0};
    char big[700];

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK_EQ_INT(ty__buf_addf(&b, "%d-%s", 42, "a"), 0);
    CHECK_EQ_INT(ty__buf_adds(&b, "|"), 0);
    CHECK_EQ_INT(ty__buf_addf(&b, "%s", big), 0);
    CHECK_EQ_INT(b.len, 5 + 699);
    CHECK(strncmp(b.buf, "42-a|xxx", 8) == 0);
    CHECK_EQ_INT(ty__buf_add(&b, NULL, 0), 0);
    CHECK_EQ_INT(b.len, 704);
    ty__buf_release(&b);
}

static void
t_overflow_refused(void)
{
    struct ty__buf b = {0};

    CHECK_EQ_INT(ty__buf_adds(&b, "kept"), 0);
    CHECK_EQ_INT(ty__buf_reserve(&b, SIZE_MAX - 4), -ENOMEM);
    CHECK(b.oom);
    CHECK_EQ_STR(b.buf, "kept");
    CHECK_EQ_INT(b.len, 4);
    /* sticky: later additions do nothing */
    CHECK_EQ_INT(ty__buf_adds(&b, "more"), -ENOMEM);
    CHECK_EQ_STR(b.buf, "kept");
    ty__buf_release(&b);
    CHECK(!b.oom);
    CHECK_EQ_INT(ty__buf_add(&b, "x", SIZE_MAX), -ENOMEM);
    CHECK(b.buf == NULL && b.oom);
    ty__buf_release(&b);
}

/* CSV fields: plain as they are, quoted when they hold a comma or a quote
 * (quotes doubled), control characters dropped. */
static void
t_csv(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"load.cycles", "load.cycles"},
        {"load.cycles,stage=2", "\"load.cycles,stage=2\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"a\nb\r\tc\x7f", "abc"},
        {"x,\ny", "\"x,y\""},
        {"", ""},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ty__buf b = {0};

        CHECK_EQ_INT(ty__buf_adds(&b, "<"), 0);
        CHECK_EQ_INT(ty__buf_add_csv(&b, cases[i].in), 0);
        CHECK_EQ_INT(ty__buf_adds(&b, ">"), 0);
        CHECK_MSG(strlen(b.buf) == strlen(cases[i].out) + 2 &&
                      strncmp(b.buf + 1, cases[i].out, strlen(cases[i].out)) ==
                          0,
                  "%s: got %s", cases[i].out, b.buf);
        ty__buf_release(&b);
    }
}

static const struct th_case cases[] = {
    {"grows", t_grows},
    {"formats", t_formats},
    {"overflow_refused", t_overflow_refused},
    {"csv", t_csv},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
