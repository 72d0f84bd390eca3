/* sched-load.c - signs many requests at once for bench/scheduler.sh and
 * writes them as a curl config (`curl -K`: one process, one keep-alive
 * connection), where test-tool would cost a process per request.
 *
 *   sched-load agent SECRET_FILE BASE_URL  < ID<TAB>METHOD<TAB>PATH<TAB>BODY
 *       agent requests signed with the cluster secret (api_agent.c);
 *   sched-load keypair AK SK BASE_URL      < METHOD<TAB>PATH<TAB>BODY
 *       Backend.AI-signed requests of a keypair (auth.c), valid for 15
 *       minutes.
 *
 * One request per input line; each answer's HTTP status is written on a
 * line of curl's output.  Built by bench/scheduler.sh against the release
 * build's src/common objects. */
#include "common/compat.h"

#include "common/fs.h"
#include "common/sign.h"
#include "common/timeutil.h"

/* a curl config string: quoted, with \ and " escaped */
static void put_quoted(const char *key, const char *value)
{
        printf("%s = \"", key);
        for (const char *p = value; *p; p++) {
                if (*p == '"' || *p == '\\')
                        putchar('\\');
                putchar(*p);
        }
        puts("\"");
}

static void put_request(bool first, const char *base, const char *method, const char *path, const char *body)
{
        _cleanup_free_ char *url = xasprintf("%s%s", base, path);

        if (!first)
                puts("next");
        put_quoted("url", url);
        put_quoted("request", method);
        puts("output = \"/dev/null\"\nwrite-out = \"%{http_code}\\n\"\nsilent");
        if (*body)
                put_quoted("data", body);
}

static int fail(struct tess_error *err)
{
        fprintf(stderr, "sched-load: %s\n", err->msg);
        tess_error_free(err);
        return 1;
}

int main(int argc, char **argv)
{
        struct tess_error *err = NULL;
        char line[65536], sig[SIGN_HEX_MAX];
        bool agent = argc == 4 && streq(argv[1], "agent"), first = true;
        const char *base = agent ? argv[3] : argv[4];
        _cleanup_free_ char *secret = NULL;
        size_t len;

        if (!agent && !(argc == 5 && streq(argv[1], "keypair"))) {
                fputs("usage: sched-load agent SECRET_FILE BASE_URL < ID\\tMETHOD\\tPATH\\tBODY lines\n"
                      "       sched-load keypair AK SK BASE_URL < METHOD\\tPATH\\tBODY lines\n",
                      stderr);
                return 2;
        }
        const char *host = strstr(base, "://") ? strstr(base, "://") + 3 : base;
        if (agent) {
                if (fs_read_file(argv[2], 4096, &secret, &len, &err) < 0)
                        return fail(err);
                secret[strcspn(secret, "\n")] = '\0';
        }
        while (fgets(line, sizeof(line), stdin)) {
                char *f[4] = { line }, *save = NULL;
                int n = 0, want = agent ? 4 : 3;
                line[strcspn(line, "\n")] = '\0';
                for (char *t = strtok_r(line, "\t", &save); t && n < want; t = strtok_r(NULL, "\t", &save))
                        f[n++] = t;
                if (n < want - 1) /* the body may be empty */
                        continue;
                const char *body = n == want ? f[want - 1] : "";
                if (agent) {
                        int64_t ts = now_usec() / USEC_PER_SEC;
                        if (sign_agent_request(secret, f[1], f[2], ts, f[0], body, strlen(body), sig, &err) < 0)
                                return fail(err);
                        put_request(first, base, f[1], f[2], body);
                        printf("header = \"Authorization: TesseraAgent id=%s, signature=%s\"\n"
                               "header = \"X-Tessera-Agent-Time: %lld\"\n",
                               f[0], sig, (long long)ts);
                } else {
                        char date[48], ymd[9];
                        time_format_iso(now_usec(), date, sizeof(date));
                        time_parse(date, NULL, ymd);
                        if (sign_compute("sha256", argv[3], f[0], f[1], date, ymd, host, "application/json",
                                         API_VERSION_NEWEST, NULL, sig, &err) < 0)
                                return fail(err);
                        put_request(first, base, f[0], f[1], body);
                        printf("header = \"Date: %s\"\nheader = \"X-BackendAI-Version: %s\"\n"
                               "header = \"Authorization: BackendAI signMethod=HMAC-SHA256, credential=%s:%s\"\n",
                               date, API_VERSION_NEWEST, argv[2], sig);
                }
                puts("header = \"Content-Type: application/json\"");
                first = false;
        }
        return 0;
}
