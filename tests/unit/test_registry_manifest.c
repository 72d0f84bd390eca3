/* test_registry_manifest.c - manifests and indexes as registries send them,
 * and the registry's error answers (registry_manifest.c, registry_http.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "registry/registry-internal.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"
#define CONFIG "{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"" D1 "\",\"size\":595}"
#define LAYER(d, n) "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"" d "\",\"size\":" #n "}"

static int parse(const char *json, const char *ctype, struct registry_manifest *m, struct tess_error **err)
{
        return registry_manifest_parse(json, strlen(json), ctype, m, err);
}

static void check_bad(const char *json, const char *ctype, const char *msg)
{
        struct registry_manifest m = { 0 };
        struct tess_error *err = NULL;

        if (parse(json, ctype, &m, &err) == 0) {
                test_fail(__FILE__, __LINE__, "'%s' parses", json);
                registry_manifest_release(&m);
                return;
        }
        CHECK(err && err->code == EINVAL);
        if (err)
                CHECK_STREQ(err->msg, msg);
        tess_error_free(err);
}

static void test_manifest_image(void)
{
        struct registry_manifest m = { 0 };
        struct tess_error *err = NULL;

        CHECK(parse("{\"schemaVersion\":2,\"mediaType\":\"" MEDIA_OCI_MANIFEST "\",\"config\":" CONFIG
                    ",\"layers\":[" LAYER(D2, 1035109) "," LAYER(D3, 0) "]}",
                    NULL, &m, &err) == 0);
        CHECK(err == NULL);
        CHECK(m.kind == MANIFEST_IMAGE);
        CHECK_STREQ(m.media_type, MEDIA_OCI_MANIFEST);
        CHECK_STREQ(m.config.digest, D1);
        CHECK_INTEQ(m.config.size, 595);
        CHECK_INTEQ(m.n_entries, 2);
        if (m.n_entries == 2) {
                CHECK_STREQ(m.entries[0].digest, D2);
                CHECK_INTEQ(m.entries[0].size, 1035109);
                CHECK_INTEQ(m.entries[1].size, 0);
        }
        registry_manifest_release(&m);

        /* no mediaType field: the Content-Type, else the fields, tell */
        CHECK(parse("{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\","
                    "\"digest\":\"" D1 "\",\"size\":1},\"layers\":[]}",
                    MEDIA_DOCKER_MANIFEST, &m, &err) == 0);
        CHECK(m.kind == MANIFEST_IMAGE && m.n_entries == 0);
        CHECK_STREQ(m.media_type, MEDIA_DOCKER_MANIFEST);
        registry_manifest_release(&m);
        CHECK(parse("{\"schemaVersion\":2,\"config\":" CONFIG ",\"layers\":[]}", "application/json", &m, &err) == 0);
        CHECK(m.kind == MANIFEST_IMAGE);
        CHECK_STREQ(m.media_type, MEDIA_OCI_MANIFEST);
        registry_manifest_release(&m);
}

static void test_manifest_index_pick(void)
{
        struct registry_manifest m = { 0 };
        struct tess_error *err = NULL;
        const struct registry_descriptor *d;

        CHECK(parse("{\"schemaVersion\":2,\"manifests\":["
                    "{\"digest\":\"" D1 "\",\"size\":10,\"platform\":{\"os\":\"linux\",\"architecture\":\"arm\",\"variant\":\"v6\"}},"
                    "{\"digest\":\"" D2 "\",\"size\":10,\"platform\":{\"os\":\"linux\",\"architecture\":\"arm\",\"variant\":\"v7\"}},"
                    "{\"digest\":\"" D3 "\",\"size\":10,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}},"
                    "{\"digest\":\"" D1 "\",\"size\":10,\"platform\":{\"os\":\"unknown\",\"architecture\":\"unknown\"}}]}",
                    MEDIA_DOCKER_LIST, &m, &err) == 0);
        CHECK(m.kind == MANIFEST_INDEX);
        CHECK_STREQ(m.media_type, MEDIA_DOCKER_LIST);
        CHECK_INTEQ(m.n_entries, 4);
        d = registry_manifest_pick(&m, "amd64");
        CHECK(d && streq(d->digest, D3));
        d = registry_manifest_pick(&m, "arm/v7");
        CHECK(d && streq(d->digest, D2));
        d = registry_manifest_pick(&m, "arm");
        CHECK(d && streq(d->digest, D1));
        CHECK(registry_manifest_pick(&m, "arm64") == NULL);
        CHECK(registry_manifest_pick(&m, "unknown") == NULL); /* linux only */
        registry_manifest_release(&m);
}

static void test_manifest_bad(void)
{
        check_bad("[", NULL, "manifest: not JSON: line 1: ']' expected near end of file");
        check_bad("[]", NULL, "manifest: not a JSON object");
        check_bad("{\"schemaVersion\":1,\"fsLayers\":[]}", NULL, "manifest: schema 1 manifests are not supported");
        check_bad("{}", "application/vnd.docker.distribution.manifest.v1+prettyjws",
                  "manifest: schema 1 manifests are not supported");
        check_bad("{\"schemaVersion\":\"2\"}", NULL, "manifest: schemaVersion is not 2");
        check_bad("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.cncf.helm.chart\"}", NULL,
                  "manifest: unsupported media type 'application/vnd.cncf.helm.chart'");
        check_bad("{\"schemaVersion\":2,\"layers\":[]}", NULL, "manifest: no config");
        check_bad("{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json\","
                  "\"digest\":\"" D1 "\",\"size\":1},\"layers\":[]}",
                  NULL, "manifest: not a container image: its config is 'application/vnd.cncf.helm.config.v1+json'");
        check_bad("{\"schemaVersion\":2,\"config\":" CONFIG "}", NULL, "manifest: no \"layers\" array");
        check_bad("{\"schemaVersion\":2,\"config\":" CONFIG ",\"layers\":[{\"digest\":\"sha256:../../etc\",\"size\":1}]}",
                  NULL, "manifest: layer 0: no sha256 digest");
        check_bad("{\"schemaVersion\":2,\"config\":" CONFIG ",\"layers\":[" LAYER(D2, -1) "]}", NULL,
                  "manifest: layer 0 (" D2 "): no valid size");
        check_bad("{\"schemaVersion\":2,\"config\":" CONFIG ",\"layers\":[1]}", NULL, "manifest: layer 0: not an object");
        check_bad("{\"schemaVersion\":2,\"schemaVersion\":2}", NULL,
                  "manifest: not JSON: line 1: duplicate object key near '\"schemaVersion\"'");
        check_bad("{\"schemaVersion\":2,\"manifests\":{}}", MEDIA_OCI_INDEX, "manifest: no \"manifests\" array");
}

static void test_manifest_limits(void)
{
        struct buf b = BUF_INIT;

        buf_puts(&b, "{\"schemaVersion\":2,\"config\":" CONFIG ",\"layers\":[");
        for (int i = 0; i <= REGISTRY_LAYERS_MAX; i++)
                buf_printf(&b, "%s" LAYER(D2, 1), i ? "," : "");
        buf_puts(&b, "]}");
        check_bad(b.data, NULL, "manifest: 257 layers, more than 256");
        buf_release(&b);
        CHECK(image_digest_valid(D1));
        CHECK(!image_digest_valid("sha256:1111"));
        CHECK(!image_digest_valid(NULL));
        CHECK(!image_digest_valid("sha256:111111111111111111111111111111111111111111111111111111111111111G"));
}

static char *message(long status, const char *body)
{
        return registry_error_message(status, body, strlen(body));
}

static void test_registry_error_message(void)
{
        static const char body[] = "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest unknown\","
                                   "\"detail\":{\"Tag\":\"nope\"}}]}";
        char *m;

        m = message(404, body);
        CHECK_STREQ(m, "manifest unknown (404)");
        free(m);
        m = message(401, "{\"errors\":[{\"code\":\"UNAUTHORIZED\"}]}");
        CHECK_STREQ(m, "UNAUTHORIZED (401)");
        free(m);
        m = message(401, "{\"details\":\"incorrect username or password\"}");
        CHECK_STREQ(m, "incorrect username or password (401)");
        free(m);
        m = message(503, "<html>oops</html>");
        CHECK_STREQ(m, "service unavailable (503)");
        free(m);
        m = message(418, "");
        CHECK_STREQ(m, "unexpected answer (418)");
        free(m);
        m = message(400, "{\"errors\":[{\"message\":\"bad\\u0007\\nthing\"}]}");
        CHECK_STREQ(m, "bad??thing (400)");
        free(m);
        CHECK_INTEQ(registry_status_errno(404), ENOENT);
        CHECK_INTEQ(registry_status_errno(403), EACCES);
        CHECK_INTEQ(registry_status_errno(502), EIO);
}

static const struct test tests[] = {
        TEST(test_manifest_image),
        TEST(test_manifest_index_pick),
        TEST(test_manifest_bad),
        TEST(test_manifest_limits),
        TEST(test_registry_error_message),
        {},
};

int main(void)
{
        return test_main(tests);
}
