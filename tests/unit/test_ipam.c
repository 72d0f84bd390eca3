/* test_ipam.c - the file-backed address allocator of the agent's bridge. */
#include "common/compat.h"

#include <sys/stat.h>

#include "../lib/test.h"
#include "agent/container/ipam.h"
#include "common/fs.h"

struct fixture {
        char root[64];
        char *dir, *owners;
};

static bool fixture_open(struct fixture *f)
{
        snprintf(f->root, sizeof(f->root), "/tmp/tessera-test-ipam.XXXXXX");
        if (!mkdtemp(f->root))
                return false;
        f->dir = xasprintf("%s/ipam", f->root);
        f->owners = xasprintf("%s/containers", f->root);
        return fs_mkdir_p(f->owners, 0755, NULL) == 0;
}

static void fixture_close(struct fixture *f)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", f->root);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
        free(f->dir);
        free(f->owners);
}

/* An owner that exists: a directory under owners. */
static void owner(struct fixture *f, const char *id)
{
        _cleanup_free_ char *p = xasprintf("%s/%s", f->owners, id);
        mkdir(p, 0755);
}

static void test_parse_cidr(void)
{
        struct tess_error *err = NULL;
        char out[IPAM_ADDR_LEN];
        uint32_t a;
        int prefix;

        CHECK_INTEQ(ipam_parse_cidr("10.88.0.1/16", &a, &prefix, &err), 0);
        CHECK_INTEQ(a, 0x0a580001);
        CHECK_INTEQ(prefix, 16);
        ipam_format(a, out);
        CHECK_STREQ(out, "10.88.0.1");
        const char *bad[] = { "10.88.0.1", "10.88.0.1/", "10.88.0.1/31", "10.88.0.1/7", "10.88.0/16", "x/16",
                              "10.88.0.1/16x", "300.1.1.1/16" };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                if (ipam_parse_cidr(bad[i], &a, &prefix, &err) != -EINVAL)
                        test_fail(__FILE__, __LINE__, "'%s' was accepted", bad[i]);
                err = tess_error_free(err);
        }
}

static void test_alloc_lowest_free_skipping_gateway(void)
{
        struct tess_error *err = NULL;
        struct fixture f;
        char ip[IPAM_ADDR_LEN];

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        owner(&f, "a");
        owner(&f, "b");
        owner(&f, "c");
        /* the gateway is .1: the first address handed out is .2 */
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "a", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.9.0.2");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "b", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.9.0.3");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "c", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.9.0.4");
        _cleanup_free_ char *claim = xasprintf("%s/10.9.0.3", f.dir), *text = NULL;
        size_t len;
        CHECK_INTEQ(fs_read_file(claim, 64, &text, &len, &err), 0);
        CHECK_STREQ(text, "b\n");
        /* a release by someone else changes nothing; by the owner frees it */
        ipam_release(f.dir, "10.9.0.3", "a");
        CHECK(access(claim, F_OK) == 0);
        ipam_release(f.dir, "10.9.0.3", "b");
        CHECK(access(claim, F_OK) < 0);
        owner(&f, "d");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "d", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.9.0.3");
        fixture_close(&f);
}

static void test_gateway_not_first(void)
{
        struct tess_error *err = NULL;
        struct fixture f;
        char ip[IPAM_ADDR_LEN];

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        owner(&f, "a");
        owner(&f, "b");
        CHECK_INTEQ(ipam_alloc(f.dir, "192.168.5.2/30", "a", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "192.168.5.1");
        /* a /30 has two hosts: one is the gateway */
        CHECK_INTEQ(ipam_alloc(f.dir, "192.168.5.2/30", "b", f.owners, ip, &err), -ENOSPC);
        CHECK(err && strstr(err->msg, "no free address"));
        tess_error_free(err);
        fixture_close(&f);
}

static void test_stale_claims_are_reused(void)
{
        struct tess_error *err = NULL;
        struct fixture f;
        char ip[IPAM_ADDR_LEN];

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        owner(&f, "gone");
        owner(&f, "alive");
        owner(&f, "new");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.1.0.1/24", "gone", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.1.0.2");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.1.0.1/24", "alive", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.1.0.3");
        /* "gone" is removed without releasing its address: .2 is free again */
        _cleanup_free_ char *gone = xasprintf("%s/gone", f.owners);
        CHECK(rmdir(gone) == 0);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.1.0.1/24", "new", f.owners, ip, &err), 0);
        CHECK_STREQ(ip, "10.1.0.2");
        fixture_close(&f);
}

static const struct test tests[] = {
        TEST(test_parse_cidr),
        TEST(test_alloc_lowest_free_skipping_gateway),
        TEST(test_gateway_not_first),
        TEST(test_stale_claims_are_reused),
        {},
};

int main(void)
{
        return test_main(tests);
}
