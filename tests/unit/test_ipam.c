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
        const char *bad[] = { "10.88.0.1",  "10.88.0.1/", "10.88.0.1/31",  "10.88.0.1/7",
                              "10.88.0/16", "x/16",       "10.88.0.1/16x", "300.1.1.1/16" };
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
        unsigned g;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        owner(&f, "a");
        owner(&f, "b");
        owner(&f, "c");
        /* the gateway is .1: the first address handed out is .2 */
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "a", "a", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.9.0.2");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "b", "b", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.9.0.3");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "c", "c", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.9.0.4");
        _cleanup_free_ char *claim = xasprintf("%s/10.9.0.3", f.dir), *text = NULL;
        size_t len;
        CHECK_INTEQ(fs_read_file(claim, 64, &text, &len, &err), 0);
        CHECK_STREQ(text, "b\nb\n2\n");
        /* a release by someone else changes nothing; by the owner frees it */
        ipam_release(f.dir, "10.9.0.3", "a");
        CHECK(access(claim, F_OK) == 0);
        ipam_release(f.dir, "10.9.0.3", "b");
        CHECK(access(claim, F_OK) < 0);
        owner(&f, "d");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.9.0.1/24", "d", "d", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.9.0.3");
        fixture_close(&f);
}

static void test_gateway_not_first(void)
{
        struct tess_error *err = NULL;
        struct fixture f;
        char ip[IPAM_ADDR_LEN];
        unsigned g;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        owner(&f, "a");
        owner(&f, "b");
        CHECK_INTEQ(ipam_alloc(f.dir, "192.168.5.2/30", "a", "a", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "192.168.5.1");
        /* a /30 has two hosts: one is the gateway */
        CHECK_INTEQ(ipam_alloc(f.dir, "192.168.5.2/30", "b", "b", f.owners, ip, &g, &err), -ENOSPC);
        CHECK(err && strstr(err->msg, "no free address"));
        tess_error_free(err);
        fixture_close(&f);
}

static void test_stale_claims_are_reused(void)
{
        struct tess_error *err = NULL;
        struct fixture f;
        char ip[IPAM_ADDR_LEN];
        unsigned g;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        owner(&f, "gone");
        owner(&f, "alive");
        owner(&f, "new");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.1.0.1/24", "gone", "gone", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.1.0.2");
        CHECK_INTEQ(ipam_alloc(f.dir, "10.1.0.1/24", "alive", "alive", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.1.0.3");
        /* "gone" is removed without releasing its address: .2 is free again */
        _cleanup_free_ char *gone = xasprintf("%s/gone", f.owners);
        CHECK(rmdir(gone) == 0);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.1.0.1/24", "new", "new", f.owners, ip, &g, &err), 0);
        CHECK_STREQ(ip, "10.1.0.2");
        fixture_close(&f);
}

/* Network groups: one number per group among live claims, the lowest free
 * for a new group, kept while a member lives, reused once none does. */
static void test_group_numbers(void)
{
        struct tess_error *err = NULL;
        struct fixture f;
        char ip[IPAM_ADDR_LEN];
        unsigned g;

        if (!fixture_open(&f))
                SKIP("no temporary directory");
        const char *ids[] = { "s1-k1", "s2-k1", "s1-k2", "s3-k1", "s4-k1", "old" };
        for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
                owner(&f, ids[i]);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.2.0.1/24", "s1-k1", "s1", f.owners, ip, &g, &err), 0);
        CHECK_INTEQ(g, 1);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.2.0.1/24", "s2-k1", "s2", f.owners, ip, &g, &err), 0);
        CHECK_INTEQ(g, 2);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.2.0.1/24", "s1-k2", "s1", f.owners, ip, &g, &err), 0);
        CHECK_INTEQ(g, 1);
        /* a claim of an older agent (no group) counts for nothing */
        _cleanup_free_ char *old = xasprintf("%s/10.2.0.200", f.dir);
        CHECK_INTEQ(fs_write_file_replace(old, "old\n", 4, 0644, &err), 0);
        /* s1's first kernel gone: s1 keeps 1 through its second */
        _cleanup_free_ char *k1 = xasprintf("%s/s1-k1", f.owners), *k2 = xasprintf("%s/s1-k2", f.owners);
        CHECK(rmdir(k1) == 0);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.2.0.1/24", "s3-k1", "s3", f.owners, ip, &g, &err), 0);
        CHECK_INTEQ(g, 3);
        /* s1 all gone: its number goes to the next new group */
        CHECK(rmdir(k2) == 0);
        CHECK_INTEQ(ipam_alloc(f.dir, "10.2.0.1/24", "s4-k1", "s4", f.owners, ip, &g, &err), 0);
        CHECK_INTEQ(g, 1);
        /* a group name is one line */
        CHECK_INTEQ(ipam_alloc(f.dir, "10.2.0.1/24", "old", "a\nb", f.owners, ip, &g, &err), -EINVAL);
        err = tess_error_free(err);
        fixture_close(&f);
}

static const struct test tests[] = {
        TEST(test_group_numbers),
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
