/*
 * dash_page.c — what every page of the dashboard shares: its head (the
 * style, an optional reload, the navigation), its foot, an error page,
 * and the small pieces the pages write (a link's query value, a time,
 * the form that cancels a task). The pages carry no script; a reload
 * while tasks are active is a meta refresh.
 */
#include "daemon/daemon_int.h"

#include "history/history.h"

#include "base/strbuf.h"

#include "ty_time.h"

#include <stdio.h>
#include <string.h>

static const char css[] =
    ":root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7f9}"
    "*{box-sizing:border-box}"
    "body{margin:0;font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'Helvetica Neue',Arial,sans-serif;color:var(--fg);background:var(--bg)}"
    "main{max-width:1180px;margin:0 auto;padding:18px 28px 40px}"
    "nav{display:flex;gap:18px;align-items:baseline;margin-bottom:6px}"
    "nav b{font-size:18px}nav a{color:#2563eb;text-decoration:none}"
    "nav .data{color:var(--muted);margin-left:auto;font-size:12px}"
    "h1{font-size:20px;margin:8px 0 4px}"
    "section{background:#fff;border:1px solid var(--line);border-radius:10px;"
    "padding:14px 18px;margin:14px 0}"
    "h2{font-size:15px;margin:0 0 8px}"
    "p.note{color:var(--muted);font-size:13px;margin:4px 0}"
    "table{border-collapse:collapse;width:100%;font-size:13px}"
    "th,td{text-align:left;padding:5px 8px;border-bottom:1px solid "
    "var(--line);vertical-align:top}th{color:var(--muted);font-weight:600}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "a{color:#2563eb}"
    ".badge{display:inline-block;padding:1px 9px;border-radius:999px;"
    "font-size:12px;font-weight:600;color:#fff}"
    ".st-queued{background:#6b7280}.st-running{background:#2563eb}"
    ".st-done{background:#16a34a}.st-bad{background:#dc2626}"
    ".st-canceled,.st-interrupted,.st-refused{background:#d97706}"
    ".meter{height:8px;background:#eef2f7;border-radius:4px;overflow:hidden;"
    "margin:4px 0 10px;max-width:420px}.meter span{display:block;"
    "height:100%;background:#2563eb}"
    "form.inline{display:inline;margin:0}"
    "button{font:inherit;font-size:12px;padding:2px 10px;border-radius:6px;"
    "border:1px solid #dc2626;background:#fff;color:#dc2626;cursor:pointer}"
    "pre.log{background:#0f172a;color:#e2e8f0;padding:10px 12px;"
    "border-radius:8px;overflow:auto;max-height:520px;font-size:12px}"
    "dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;"
    "margin:0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0}"
    "select{font:inherit}";

void
daemon__dash_head(struct strbuf *sb, const struct daemon *d, const char *title,
                  int refresh_s)
{
    strbuf_adds(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                    "content=\"width=device-width, initial-scale=1\">\n");
    if (refresh_s > 0)
        strbuf_addf(sb, "<meta http-equiv=\"refresh\" content=\"%d\">\n",
                    refresh_s);
    strbuf_adds(sb, "<title>");
    strbuf_add_html(sb, title);
    strbuf_addf(sb,
                " - testyard</title>\n<style>%s%s</style>\n</head>\n"
                "<body>\n<main>\n<nav><b>testyard</b>"
                "<a href=\"/\">Queue</a><a href=\"/history\">History</a>",
                css, history_svg_css);
    if (d != NULL) {
        strbuf_adds(sb, "<span class=\"data\">");
        strbuf_add_html(sb, d->data);
        strbuf_adds(sb, "</span>");
    }
    strbuf_adds(sb, "</nav>\n");
}

void
daemon__dash_foot(struct strbuf *sb)
{
    strbuf_adds(sb, "</main>\n</body>\n</html>\n");
}

void
daemon__dash_error(struct strbuf *sb, const struct daemon *d, unsigned status,
                   const char *msg)
{
    char title[32];

    snprintf(title, sizeof(title), "%u", status);
    daemon__dash_head(sb, d, title, 0);
    strbuf_addf(sb, "<section id=\"error\"><h1>%u</h1><p>", status);
    strbuf_add_html(sb, msg);
    strbuf_adds(sb, "</p></section>\n");
    daemon__dash_foot(sb);
}

void
daemon__dash_urlarg(struct strbuf *sb, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~') {
            strbuf_addc(sb, (char)c);
        } else {
            strbuf_addc(sb, '%');
            strbuf_addc(sb, hex[c >> 4]);
            strbuf_addc(sb, hex[c & 15]);
        }
    }
}

void
daemon__dash_time(int64_t wall_ns, char *buf, size_t size)
{
    if (wall_ns <= 0) {
        snprintf(buf, size, "-");
        return;
    }
    ty__format_rfc3339(wall_ns, buf, size);
    if (strlen(buf) > 19 && buf[10] == 'T') {
        buf[10] = ' ';
        buf[19] = '\0';
    }
}

void
daemon__dash_cancel_form(const struct daemon *d, struct strbuf *sb, int64_t id,
                         bool to_queue)
{
    strbuf_addf(sb,
                "<form class=\"inline cancel\" method=\"post\" "
                "action=\"/tasks/%lld/cancel\"><input type=\"hidden\" "
                "name=\"csrf\" value=\"%s\"><input type=\"hidden\" "
                "name=\"back\" value=\"%s\"><button type=\"submit\" "
                "id=\"cancel-%lld\">Cancel</button></form>",
                (long long)id, d->csrf, to_queue ? "queue" : "task",
                (long long)id);
}
