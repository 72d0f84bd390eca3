/* test-tool.c - exposes internal encoders to shell tests and benchmarks
 * (after git's t/helper/test-tool).
 *
 *   test-tool sign METHOD PATH HOST ACCESS_KEY SECRET_KEY [CONTENT_TYPE [BODY]]
 *       prints the headers of a Backend.AI-signed request, one per line
 *       (Date, X-BackendAI-Version, Content-Type, Authorization); valid for
 *       15 minutes, and for any body (the body is not signed).  The version
 *       is API_VERSION_NEWEST, or $TESSERA_SIGN_VERSION (as a client of
 *       that version signs).
 *   test-tool slot NAME VALUE
 *       parses a slot value and prints its canonical form.
 *   test-tool agent-sign SECRET_FILE AGENT_ID METHOD PATH BODY
 *       prints the headers of an agent request signed with the cluster
 *       secret (Authorization, X-Tessera-Agent-Time), one per line.
 *   test-tool registry-pull [--user U --password P] [--insecure HOST:PORT]...
 *                           [--default-registry R] [--arch A] REF STOREDIR
 *       pulls REF with the registry client into the image store at STOREDIR
 *       (image.h); prints "fetched DIGEST SIZE" per blob downloaded, then
 *       "pulled REF MANIFEST_DIGEST".
 *   test-tool push-stream [--cancel] [--user U --password P] REPO_REF SRC OUT CHUNK
 *       uploads a blob to REPO_REF's repository while writing it: copies SRC
 *       to the new file OUT in pieces of 100 KiB, 2 ms apart, telling an
 *       image_push_stream (CHUNK bytes per PATCH) after each; then finishes
 *       it with SRC's digest (or, with --cancel, gives up halfway) and
 *       prints "streamed DIGEST SIZE" (or "cancelled"). */
#include "common/compat.h"

#include <curl/curl.h>
#include <fcntl.h>

#include "common/crypto.h"
#include "common/fs.h"
#include "common/sign.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "image/image.h"
#include "registry/image_push.h"
#include "registry/registry.h"

/* sign METHOD PATH HOST AK SK [CONTENT_TYPE [BODY]]: the headers of a
 * signed request; with BODY, bound to it (SIGN_BODY_HASH_HEADER) */
static int cmd_sign(int argc, char **argv)
{
        char date[48], ymd[9], sig[SIGN_HEX_MAX], mime[64], body_hash[SIGN_HEX_MAX];
        struct tess_error *err = NULL;

        if (argc < 6)
                return 2;
        const char *ctype = argc > 6 ? argv[6] : "application/json";
        const char *body = argc > 7 ? argv[7] : NULL;
        const char *version = getenv("TESSERA_SIGN_VERSION") ?: API_VERSION_NEWEST;
        time_format_iso(now_usec(), date, sizeof(date));
        time_parse(date, NULL, ymd);
        sign_mimetype(ctype, mime, sizeof(mime));
        if ((body && sign_body_hash("sha256", body, strlen(body), body_hash, &err) < 0) ||
            sign_compute("sha256", argv[5], argv[1], argv[2], date, ymd, argv[3], mime, version,
                         body ? body_hash : NULL, sig, &err) < 0) {
                fprintf(stderr, "test-tool: %s\n", err->msg);
                tess_error_free(err);
                return 1;
        }
        printf("Date: %s\nX-BackendAI-Version: %s\nContent-Type: %s\n"
               "Authorization: BackendAI signMethod=HMAC-SHA256, credential=%s:%s\n",
               date, version, ctype, argv[4], sig);
        if (body)
                printf("%s: %s\n", SIGN_BODY_HASH_HEADER, body_hash);
        return 0;
}

static int cmd_slot(int argc, char **argv)
{
        struct tess_error *err = NULL;
        char out[64];
        int64_t v;

        if (argc != 3)
                return 2;
        if (slot_parse_string(argv[1], argv[2], &v, &err) < 0) {
                printf("error: %s\n", err->msg);
                tess_error_free(err);
                return 1;
        }
        printf("%s\n", slot_format(argv[1], v, out, sizeof(out)));
        return 0;
}

static int cmd_agent_sign(int argc, char **argv)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *secret = NULL;
        char sig[SIGN_HEX_MAX];
        size_t len;
        int64_t ts = now_usec() / USEC_PER_SEC;

        if (argc != 6)
                return 2;
        if (fs_read_file(argv[1], 4096, &secret, &len, &err) < 0)
                goto fail;
        secret[strcspn(secret, "\n")] = '\0';
        if (sign_agent_request(secret, argv[3], argv[4], ts, argv[2], argv[5], strlen(argv[5]), sig, &err) < 0)
                goto fail;
        printf("Authorization: TesseraAgent id=%s, signature=%s\nX-Tessera-Agent-Time: %lld\n", argv[2], sig,
               (long long)ts);
        return 0;
fail:
        fprintf(stderr, "test-tool: %s\n", err->msg);
        tess_error_free(err);
        return 1;
}

static void on_progress(void *data UNUSED, const char *digest, int64_t done, int64_t total)
{
        if (done == total)
                printf("fetched %s %lld\n", digest, (long long)total);
}

static int cmd_registry_pull(int argc, char **argv)
{
        const char *insecure[9] = { 0 };
        struct registry_opts o = { .backoff_ms = 50, .progress = on_progress };
        struct image_store *st = NULL;
        struct tess_error *err = NULL;
        _cleanup_free_ char *digest = NULL;
        int i, n_insecure = 0, r;

        for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
                if (streq(argv[i], "--user"))
                        o.username = argv[i + 1];
                else if (streq(argv[i], "--password"))
                        o.password = argv[i + 1];
                else if (streq(argv[i], "--insecure") && n_insecure < 8)
                        insecure[n_insecure++] = argv[i + 1];
                else if (streq(argv[i], "--default-registry"))
                        o.default_registry = argv[i + 1];
                else if (streq(argv[i], "--arch"))
                        o.arch = argv[i + 1];
                else
                        return 2;
        }
        if (argc - i != 2)
                return 2;
        o.insecure = insecure;
        setvbuf(stdout, NULL, _IOLBF, 0);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        r = image_store_open(argv[i + 1], &st, &err);
        if (r == 0)
                r = registry_pull(st, argv[i], &o, &digest, &err);
        image_store_close(st);
        curl_global_cleanup();
        if (r < 0) {
                fprintf(stderr, "error: %s\n", err->msg);
                tess_error_free(err);
                return 1;
        }
        printf("pulled %s %s\n", argv[i], digest);
        return 0;
}

static int cmd_push_stream(int argc, char **argv)
{
        struct image_push_opts o = { 0 };
        struct image_push_stream *s = NULL;
        struct tess_error *err = NULL;
        _cleanup_free_ char *data = NULL;
        char digest[72], hex[65];
        size_t len = 0, off = 0;
        bool cancel = false;
        int i, r, fd;

        for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                if (streq(argv[i], "--cancel"))
                        cancel = true;
                else if (streq(argv[i], "--user") && i + 1 < argc)
                        o.username = argv[++i];
                else if (streq(argv[i], "--password") && i + 1 < argc)
                        o.password = argv[++i];
                else
                        return 2;
        }
        if (argc - i != 4)
                return 2;
        o.chunk = atoll(argv[i + 3]);
        if (fs_read_file(argv[i + 1], (size_t)1 << 30, &data, &len, &err) < 0)
                goto fail;
        sha256_hex(data, len, hex);
        snprintf(digest, sizeof(digest), "sha256:%s", hex);
        fd = open(argv[i + 2], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
                perror(argv[i + 2]);
                return 1;
        }
        curl_global_init(CURL_GLOBAL_DEFAULT);
        r = image_push_stream_start(argv[i], &o, argv[i + 2], &s, &err);
        while (r == 0 && off < len && !(cancel && off >= len / 2)) {
                size_t n = len - off < 100 * 1024 ? len - off : 100 * 1024;
                if (write(fd, data + off, n) != (ssize_t)n) {
                        perror("write");
                        return 1;
                }
                off += n;
                image_push_stream_grow(s, (int64_t)off);
                usleep(2000);
        }
        close(fd);
        if (r == 0)
                r = image_push_stream_finish(s, cancel ? NULL : digest, (int64_t)len, &err);
        curl_global_cleanup();
        if (r < 0)
                goto fail;
        if (cancel)
                printf("cancelled\n");
        else
                printf("streamed %s %zu\n", digest, len);
        return 0;
fail:
        fprintf(stderr, "error: %s\n", err->msg);
        tess_error_free(err);
        return 1;
}

int main(int argc, char **argv)
{
        int r = 2;

        if (argc >= 2 && streq(argv[1], "sign"))
                r = cmd_sign(argc - 1, argv + 1);
        else if (argc >= 2 && streq(argv[1], "slot"))
                r = cmd_slot(argc - 1, argv + 1);
        else if (argc >= 2 && streq(argv[1], "agent-sign"))
                r = cmd_agent_sign(argc - 1, argv + 1);
        else if (argc >= 2 && streq(argv[1], "registry-pull"))
                r = cmd_registry_pull(argc - 1, argv + 1);
        else if (argc >= 2 && streq(argv[1], "push-stream"))
                r = cmd_push_stream(argc - 1, argv + 1);
        if (r == 2)
                fputs("usage: test-tool sign METHOD PATH HOST AK SK [CONTENT_TYPE [BODY]] | slot NAME VALUE\n"
                      "       test-tool agent-sign SECRET_FILE AGENT_ID METHOD PATH BODY\n"
                      "       test-tool registry-pull [--user U --password P] [--insecure HOST:PORT]...\n"
                      "                               [--default-registry R] [--arch A] REF STOREDIR\n"
                      "       test-tool push-stream [--cancel] [--user U --password P] REPO_REF SRC OUT CHUNK\n",
                      stderr);
        return r;
}
