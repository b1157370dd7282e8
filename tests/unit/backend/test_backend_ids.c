/*
 * test_backend_ids.c — the users local:docker containers run as: a block
 * of ids no host account has, each instance's "uid:gid", and folders that
 * are given to one instance alone and back, never through a link.
 */
#include "backend/backend_ids_int.h"
#include "config/config.h"
#include "th.h"
#include "base/util.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
t_pick(void)
{
    struct err err = {0};
    int base = -1, other = -1;

    CHECK_MSG(backend__ids_pick(100, &base, &err) == 0, "%s", err.msg);
    CHECK((unsigned)base >= BACKEND_IDS_LOW &&
          (unsigned)base + 100 < BACKEND_IDS_HIGH);
    CHECK(getpwuid((uid_t)base) == NULL && getgrgid((gid_t)base) == NULL);
    CHECK(getpwuid((uid_t)base + 99) == NULL);
    /* drawn at random: two runs do not get the same block */
    CHECK(backend__ids_pick(100, &other, &err) == 0 && other != base);
    CHECK(backend__ids_pick(BACKEND_IDS_HIGH, &base, &err) < 0);
    CHECK(strstr(err.msg, "user ids") != NULL);
}

static void
t_user(void)
{
    struct composition_group groups[] = {{.id = "users"},
                                         {.id = "admins", .root = true}};
    struct composition c = {.groups = groups, .ngroups = 2};
    struct backend b = {.instance_uid = 1 << 30, .instance_gid = 1 << 30};
    struct backend_instance in = {.index = 3, .group = "users"};
    char buf[32], want[32];
    int uid = 0;

    CHECK_EQ_STR(backend__ids_user(&b, &c, &in, &uid, buf, sizeof(buf)),
                 "1073741827:1073741824");
    CHECK_EQ_INT(uid, (1 << 30) + 3);
    in.group = "admins";
    CHECK_EQ_STR(backend__ids_user(&b, &c, &in, &uid, buf, sizeof(buf)),
                 "0:1073741824");
    CHECK_EQ_INT(uid, 0);
    /* a coordinator that cannot give ids away: its own, folders as made */
    b.instance_uid = b.instance_gid = -1;
    in.group = "users";
    snprintf(want, sizeof(want), "%d:%d", (int)geteuid(), (int)getegid());
    CHECK_EQ_STR(backend__ids_user(&b, &c, &in, &uid, buf, sizeof(buf)), want);
    CHECK_EQ_INT(uid, -1);
}

static void
t_root_needs_root(void)
{
    struct composition_group groups[] = {{.id = "admins", .root = true}};
    struct composition c = {
        .groups = groups, .ngroups = 1, .total_instances = 1};
    struct backend b = {.instance_uid = -1, .instance_gid = -1};
    struct err err = {0};

    if (geteuid() == 0) {
        CHECK_MSG(backend__ids_for_run(&b, &c, &err) == 0, "%s", err.msg);
        CHECK(b.instance_uid >= (int)BACKEND_IDS_LOW);
        CHECK_EQ_INT(b.instance_gid, b.instance_uid);
        return;
    }
    CHECK(backend__ids_for_run(&b, &c, &err) < 0);
    CHECK(strstr(err.msg, "group admins asks for root") != NULL);
    CHECK_EQ_INT(err.status, EXIT_USAGE);
}

static void
t_dirs(void)
{
    char *dir = path_join(th_tmpdir(), "run/g/0");
    char *link = path_join(th_tmpdir(), "run/g/1");
    char *target = path_join(th_tmpdir(), "elsewhere");
    struct err err = {0};
    struct stat st;

    if (geteuid() != 0)
        th_skip("giving folders away needs root");
    CHECK_MSG(backend__ids_make_dir(dir, 1234567, 7654321, &err) == 0, "%s",
              err.msg);
    CHECK(stat(dir, &st) == 0 && st.st_uid == 1234567 && st.st_gid == 7654321 &&
          (st.st_mode & 07777) == 0700);
    /* a folder that is already there and not testyard's is refused */
    CHECK(backend__ids_make_dir(dir, 1234567, 7654321, &err) < 0);
    CHECK(strstr(err.msg, "not testyard's") != NULL);
    backend__ids_give_back(dir);
    CHECK(stat(dir, &st) == 0 && st.st_uid == geteuid() &&
          (st.st_mode & 07777) == 0755);
    /* testyard's own is taken again */
    CHECK_MSG(backend__ids_make_dir(dir, 1234567, 7654321, &err) == 0, "%s",
              err.msg);
    /* a link in its place is not followed: its target keeps its owner */
    CHECK(mkdir(target, 0755) == 0 && symlink(target, link) == 0);
    CHECK(backend__ids_make_dir(link, 1234567, 7654321, &err) < 0);
    CHECK(stat(target, &st) == 0 && st.st_uid == geteuid() &&
          (st.st_mode & 07777) == 0755);
    backend__ids_give_back(link);
    CHECK(stat(target, &st) == 0 && st.st_uid == geteuid());
    free(dir);
    free(link);
    free(target);
}

static const struct th_case cases[] = {
    {"pick", t_pick}, {"user", t_user}, {"root_needs_root", t_root_needs_root},
    {"dirs", t_dirs}, {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
