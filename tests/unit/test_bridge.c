/* test_bridge.c - the agent's choice of bridge: which subnets clash with
 * the host's interfaces. */
#include "common/compat.h"

#include "../lib/test.h"
#include "agent/container/bridge.h"

/* Every host has lo with 127.0.0.1/8: a subnet inside it, or one holding
 * it, clashes and the clash names lo; with lo excepted (the bridge being
 * checked is its own interface) it does not. */
static void test_subnet_overlapping_loopback(void)
{
        _cleanup_free_ char *what = NULL;

        CHECK(bridge_subnet_taken(0x7f100000, 16, "tessera-none", &what)); /* 127.16.0.0/16 */
        CHECK(what && strstr(what, "on lo"));
        free(what);
        what = NULL;
        CHECK(bridge_subnet_taken(0x7e000000, 7, "tessera-none", &what)); /* 126.0.0.0/7 holds 127/8 */
        free(what);
        what = NULL;
        CHECK(!bridge_subnet_taken(0x7f100000, 16, "lo", &what));
        CHECK(what == NULL);
}

/* 198.51.100.0/24 (TEST-NET-2, RFC 5737) is on no host we test on. */
static void test_documentation_subnet_is_free(void)
{
        _cleanup_free_ char *what = NULL;

        if (bridge_subnet_taken(0xc6336400, 24, "tessera-none", &what))
                SKIP("this host uses 198.51.100.0/24");
        CHECK(what == NULL);
}

static const struct test tests[] = {
        TEST(test_subnet_overlapping_loopback),
        TEST(test_documentation_subnet_is_free),
        {},
};

int main(void)
{
        return test_main(tests);
}
