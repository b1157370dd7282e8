/*
 * test_daemon_queue.c — the queue's order and who starts: priority
 * first, then submission order; tasks start in order while they fit
 * beside what runs; the first that does not fit waits with the reason,
 * and every task behind it waits for it (none passes it); a task larger
 * than the whole budget is refused; a task with an unlimited group runs
 * alone.
 */
#include "daemon/daemon_int.h"
#include "th.h"

#include <string.h>

#define MiB ((uint64_t)1 << 20)
#define WHY 256

static struct daemon_task
task(int64_t id, int64_t prio, uint64_t mem)
{
    struct daemon_task t = {.id = id, .priority = prio};

    t.need.memory_bytes = mem * MiB;
    return t;
}

static void
t_order(void)
{
    struct daemon_task v[] = {task(1, 0, 1), task(2, 5, 1), task(3, 0, 1),
                              task(4, 5, 1), task(5, -1, 1)};
    struct daemon_task *p[5];
    const int64_t want[] = {2, 4, 1, 3, 5};

    for (int i = 0; i < 5; i++)
        p[4 - i] = &v[i]; /* any order in */
    daemon__queue_sort(p, 5);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(p[i]->id, want[i]);
}

static void
pick(struct daemon_task *v, size_t n, const struct admit_need *used,
     uint64_t budget_mib, enum pick *act, char why[][WHY])
{
    struct daemon_task *p[8];
    struct admit_budget b = {budget_mib * MiB, 4000};

    for (size_t i = 0; i < n; i++)
        p[i] = &v[i];
    daemon__queue_pick(p, n, used, &b, act, why[0], WHY);
}

static void
t_fit_in_order(void)
{
    struct daemon_task v[] = {task(1, 0, 100), task(2, 0, 100), task(3, 0, 100),
                              task(4, 0, 10)};
    struct admit_need used = {0};
    enum pick act[4];
    char why[4][WHY];

    pick(v, 4, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_START);
    CHECK_EQ_INT(act[1], PICK_START);
    CHECK_EQ_INT(act[2], PICK_WAIT);
    CHECK_CONTAINS(why[2], "needs 100.0 MiB, 56.0 MiB free of the 256 MiB "
                           "budget");
    /* a small one behind does not pass the one that waits */
    CHECK_EQ_INT(act[3], PICK_WAIT);
    CHECK_CONTAINS(why[3], "waits for task 3");
}

static void
t_beside_running(void)
{
    struct daemon_task v[] = {task(7, 0, 200)};
    struct admit_need used = {.memory_bytes = 100 * MiB};
    enum pick act[1];
    char why[1][WHY];

    pick(v, 1, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_WAIT);
    used.memory_bytes = 56 * MiB;
    pick(v, 1, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_START);
}

static void
t_too_large_refused(void)
{
    struct daemon_task v[] = {task(1, 0, 300), task(2, 0, 100)};
    struct admit_need used = {0};
    enum pick act[2];
    char why[2][WHY];

    pick(v, 2, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_REFUSE);
    CHECK_EQ_INT(act[1], PICK_START);
}

static void
t_unlimited_alone(void)
{
    struct daemon_task v[] = {task(1, 0, 0), task(2, 0, 10)};
    struct admit_need used = {.memory_bytes = 10 * MiB};
    enum pick act[2];
    char why[2][WHY];

    v[0].need.unlimited_memory = true;
    pick(v, 2, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_WAIT); /* something runs */
    used.memory_bytes = 0;
    pick(v, 2, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_START);
    CHECK_EQ_INT(act[1], PICK_WAIT); /* nothing beside it */
}

static void
t_cpu(void)
{
    struct daemon_task v[] = {task(1, 0, 1), task(2, 0, 1)};
    struct admit_need used = {0};
    enum pick act[2];
    char why[2][WHY];

    v[0].need.millicpu = 3000;
    v[1].need.millicpu = 2000;
    pick(v, 2, &used, 256, act, why);
    CHECK_EQ_INT(act[0], PICK_START);
    CHECK_EQ_INT(act[1], PICK_WAIT);
    CHECK_CONTAINS(why[1], "CPU");
}

static const struct th_case cases[] = {
    {"order", t_order},
    {"fit_in_order", t_fit_in_order},
    {"beside_running", t_beside_running},
    {"too_large_refused", t_too_large_refused},
    {"unlimited_alone", t_unlimited_alone},
    {"cpu", t_cpu},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
