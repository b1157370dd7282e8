/*
 * report.c — the report's entry points (see report/report.h): build the model
 * of a run folder (report_load.c reads it, report_stats.c analyses it,
 * report_snap.c ranks allocation sites, report_oom.c looks at what each
 * OOM-killed instance left), write summary.json and
 * report.html through temporary files, and free it all. Also the small
 * pieces every module shares: notes on what is missing, and finding or
 * adding groups and instances.
 */
#include "report/report_int.h"

#include "base/jsonpretty.h"
#include "base/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
report__note(struct report *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    strvec_vpushf(&r->notes, fmt, ap);
    va_end(ap);
}

struct report_group *
report__group_get(struct report *r, const char *id)
{
    struct report_group *g;

    for (size_t i = 0; i < r->ngroups; i++)
        if (strcmp(r->groups[i].id, id) == 0)
            return &r->groups[i];
    xgrow(&r->groups, &r->capgroups, r->ngroups + 1, sizeof(*r->groups));
    g = &r->groups[r->ngroups++];
    memset(g, 0, sizeof(*g));
    g->id = xstrdup(id);
    g->limit = g->peak = g->peak_t_ms = g->final = -1;
    return g;
}

/* The instance (group, index), added when new. Group indexes into insts
 * are filled in by report__analyse, once every instance is known. */
struct report_inst *
report__inst_add(struct report *r, const char *group, int index)
{
    struct report_inst *in;
    cleanup_free char *gdir = NULL;

    for (size_t i = 0; i < r->ninsts; i++)
        if (r->insts[i].index == index && strcmp(r->insts[i].group, group) == 0)
            return &r->insts[i];
    report__group_get(r, group);
    xgrow(&r->insts, &r->capinsts, r->ninsts + 1, sizeof(*r->insts));
    in = &r->insts[r->ninsts++];
    memset(in, 0, sizeof(*in));
    in->group = xstrdup(group);
    in->index = index;
    in->label = xasprintf("%s/%d", group, index);
    gdir = path_join(r->run_dir, group);
    in->dir = xasprintf("%s/%d", gdir, index);
    in->limit = in->peak = in->peak_t_ms = in->final = -1;
    in->oom_t_ms = in->before_oom = -1;
    in->ready_ms = -1;
    in->preoom = (struct report_preoom){0, -1, -1, -1, -1, ""};
    in->kill = (struct report_oom){NULL, -1, -1, -1, NULL, 0, 0};
    return in;
}

/* Add group g's never-connected indexes to sb as ranges; false when it
 * has none. */
static bool
group_never_connected(const struct report *r, const char *g, struct strbuf *sb)
{
    int first = -1, last = -1;
    bool any = false;

    for (size_t i = 0; i <= r->ninsts; i++) {
        const struct report_inst *in = i < r->ninsts ? &r->insts[i] : NULL;

        if (in != NULL && (!in->never_connected || strcmp(in->group, g) != 0))
            continue;
        if (in != NULL && first >= 0 && in->index == last + 1) {
            last = in->index;
            continue;
        }
        if (first >= 0) {
            strbuf_addf(sb, "%s%d", any ? ", " : " ", first);
            if (last > first)
                strbuf_addf(sb, "-%d", last);
            any = true;
        }
        if (in != NULL)
            first = last = in->index;
    }
    return any;
}

bool
report__never_connected(const struct report *r, struct strbuf *sb,
                        bool *blackbox)
{
    bool any = false;

    *blackbox = true;
    for (size_t g = 0; g < r->ngroups; g++) {
        struct strbuf part;

        strbuf_init(&part);
        if (group_never_connected(r, r->groups[g].id, &part)) {
            strbuf_addf(sb, "%s%s%s", any ? ", " : "", r->groups[g].id,
                        part.buf);
            *blackbox = *blackbox && r->groups[g].blackbox;
            any = true;
        }
        strbuf_release(&part);
    }
    return any;
}

char *
report__never_connected_line(const struct report *r)
{
    struct strbuf sb;
    bool blackbox;

    strbuf_init(&sb);
    strbuf_adds(&sb, "never connected to the sync service: ");
    if (!report__never_connected(r, &sb, &blackbox)) {
        strbuf_release(&sb);
        return NULL;
    }
    strbuf_adds(&sb, blackbox ? " (they ran their own program: expected for "
                                "run.command/run.image groups)"
                              : " (a plan's instance connects as the SDK "
                                "starts: these ended or hung before)");
    return strbuf_detach(&sb);
}

const char *
report_run_dir(const struct report *r)
{
    return r->run_dir;
}

struct report *
report_build(const char *run_dir, const struct report_opts *o, struct err *err)
{
    struct report *r = xcalloc(1, sizeof(*r));

    r->run_dir = xstrdup(run_dir);
    r->run_fd = -1;
    r->top = o != NULL && o->top > 0 ? o->top : REPORT_TOP_DEFAULT;
    r->duration_s = -1;
    if (report__load(r, err) < 0)
        goto fail;
    report__analyse(r);
    report__fits(r);
    for (size_t g = 0; g < r->ngroups; g++)
        if (report__sites(r, &r->groups[g], err) < 0)
            goto fail;
    if (report__ooms(r, err) < 0)
        goto fail;
    report__verdicts_name_sites(r);
    return r;
fail:
    report_destroy(&r);
    return NULL;
}

static int
write_text(const struct report *r, const char *name, char *text,
           struct err *err)
{
    cleanup_free char *path = path_join(r->run_dir, name);
    int rc = file_write_atomic(path, text, strlen(text), err);

    free(text);
    return rc;
}

int
report_write(const struct report *r, const struct report_opts *o,
             struct err *err)
{
    cJSON *j = report__json(r);
    char *text = jsonpretty_print(j);

    cJSON_Delete(j);
    if (write_text(r, "summary.json", text, err) < 0)
        return -1;
    if (o != NULL && o->no_html)
        return 0;
    return write_text(r, "report.html", report__html(r), err);
}

int
report_generate(const char *run_dir, const struct report_opts *o,
                struct err *err)
{
    struct report *r = report_build(run_dir, o, err);
    int rc;

    if (r == NULL)
        return -1;
    rc = report_write(r, o, err);
    if (rc == 0 && o != NULL && o->table != NULL)
        report_print(r, o->table);
    report_destroy(&r);
    return rc;
}

static void
inst_release(struct report_inst *in)
{
    free(in->group);
    free(in->label);
    free(in->dir);
    free(in->outcome);
    free(in->how);
    free(in->error);
    free(in->samples);
    for (size_t i = 0; i < in->nsnaps; i++) {
        free(in->snaps[i].label);
        free(in->snaps[i].pb_path);
        free(in->snaps[i].json_path);
    }
    free(in->snaps);
    free(in->readings);
    free(in->rounds);
    report__sites_free(&in->kill.sites, &in->kill.nsites);
    report__gsites_release(&in->gsites);
    report__work_release(&in->work);
    report__restarts_release(in);
}

static void
group_release(struct report_group *g)
{
    free(g->id);
    free(g->inst);
    free(g->rounds);
    for (size_t i = 0; i < g->nsites; i++)
        free(g->sites[i].function);
    free(g->sites);
    free(g->sites_label);
    for (size_t i = 0; i < g->npsites; i++)
        free(g->psites[i].function);
    free(g->psites);
    free(g->psites_label);
    report__gsites_release(&g->gsites);
    report__syms_release(&g->syms);
    report__wfits_release(g);
}

void
report_destroy(struct report **rp)
{
    struct report *r = rp ? *rp : NULL;

    if (r == NULL)
        return;
    for (size_t i = 0; i < r->ninsts; i++)
        inst_release(&r->insts[i]);
    for (size_t i = 0; i < r->ngroups; i++)
        group_release(&r->groups[i]);
    for (size_t i = 0; i < r->nbars; i++) {
        free(r->bars[i].state);
        free(r->bars[i].result);
        free(r->bars[i].error);
    }
    free(r->insts);
    free(r->groups);
    free(r->bars);
    free(r->spans);
    report__stages_release(r);
    strvec_release(&r->notes);
    if (r->run_fd >= 0)
        close(r->run_fd);
    free(r->run_dir);
    free(r->run_id);
    free(r->plan);
    free(r->name);
    free(r->case_name);
    free(r->runner);
    free(r->outcome);
    free(r->started);
    free(r);
    *rp = NULL;
}
