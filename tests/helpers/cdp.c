/*
 * cdp.c — drives headless Chromium through a script of steps, for the
 * tests of the pages testyard serves (the dashboard): open a page, set a
 * header or a cookie, evaluate JavaScript, expect or wait for something
 * to be true, click, submit a form, print the DOM, take a screenshot.
 *
 *     cdp [OPTIONS] [-f SCRIPT] [STEP]...
 *
 * This file reads the script and runs the steps; cdp_proto.c starts
 * Chromium with --remote-debugging-pipe and speaks the DevTools protocol
 * to it. One page target is created and attached in flat mode (every
 * command to it carries its sessionId). JavaScript dialogs are answered
 * as they open (accepted, or dismissed with --dismiss) so that a
 * confirm() never hangs a step.
 *
 * stdout carries what eval and dom print, nothing else; the step log
 * goes to stderr, one line a step, in a shape a suite's TAP count never
 * takes for its own ("cdp: ok 2 click #go"). Exit 0 when every step
 * passed, 1 at the first that failed (the rest are not run), 2 on a
 * usage error or when Chromium cannot be started. Every wait is bounded
 * by the step's timeout and the overall one; Chromium runs in a process
 * group of its own that is killed at the end, also after a failure or a
 * signal, and its profile folder is removed. A program of its own, not
 * one of the helpers linked into the tests (the Makefile says so).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cdp.h"
#include "ty_buf.h"
#include "ty_io.h"

struct step {
    const struct kind *kind;
    char *line;      /* as written */
    char *a, *b, *c; /* its arguments, within `words` */
    char *words;
    double secs; /* wait's own timeout; 0: the step timeout */
};

struct kind {
    const char *name;
    int words; /* leading single words; then `rest` says if more follows */
    bool rest;
    int (*run)(struct cdp *, const struct step *, int64_t deadline, char *why);
};

static double step_timeout = 20;
static double total_timeout = 120;

static void
on_signal(int sig)
{
    cdp_signal = sig;
}

/* ---- JavaScript -------------------------------------------------------- */

/* Evaluate expr in the page: the RemoteObject, the caller's, or NULL
 * with why filled (the exception thrown, or the protocol's error). */
static cJSON *
evaluate(struct cdp *c, const char *expr, int64_t deadline, char *why)
{
    cJSON *p = cJSON_CreateObject(), *r, *v;
    const cJSON *ex;

    cJSON_AddStringToObject(p, "expression", expr);
    cJSON_AddBoolToObject(p, "returnByValue", true);
    cJSON_AddBoolToObject(p, "awaitPromise", true);
    r = cdp_call(c, "Runtime.evaluate", p, true, deadline, why);
    if (!r)
        return NULL;
    ex = cJSON_GetObjectItemCaseSensitive(r, "exceptionDetails");
    if (ex) {
        cdp_fail(why, "%s", cdp_exception_text(ex));
        cJSON_Delete(r);
        return NULL;
    }
    v = cJSON_DetachItemFromObjectCaseSensitive(r, "result");
    cJSON_Delete(r);
    return v ? v : cJSON_CreateObject();
}

/* A RemoteObject as JSON (its value), or its description or type for
 * what has no JSON form (undefined, a function). Caller frees. */
static char *
show(const cJSON *ro)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ro, "value");
    const char *d = cdp_str_at(ro, "description");

    if (v)
        return cJSON_PrintUnformatted(v);
    if (!d)
        d = cdp_str_at(ro, "type") ? cdp_str_at(ro, "type") : "?";
    return strdup(d);
}

static bool
is_true(const cJSON *ro)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ro, "value"));
}

/* "(function(s){BODY})(ARG)", with ARG a JSON string literal. */
static char *
with_arg(const char *body, const char *arg)
{
    cJSON *s = cJSON_CreateString(arg);
    char *lit = cJSON_PrintUnformatted(s);
    struct ty__buf b = {0};

    ty__buf_addf(&b, "(function (s) { %s })(%s)", body, lit ? lit : "null");
    cJSON_Delete(s);
    free(lit);
    return b.oom ? (ty__buf_release(&b), NULL) : b.buf;
}

/* Run body on e, the element the CSS selector s finds: it returns true,
 * or a string saying what was wrong. */
static int
on_element(struct cdp *c, const char *body, const char *css, int64_t deadline,
           char *why)
{
    char full[1024];
    char *js;

    snprintf(full, sizeof(full),
             "const e = document.querySelector(s);"
             " if (!e) return 'no element matches ' + s; %s",
             body);
    js = with_arg(full, css);
    cJSON *v = js ? evaluate(c, js, deadline, why) : NULL;
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(v, "value");
    int rc = v && is_true(v) ? 0 : -1;

    if (v && rc < 0)
        cdp_fail(why, "%s", cJSON_IsString(val) ? val->valuestring : "failed");
    cJSON_Delete(v);
    free(js);
    return rc;
}

/* ---- steps ------------------------------------------------------------- */

static bool
loaded(const struct cdp *c, const char *loader)
{
    for (int i = 0; i < CDP_LOADS && i < c->nloads; i++)
        if (strcmp(c->loads[i], loader) == 0)
            return true;
    return false;
}

static int
step_open(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    cJSON *p = cJSON_CreateObject(), *r;
    const char *err, *loader;
    char lid[64] = "";
    int rc = 0;

    cJSON_AddStringToObject(p, "url", s->a);
    c->status = 0;
    r = cdp_call(c, "Page.navigate", p, true, deadline, why);
    if (!r)
        return -1;
    err = cdp_str_at(r, "errorText");
    loader = cdp_str_at(r, "loaderId");
    if (err && *err)
        rc = -1, cdp_fail(why, "%s", err);
    else if (loader)
        snprintf(lid, sizeof(lid), "%s", loader);
    cJSON_Delete(r);
    /* no loaderId: a navigation within the document, nothing to load */
    while (rc == 0 && *lid && !loaded(c, lid)) {
        if (!cdp_pump(c, 0, deadline, why)) {
            char tail[CDP_WHY];

            snprintf(tail, sizeof(tail), "%s", why);
            cdp_fail(why, "waiting for the load event: %s", tail);
            rc = -1;
        }
    }
    if (rc == 0 && c->status)
        cdp_fail(why, "HTTP %d", c->status);
    return rc;
}

static int
step_header(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    cJSON *p = cJSON_CreateObject();

    cJSON_DeleteItemFromObjectCaseSensitive(c->headers, s->a);
    cJSON_AddStringToObject(c->headers, s->a, s->b);
    cJSON_AddItemToObject(p, "headers", cJSON_Duplicate(c->headers, true));
    return cdp_run_cmd(c, "Network.setExtraHTTPHeaders", p, deadline, why);
}

static int
step_cookie(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    cJSON *p = cJSON_CreateObject(), *r;
    const cJSON *ok;
    int rc;

    cJSON_AddStringToObject(p, "name", s->a);
    cJSON_AddStringToObject(p, "value", s->b);
    cJSON_AddStringToObject(p, "url", s->c);
    r = cdp_call(c, "Network.setCookie", p, true, deadline, why);
    ok = cJSON_GetObjectItemCaseSensitive(r, "success");
    rc = r && !cJSON_IsFalse(ok) ? 0 : -1;
    if (r && rc < 0)
        cdp_fail(why, "Chromium refused the cookie");
    cJSON_Delete(r);
    return rc;
}

static int
step_eval(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    cJSON *v = evaluate(c, s->a, deadline, why);
    char *out = v ? show(v) : NULL;

    if (out)
        printf("%s\n", out);
    fflush(stdout);
    free(out);
    cJSON_Delete(v);
    return v ? 0 : -1;
}

static int
step_expect(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    cJSON *v = evaluate(c, s->a, deadline, why);
    char *got;
    int rc = v && is_true(v) ? 0 : -1;

    if (v && rc < 0) {
        got = show(v);
        cdp_fail(why, "got %s", got ? got : "?");
        free(got);
    }
    cJSON_Delete(v);
    return rc;
}

/* Handle the events that come until `until`. */
static void
nap_events(struct cdp *c, int64_t until)
{
    char why[CDP_WHY];

    while (cdp_now_ms() < until && cdp_pump(c, 0, until, why))
        ;
}

/* Poll every 100 ms; an error (the page between two documents) counts
 * as not yet true, and the last value or error is the reason. */
static int
step_wait(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    char last[CDP_WHY] = "never evaluated";

    while (cdp_now_ms() < deadline && !cdp_signal) {
        cJSON *v = evaluate(c, s->a, deadline, last);
        bool yes = v && is_true(v);
        char *got = v && !yes ? show(v) : NULL;

        if (got)
            snprintf(last, sizeof(last), "%s", got);
        free(got);
        cJSON_Delete(v);
        if (yes)
            return 0;
        if (c->gone)
            break;
        nap_events(c, cdp_now_ms() + 100 < deadline ? cdp_now_ms() + 100
                                                    : deadline);
    }
    cdp_fail(why, "%s: still %s", cdp_signal ? "interrupted" : "timed out",
             last);
    return -1;
}

static int
step_click(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    return on_element(c, "e.click(); return true;", s->a, deadline, why);
}

static int
step_submit(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    return on_element(c,
                      "if (e instanceof HTMLFormElement) e.requestSubmit();"
                      " else if (e.form) e.form.requestSubmit(e);"
                      " else return s + ' is neither a form nor in one';"
                      " return true;",
                      s->a, deadline, why);
}

static int
step_dom(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    cJSON *v = evaluate(c, "document.documentElement.outerHTML", deadline, why);
    const char *html = cdp_str_at(v, "value");

    (void)s;
    if (v && !html)
        cdp_fail(why, "the page has no document");
    else if (html)
        printf("%s\n", html);
    fflush(stdout);
    cJSON_Delete(v);
    return html ? 0 : -1;
}

static int
unbase64(const char *in, struct ty__buf *out)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;

    for (; *in && *in != '='; in++) {
        const char *p = strchr(abc, *in);

        if (!p || !*in)
            return -1;
        acc = acc << 6 | (uint32_t)(p - abc);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            ty__buf_addc(out, (char)(acc >> bits & 0xff));
        }
    }
    return out->oom ? -1 : 0;
}

static int
step_screenshot(struct cdp *c, const struct step *s, int64_t deadline,
                char *why)
{
    cJSON *p = cJSON_CreateObject(), *r;
    struct ty__buf png = {0};
    const char *data;
    int rc = -1;

    cJSON_AddStringToObject(p, "format", "png");
    r = cdp_call(c, "Page.captureScreenshot", p, true, deadline, why);
    data = cdp_str_at(r, "data");
    if (r && (!data || unbase64(data, &png) < 0 || png.len == 0))
        cdp_fail(why, "Chromium sent no PNG");
    else if (r && (rc = ty__write_atomic(s->a, png.buf, png.len, 0644)) < 0)
        cdp_fail(why, "%s: %s", s->a, strerror(-rc));
    ty__buf_release(&png);
    cJSON_Delete(r);
    return rc;
}

static int
step_dialog(struct cdp *c, const struct step *s, int64_t deadline, char *why)
{
    (void)deadline;
    if (strcmp(s->a, "accept") != 0 && strcmp(s->a, "dismiss") != 0)
        return cdp_fail(why, "expected accept or dismiss"), -1;
    c->dismiss = strcmp(s->a, "dismiss") == 0;
    return 0;
}

static const struct kind kinds[] = {
    {"open", 0, true, step_open},      {"header", 1, true, step_header},
    {"cookie", 3, false, step_cookie}, {"eval", 0, true, step_eval},
    {"expect", 0, true, step_expect},  {"wait", 0, true, step_wait},
    {"click", 0, true, step_click},    {"submit", 0, true, step_submit},
    {"dom", 0, false, step_dom},       {"screenshot", 0, true, step_screenshot},
    {"dialog", 1, false, step_dialog},
};

/* ---- the script -------------------------------------------------------- */

static char *
next_word(char **p)
{
    char *w = *p + strspn(*p, " \t");
    char *end = w + strcspn(w, " \t");

    *p = *end ? end + 1 : end;
    if (*end)
        *end = '\0';
    return *w ? w : NULL;
}

/* wait's last word is its timeout when it reads "10s": a number
 * followed by a letter is never the end of a JavaScript expression. */
static void
wait_secs(struct step *s)
{
    char *sp = strrchr(s->a, ' '), *end;
    double v;

    if (!sp)
        return;
    v = strtod(sp + 1, &end);
    if (end != sp + 1 && strcmp(end, "s") == 0 && v > 0) {
        s->secs = v;
        *sp = '\0';
    }
}

static int
parse_step(const char *line, struct step *s, char *why)
{
    char *p, *name;
    const struct kind *k = NULL;
    char **args[3] = {&s->a, &s->b, &s->c};
    int i = 0;

    memset(s, 0, sizeof(*s));
    s->line = strdup(line);
    p = s->words = strdup(line);
    name = next_word(&p);
    for (size_t j = 0; name && j < sizeof(kinds) / sizeof(kinds[0]); j++)
        if (strcmp(kinds[j].name, name) == 0)
            k = &kinds[j];
    if (!k)
        return cdp_fail(why, "unknown step '%s'", name ? name : ""), -1;
    s->kind = k;
    for (; i < k->words; i++)
        if (!(*args[i] = next_word(&p)))
            return cdp_fail(why, "%s: too few arguments", name), -1;
    p += strspn(p, " \t");
    if (k->rest && !*p)
        return cdp_fail(why, "%s: too few arguments", name), -1;
    if (!k->rest && *p)
        return cdp_fail(why, "%s: unexpected '%s'", name, p), -1;
    if (k->rest)
        *args[i] = p;
    if (k->run == step_wait)
        wait_secs(s);
    return 0;
}

struct script {
    struct step *steps;
    int n;
};

static int
add_step(struct script *sc, const char *line, char *why)
{
    struct step *s;

    sc->steps = realloc(sc->steps, sizeof(*s) * (size_t)(sc->n + 1));
    if (!sc->steps)
        abort();
    s = &sc->steps[sc->n++];
    return parse_step(line, s, why);
}

/* Lines of a file; blank ones and # comments are skipped. */
static int
add_file(struct script *sc, const char *path, char *why)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    char line[65536];
    int no = 0, rc = 0;

    if (!f)
        return cdp_fail(why, "%s: %s", path, strerror(errno)), -1;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *t = line + strspn(line, " \t");

        no++;
        t[strcspn(t, "\r\n")] = '\0';
        if (*t && *t != '#' && add_step(sc, t, why) < 0) {
            char tail[CDP_WHY];

            snprintf(tail, sizeof(tail), "%s", why);
            cdp_fail(why, "%s:%d: %s", path, no, tail);
            rc = -1;
        }
    }
    if (f != stdin)
        fclose(f);
    return rc;
}

static void
script_free(struct script *sc)
{
    for (int i = 0; i < sc->n; i++) {
        free(sc->steps[i].line);
        free(sc->steps[i].words);
    }
    free(sc->steps);
}

/* ---- main -------------------------------------------------------------- */

static void
usage(FILE *to)
{
    fprintf(to,
            "usage: cdp [--timeout S] [--step-timeout S] [--dismiss]\n"
            "           [--window-size W,H] [-v] [-f SCRIPT] [STEP]...\n"
            "steps: open URL | header NAME VALUE | cookie NAME VALUE URL |\n"
            "       eval JS | expect JS | wait JS [Ns] | click CSS |\n"
            "       submit CSS | dom | screenshot FILE | dialog "
            "accept|dismiss\n");
}

static int
parse_args(int argc, char **argv, struct script *sc, bool *dismiss, char *why)
{
    static const struct option opts[] = {
        {"timeout", required_argument, NULL, 'T'},
        {"step-timeout", required_argument, NULL, 't'},
        {"dismiss", no_argument, NULL, 'd'},
        {"window-size", required_argument, NULL, 'w'},
        {"file", required_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int o;

    while ((o = getopt_long(argc, argv, "T:t:dw:f:vh", opts, NULL)) != -1) {
        if (o == 'h')
            return usage(stdout), 1;
        if (o == 'f' && add_file(sc, optarg, why) < 0)
            return -1;
        if (o == 'T' && (total_timeout = atof(optarg)) <= 0)
            return cdp_fail(why, "--timeout: expected seconds"), -1;
        if (o == 't' && (step_timeout = atof(optarg)) <= 0)
            return cdp_fail(why, "--step-timeout: expected seconds"), -1;
        if (o == 'd')
            *dismiss = true;
        if (o == 'v')
            cdp_verbose = true;
        if (o == 'w')
            cdp_window_size = optarg;
        if (o == '?')
            return cdp_fail(why, "unknown option"), -1;
    }
    for (; optind < argc; optind++)
        if (add_step(sc, argv[optind], why) < 0)
            return -1;
    if (sc->n == 0)
        return cdp_fail(why, "no steps"), -1;
    return 0;
}

static int
run_steps(struct cdp *c, const struct script *sc, int64_t end)
{
    for (int i = 0; i < sc->n; i++) {
        const struct step *s = &sc->steps[i];
        int64_t t0 = cdp_now_ms(),
                deadline = t0 + (int64_t)(step_timeout * 1000);
        char why[CDP_WHY] = "";
        int rc;

        if (s->secs > 0)
            deadline = t0 + (int64_t)(s->secs * 1000);
        rc = s->kind->run(c, s, deadline < end ? deadline : end, why);
        if (rc < 0) {
            fprintf(stderr, "cdp: FAIL %d %s: %s\n", i + 1, s->line, why);
            if (i + 1 < sc->n)
                fprintf(stderr, "cdp: %d steps not run\n", sc->n - i - 1);
            return 1;
        }
        fprintf(stderr, "cdp: ok %d %s (%s%s%.2f s)\n", i + 1, s->line, why,
                *why ? ", " : "", (double)(cdp_now_ms() - t0) / 1000);
    }
    return 0;
}

static void
signals_init(void)
{
    struct sigaction sa;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&cdp_run_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        sigaction(sigs[i], &sa, NULL);
        sigaddset(&cdp_run_mask, sigs[i]);
    }
    signal(SIGPIPE, SIG_IGN);
    sigprocmask(SIG_BLOCK, &cdp_run_mask, NULL);
}

int
main(int argc, char **argv)
{
    struct cdp c = {.to_fd = -1, .from_fd = -1};
    struct script sc = {0};
    char why[CDP_WHY] = "";
    int64_t end, launch;
    int rc;

    signals_init();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    rc = parse_args(argc, argv, &sc, &c.dismiss, why);
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "cdp: %s\n", why), usage(stderr);
        script_free(&sc);
        return rc < 0 ? 2 : 0;
    }
    end = cdp_now_ms() + (int64_t)(total_timeout * 1000);
    /* a cold start on a busy machine takes longer than a step */
    launch =
        cdp_now_ms() + (int64_t)(step_timeout > 30 ? step_timeout : 30) * 1000;
    c.headers = cJSON_CreateObject();
    if (cdp_start(&c, why) < 0 ||
        cdp_attach(&c, launch < end ? launch : end, why) < 0) {
        fprintf(stderr, "cdp: cannot start Chromium: %s\n", why);
        if (c.tmp[0])
            cdp_log_tail(&c);
        rc = 2;
    } else {
        rc = run_steps(&c, &sc, end);
    }
    cdp_stop(&c);
    cJSON_Delete(c.headers);
    ty__buf_release(&c.in);
    script_free(&sc);
    if (cdp_signal) {
        signal(cdp_signal, SIG_DFL);
        sigprocmask(SIG_UNBLOCK, &cdp_run_mask, NULL);
        raise(cdp_signal);
    }
    return rc;
}
