/*
 * fuzz_report.h — the body shared by the report's reader harnesses
 * (fuzz_report_csv.c, fuzz_report_bars.c, fuzz_report_sidecar.c,
 * fuzz_report_rounds.c, fuzz_pprof.c): a report of the
 * scratch folder with instances g/0 (and g/1), whose file the input
 * becomes; once read, the
 * report is analysed and rendered in memory (summary.json, report.html)
 * as `testyard report` would, so values that parse but make no sense are
 * carried all the way through.
 */
#ifndef TY_FUZZ_REPORT_H
#define TY_FUZZ_REPORT_H

#include "fuzz.h"
#include "report/report_int.h"

#include <stdlib.h>
#include <string.h>

static inline struct report *
fuzz_report_new(void)
{
    struct report *r = xcalloc(1, sizeof(*r));

    r->run_dir = xstrdup(fuzz_dir());
    r->run_fd = -1; /* no folder opened: files are read by path */
    r->top = REPORT_TOP_DEFAULT;
    r->duration_s = -1;
    return r;
}

/* As report_build and report_write go on after loading: 0, or -1 with
 * err when a group's top sites cannot be read. */
static inline int
fuzz_report_render(struct report *r, struct err *err)
{
    cJSON *j;
    char *s;

    report__snaps_clock(r);
    report__analyse(r);
    for (size_t g = 0; g < r->ngroups; g++)
        if (report__sites(r, &r->groups[g], err) < 0)
            return -1;
    if (report__ooms(r, err) < 0)
        return -1;
    report__verdicts_name_sites(r);
    j = report__json(r);
    s = j ? cJSON_PrintUnformatted(j) : NULL;
    if (s == NULL)
        fuzz_fail("report__json failed");
    free(s);
    cJSON_Delete(j);
    free(report__html(r));
    return 0;
}

/* A refusal is one line naming the file. */
static inline void
fuzz_report_refusal(const struct err *err, const char *file)
{
    if (strstr(err->msg, file) == NULL || strchr(err->msg, '\n') != NULL)
        fuzz_fail("a refusal that is not one line naming %s: \"%s\"", file,
                  err->msg);
}

#endif
