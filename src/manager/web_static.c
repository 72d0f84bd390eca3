/* web_static.c - the built web UI (web/, built into $(BUILD)/web by make):
 *
 *   GET /            index.html for a browser (Accept: text/html); anyone
 *                    else keeps Backend.AI's version JSON (api_misc.c)
 *   GET /ui/<file>   the bundle's other files
 *
 * Files come from conf.web_dir (default: "web" beside the tessera binary).
 * A name is letters, digits, '.', '_', '-' and '/' between them, no dot
 * files: nothing outside the directory is reachable, and no symlink is
 * followed at the end.  <file>.gz, when there, is sent to clients that
 * accept gzip.  Answers carry an ETag (size and mtime) for revalidation,
 * and index.html a Content-Security-Policy that allows only the manager's
 * own scripts, styles and connections. */
#include "common/compat.h"

#include <ctype.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>

#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/main.h"

#define NAME_MAX_LEN 200

static const char csp[] = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                          "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

static const char *web_dir(struct manager *m)
{
        static char *dir;
        char exe[PATH_MAX];
        ssize_t n;

        if (m->conf.web_dir)
                return m->conf.web_dir;
        if (!dir) {
                n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
                exe[n > 0 ? n : 0] = '\0';
                dir = xasprintf("%s/web", n > 0 ? dirname(exe) : ".");
        }
        return dir;
}

static bool name_ok(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > NAME_MAX_LEN)
                return false;
        for (const char *p = s; *p; p++) {
                bool start = p == s || p[-1] == '/';
                if ((start && (*p == '.' || *p == '/')) || (!isalnum((unsigned char)*p) && !strchr("._-/", *p)))
                        return false;
        }
        return s[n - 1] != '/';
}

static const char *content_type(const char *name)
{
        static const char *const types[][2] = {
                { ".html", "text/html; charset=utf-8" },  { ".js", "text/javascript; charset=utf-8" },
                { ".css", "text/css; charset=utf-8" },    { ".svg", "image/svg+xml" },
                { ".png", "image/png" },                  { ".ico", "image/x-icon" },
                { ".woff2", "font/woff2" },               { ".json", "application/json" },
                { ".map", "application/json" },           { ".txt", "text/plain; charset=utf-8" },
        };
        const char *dot = strrchr(name, '.');

        for (size_t i = 0; dot && i < ARRAY_SIZE(types); i++)
                if (streq(dot, types[i][0]))
                        return types[i][1];
        return "application/octet-stream";
}

static bool accepts(struct api_ctx *c, const char *header, const char *what)
{
        const char *v = http_header(c->req, header);
        return v && strstr(v, what);
}

/* Answer with the file `name` of the web directory; false when there is none. */
static bool serve(struct api_ctx *c, const char *name)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", web_dir(c->m), name);
        _cleanup_free_ char *gz = xasprintf("%s.gz", path);
        struct stat st, gst;
        bool zipped = accepts(c, "Accept-Encoding", "gzip") && stat(gz, &gst) == 0 && S_ISREG(gst.st_mode);
        int fd = open(zipped ? gz : path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                if (fd >= 0)
                        close(fd);
                return false;
        }
        char etag[64];
        snprintf(etag, sizeof(etag), "\"%llx-%llx%s\"", (unsigned long long)st.st_size,
                 (unsigned long long)st.st_mtim.tv_sec, zipped ? "-gz" : "");
        const char *inm = http_header(c->req, "If-None-Match");
        http_add_header(c->req, "ETag", etag);
        http_add_header(c->req, "Cache-Control", "no-cache");
        http_add_header(c->req, "Vary", "Accept-Encoding");
        http_add_header(c->req, "X-Content-Type-Options", "nosniff");
        if (streq(content_type(name), "text/html; charset=utf-8")) {
                http_add_header(c->req, "Content-Security-Policy", csp);
                http_add_header(c->req, "Referrer-Policy", "same-origin");
        }
        if (inm && streq(inm, etag)) {
                close(fd);
                http_reply(c->req, 304, content_type(name), "", 0);
                return true;
        }
        if (zipped)
                http_add_header(c->req, "Content-Encoding", "gzip");
        http_reply_fd(c->req, 200, content_type(name), fd, (uint64_t)st.st_size);
        return true;
}

bool web_static_index(struct api_ctx *c)
{
        return accepts(c, "Accept", "text/html") && serve(c, "index.html");
}

void api_web_static(struct api_ctx *c)
{
        if (!name_ok(c->param[0]))
                return api_problem(c, 404, "not-found", "no such file of the web UI");
        if (!serve(c, c->param[0]))
                api_problem(c, 404, "not-found", "no such file of the web UI: %s", c->param[0]);
}
