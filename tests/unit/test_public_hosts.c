/* test_public_hosts.c - the host names a signed request may be made for
 * (manager/api/public_hosts.c). */
#include "common/compat.h"

#include <unistd.h>

#include "../lib/test.h"
#include "manager/api/public_hosts.h"

static void test_configured_names(void)
{
        struct public_hosts *h = public_hosts_new("tessera.example.org, 10.0.0.5,*.apps.example.org,[fd00::1]", NULL);

        CHECK(public_hosts_allow(h, "tessera.example.org"));
        CHECK(public_hosts_allow(h, "Tessera.Example.ORG:8443")); /* any case, any port */
        CHECK(public_hosts_allow(h, "tessera.example.org."));
        CHECK(public_hosts_allow(h, "10.0.0.5:8090"));
        CHECK(public_hosts_allow(h, "[fd00::1]:8090"));
        CHECK(public_hosts_allow(h, "x.apps.example.org"));
        CHECK(public_hosts_allow(h, "a.b.apps.example.org:1"));
        CHECK(!public_hosts_allow(h, "apps.example.org")); /* *.suffix is its subdomains */
        CHECK(!public_hosts_allow(h, "evil.example.org"));
        CHECK(!public_hosts_allow(h, "tessera.example.org.evil.net"));
        CHECK(!public_hosts_allow(h, "xtessera.example.org"));
        CHECK(!public_hosts_allow(h, "10.0.0.50"));
        CHECK(!public_hosts_allow(h, "localhost:8090")); /* configured: only what is listed */
        CHECK(!public_hosts_allow(h, ""));
        CHECK(!public_hosts_allow(h, ":8090"));
        CHECK(!public_hosts_allow(h, NULL));
        CHECK(!public_hosts_allow(h, "[fd00::1"));
        public_hosts_free(h);
}

static void test_any(void)
{
        struct public_hosts *h = public_hosts_new("*", NULL);
        CHECK(public_hosts_allow(h, "anything.example"));
        CHECK(public_hosts_allow(h, NULL));
        CHECK_STREQ(public_hosts_describe(h), "*");
        public_hosts_free(h);
}

/* Without the setting: the names this machine is reached by. */
static void test_this_machine(void)
{
        struct public_hosts *h = public_hosts_new(NULL, "192.0.2.7:8090");
        char name[256] = "";

        CHECK(public_hosts_allow(h, "localhost:8090"));
        CHECK(public_hosts_allow(h, "127.0.0.1:8090")); /* the loopback interface */
        CHECK(public_hosts_allow(h, "192.0.2.7:8090")); /* the listen address */
        CHECK(gethostname(name, sizeof(name) - 1) == 0);
        CHECK(public_hosts_allow(h, name));
        CHECK(!public_hosts_allow(h, "evil.example:8090"));
        CHECK(!public_hosts_allow(h, "198.51.100.200"));
        public_hosts_free(h);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_configured_names),
                TEST(test_any),
                TEST(test_this_machine),
                { 0 },
        };
        return test_main(tests);
}
