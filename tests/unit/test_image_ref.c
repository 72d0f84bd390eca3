/* test_image_ref.c - image references as Docker parses them (registry_ref.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "registry/registry.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DEF "127.0.0.1:5000"

/* Parse s and compare its fields ("-" for NULL) and its formatted name. */
static void check_ok(const char *s, const char *def, const char *registry, const char *repository, const char *tag,
                     const char *digest, const char *formatted)
{
        struct tess_error *err = NULL;
        struct image_ref r = { 0 };

        if (image_ref_parse(s, def, &r, &err) < 0) {
                test_fail(__FILE__, __LINE__, "'%s' does not parse: %s", s, err->msg);
                tess_error_free(err);
                return;
        }
        CHECK(err == NULL);
        CHECK_STREQ(r.registry, registry);
        CHECK_STREQ(r.repository, repository);
        CHECK_STREQ(r.tag ? r.tag : "-", tag);
        CHECK_STREQ(r.digest ? r.digest : "-", digest);
        char *f = image_ref_format(&r);
        CHECK_STREQ(f, formatted);
        free(f);
        image_ref_release(&r);
}

/* s must fail with EINVAL and exactly this message. */
static void check_bad(const char *s, const char *def, const char *msg)
{
        struct tess_error *err = NULL;
        struct image_ref r = { 0 };

        if (image_ref_parse(s, def, &r, &err) == 0) {
                test_fail(__FILE__, __LINE__, "'%s' parses as %s/%s", s, r.registry, r.repository);
                image_ref_release(&r);
                return;
        }
        CHECK(err && err->code == EINVAL);
        if (err)
                CHECK_STREQ(err->msg, msg);
        CHECK(r.registry == NULL);
        tess_error_free(err);
}

static void test_image_ref_names_and_tags(void)
{
        check_ok("busybox", DEF, DEF, "busybox", "latest", "-", DEF "/busybox:latest");
        check_ok("busybox:1.36", DEF, DEF, "busybox", "1.36", "-", DEF "/busybox:1.36");
        check_ok("team/app:v1_2-rc.3", DEF, DEF, "team/app", "v1_2-rc.3", "-", DEF "/team/app:v1_2-rc.3");
        check_ok("a/b/c/d", DEF, DEF, "a/b/c/d", "latest", "-", DEF "/a/b/c/d:latest");
        check_ok("a.b_c__d-e---f9", DEF, DEF, "a.b_c__d-e---f9", "latest", "-", DEF "/a.b_c__d-e---f9:latest");
        check_ok("busybox:_Tag", DEF, DEF, "busybox", "_Tag", "-", DEF "/busybox:_Tag");
        /* with no '/', "name:5000" is a name and a tag, as for Docker */
        check_ok("localhost:5000", DEF, DEF, "localhost", "5000", "-", DEF "/localhost:5000");
}

static void test_image_ref_registries(void)
{
        check_ok("127.0.0.1:5000/busybox:latest", NULL, "127.0.0.1:5000", "busybox", "latest", "-",
                 "127.0.0.1:5000/busybox:latest");
        check_ok("localhost/foo", NULL, "localhost", "foo", "latest", "-", "localhost/foo:latest");
        check_ok("localhost:5000/foo/bar:v1", NULL, "localhost:5000", "foo/bar", "v1", "-",
                 "localhost:5000/foo/bar:v1");
        check_ok("registry.example.com/team/app", NULL, "registry.example.com", "team/app", "latest", "-",
                 "registry.example.com/team/app:latest");
        check_ok("[::1]:5000/busybox", NULL, "[::1]:5000", "busybox", "latest", "-", "[::1]:5000/busybox:latest");
        check_ok("[fe80::1]/x", NULL, "[fe80::1]", "x", "latest", "-", "[fe80::1]/x:latest");
        /* an upper-case first component is a registry (then the path must be lowercase) */
        check_ok("Example/foo", NULL, "Example", "foo", "latest", "-", "Example/foo:latest");
        check_ok("my-host.example:443/a", NULL, "my-host.example:443", "a", "latest", "-",
                 "my-host.example:443/a:latest");
        /* a first component without '.', ':' or "localhost" is a path */
        check_ok("team/app", "reg.example", "reg.example", "team/app", "latest", "-", "reg.example/team/app:latest");
}

static void test_image_ref_docker_io(void)
{
        check_ok("busybox", "docker.io", "docker.io", "library/busybox", "latest", "-",
                 "docker.io/library/busybox:latest");
        check_ok("user/app", "docker.io", "docker.io", "user/app", "latest", "-", "docker.io/user/app:latest");
        check_ok("docker.io/busybox:1", NULL, "docker.io", "library/busybox", "1", "-", "docker.io/library/busybox:1");
        check_ok("index.docker.io/busybox", NULL, "docker.io", "library/busybox", "latest", "-",
                 "docker.io/library/busybox:latest");
        /* elsewhere a bare name stays bare */
        check_ok("busybox", "quay.io", "quay.io", "busybox", "latest", "-", "quay.io/busybox:latest");
}

static void test_image_ref_digests(void)
{
        check_ok("busybox@sha256:" HEX64, DEF, DEF, "busybox", "-", "sha256:" HEX64, DEF "/busybox@sha256:" HEX64);
        check_ok("busybox:1.36@sha256:" HEX64, DEF, DEF, "busybox", "1.36", "sha256:" HEX64,
                 DEF "/busybox@sha256:" HEX64);
        check_ok("localhost:5000/a@sha256:" HEX64, NULL, "localhost:5000", "a", "-", "sha256:" HEX64,
                 "localhost:5000/a@sha256:" HEX64);
        check_bad("busybox@sha256:abc", DEF,
                  "invalid reference 'busybox@sha256:abc': invalid digest 'sha256:abc' (sha256: and 64 lowercase hex "
                  "digits)");
        check_bad("busybox@sha256:" HEX64 "0", DEF,
                  "invalid reference 'busybox@sha256:" HEX64 "0': invalid digest 'sha256:" HEX64
                  "0' (sha256: and 64 lowercase hex digits)");
        check_bad("busybox@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", DEF,
                  "invalid reference 'busybox@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef'"
                  ": invalid digest 'sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef' (sha256:"
                  " and 64 lowercase hex digits)");
        check_bad("busybox@sha512:" HEX64 HEX64, DEF,
                  "invalid reference 'busybox@sha512:" HEX64 HEX64 "': unsupported digest algorithm in 'sha512:" HEX64
                  HEX64 "' (only sha256)");
        check_bad("busybox@", DEF, "invalid reference 'busybox@': invalid digest '' (sha256: and 64 lowercase hex digits)");
        check_bad("a@b@sha256:" HEX64, DEF,
                  "invalid reference 'a@b@sha256:" HEX64 "': invalid digest 'b@sha256:" HEX64
                  "' (sha256: and 64 lowercase hex digits)");
        check_bad("@sha256:" HEX64, DEF,
                  "invalid reference '@sha256:" HEX64 "': repository name must have at least one component");
}

static void test_image_ref_bad_names(void)
{
        check_bad("", DEF, "invalid reference '': empty reference");
        check_bad("Busybox", DEF, "invalid reference 'Busybox': repository name must be lowercase");
        check_bad("team/App", DEF, "invalid reference 'team/App': repository name must be lowercase");
        check_bad("a//b", DEF, "invalid reference 'a//b': invalid repository name component ''");
        check_bad("/busybox", DEF, "invalid reference '/busybox': invalid repository name component ''");
        check_bad("busybox/", DEF, "invalid reference 'busybox/': invalid repository name component ''");
        check_bad("-a", DEF, "invalid reference '-a': invalid repository name component '-a'");
        check_bad("a-", DEF, "invalid reference 'a-': invalid repository name component 'a-'");
        check_bad("a..b", DEF, "invalid reference 'a..b': invalid repository name component 'a..b'");
        check_bad("a___b", DEF, "invalid reference 'a___b': invalid repository name component 'a___b'");
        check_bad("a_-b", DEF, "invalid reference 'a_-b': invalid repository name component 'a_-b'");
        check_bad("a b", DEF, "invalid reference 'a b': invalid repository name component 'a b'");
        check_bad("bus\x01" "box", DEF, "invalid reference 'bus\\x01box': invalid repository name component 'bus\\x01box'");
        check_bad(HEX64, DEF, "invalid reference '" HEX64 "': a 64-digit hexadecimal string is an image id, not a repository name");
        check_bad("busybox", NULL, "invalid reference 'busybox': no registry in the reference and no default registry configured");
}

static void test_image_ref_bad_tags_and_registries(void)
{
        check_bad("busybox:", DEF, "invalid reference 'busybox:': invalid tag ''");
        check_bad("busybox:-x", DEF, "invalid reference 'busybox:-x': invalid tag '-x'");
        check_bad("busybox:a+b", DEF, "invalid reference 'busybox:a+b': invalid tag 'a+b'");
        check_bad("busybox:a:b", DEF, "invalid reference 'busybox:a:b': invalid repository name component 'busybox:a'");
        check_bad("localhost:0/x", NULL, "invalid reference 'localhost:0/x': invalid registry 'localhost:0'");
        check_bad("host.example:65536/x", NULL, "invalid reference 'host.example:65536/x': invalid registry 'host.example:65536'");
        check_bad("host.example:/x", NULL, "invalid reference 'host.example:/x': invalid registry 'host.example:'");
        check_bad("ho_st.example/x", NULL, "invalid reference 'ho_st.example/x': invalid registry 'ho_st.example'");
        check_bad("-host.example/x", NULL, "invalid reference '-host.example/x': invalid registry '-host.example'");
        check_bad("host..example/x", NULL, "invalid reference 'host..example/x': invalid registry 'host..example'");
        check_bad("[zz]:5000/x", NULL, "invalid reference '[zz]:5000/x': invalid registry '[zz]:5000'");
        check_bad("[]/x", NULL, "invalid reference '[]/x': invalid registry '[]'");
}

static void test_image_ref_lengths(void)
{
        char name[300], ref[400], formatted[400];
        struct tess_error *err = NULL;
        struct image_ref r;

        /* a tag of 128 characters is the longest */
        memset(name, 'a', 128);
        name[128] = '\0';
        snprintf(ref, sizeof(ref), "busybox:%s", name);
        snprintf(formatted, sizeof(formatted), DEF "/busybox:%s", name);
        check_ok(ref, DEF, DEF, "busybox", name, "-", formatted);
        snprintf(ref, sizeof(ref), "busybox:%sa", name);
        CHECK(image_ref_parse(ref, DEF, &r, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "invalid tag"));
        err = tess_error_free(err);

        /* a name of 255 characters (registry included) is the longest */
        memset(name, 'b', 255);
        name[255] = '\0';
        CHECK(image_ref_parse(name, DEF, &r, &err) == 0);
        if (!err)
                image_ref_release(&r);
        err = tess_error_free(err);
        name[255] = 'b';
        name[256] = '\0';
        CHECK(image_ref_parse(name, DEF, &r, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "must not be more than 255 characters"));
        err = tess_error_free(err);
}

static const struct test tests[] = {
        TEST(test_image_ref_names_and_tags),
        TEST(test_image_ref_registries),
        TEST(test_image_ref_docker_io),
        TEST(test_image_ref_digests),
        TEST(test_image_ref_bad_names),
        TEST(test_image_ref_bad_tags_and_registries),
        TEST(test_image_ref_lengths),
        {},
};

int main(void)
{
        return test_main(tests);
}
