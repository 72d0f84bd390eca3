/* test_vfolder.c - the folder model's pure parts (manager/vfolder/vfolder.c):
 * storage host lists from the config, folder names, the on-disk layout,
 * mount permissions and host permission lists. */
#include "common/compat.h"

#include "../lib/test.h"
#include "manager/vfolder/vfolder.h"

static void test_hosts(void)
{
        struct tess_error *err = NULL;
        struct vf_hosts h;

        CHECK_INTEQ(vf_hosts_parse("local=/var/lib/v, nfs=/mnt/nfs/vf//", &h, &err), 0);
        CHECK_INTEQ((int)h.n, 2);
        CHECK_STREQ(vf_hosts_find(&h, "local")->path, "/var/lib/v");
        CHECK_STREQ(vf_hosts_find(&h, "nfs")->path, "/mnt/nfs/vf");
        CHECK(vf_hosts_find(&h, "other") == NULL);
        vf_hosts_release(&h);

        CHECK_INTEQ(vf_hosts_parse("", &h, &err), 0);
        CHECK_INTEQ((int)h.n, 0);
        vf_hosts_release(&h);

        for (const char *const *bad = (const char *const[]){ "local", "local=relative", "=/x", "a=/x,a=/y",
                                                             "bad name=/x", NULL };
             *bad; bad++) {
                CHECK_INTEQ(vf_hosts_parse(*bad, &h, &err), -EINVAL);
                CHECK(err && strstr(err->msg, "vfolder_hosts"));
                err = tess_error_free(err);
                CHECK_INTEQ((int)h.n, 0);
        }
}

static void test_names(void)
{
        CHECK(vf_valid_name("data"));
        CHECK(vf_valid_name("my-data_2.0"));
        CHECK(vf_valid_name(".local"));
        CHECK(vf_valid_name(".config"));
        CHECK(!vf_valid_name(""));
        CHECK(!vf_valid_name("."));
        CHECK(!vf_valid_name(".."));
        CHECK(!vf_valid_name("../x"));
        CHECK(!vf_valid_name("a/b"));
        CHECK(!vf_valid_name("-x"));
        CHECK(!vf_valid_name(".ssh"));
        CHECK(!vf_valid_name(".jupyter"));
        CHECK(!vf_valid_name("invitations"));
        CHECK(!vf_valid_name("x y"));
        CHECK(!vf_valid_name(NULL));
        char long_name[80];
        memset(long_name, 'a', 65);
        long_name[65] = '\0';
        CHECK(!vf_valid_name(long_name));
        long_name[64] = '\0';
        CHECK(vf_valid_name(long_name));
}

static void test_layout(void)
{
        char rel[256], scope[128];

        vf_relpath("user", "a38b5000-c981-4cab-8c87-95222f44dd04", "879a1729-720b-4b48-b4ca-3aff9b55467a", rel,
                   sizeof(rel));
        CHECK_STREQ(rel, "user-a38b5000-c981-4cab-8c87-95222f44dd04/87/9a/1729720b4b48b4ca3aff9b55467a");
        vf_scope_dir("project", "61726e36-9e1a-42fc-85aa-d4f19eb6b453", scope, sizeof(scope));
        CHECK_STREQ(scope, "project-61726e36-9e1a-42fc-85aa-d4f19eb6b453");
        CHECK(strncmp(rel, "user-a38b5000-c981-4cab-8c87-95222f44dd04/", 42) == 0);
}

static void test_perms(void)
{
        struct tess_error *err = NULL;
        unsigned bits;

        CHECK_INTEQ(vf_perm_parse("ro"), VF_PERM_RO);
        CHECK_INTEQ(vf_perm_parse("read-write"), VF_PERM_RW);
        CHECK_INTEQ(vf_perm_parse("wd"), VF_PERM_WD);
        CHECK_INTEQ(vf_perm_parse("rx"), -EINVAL);
        CHECK_INTEQ(vf_perm_parse(NULL), -EINVAL);
        CHECK(VF_PERM_RO < VF_PERM_RW && VF_PERM_RW < VF_PERM_WD);

        json_t *l = json_pack("[s, s]", "mount-in-session", "upload-file");
        CHECK_INTEQ(vf_host_perms_parse(l, &bits, &err), 0);
        CHECK_INTEQ((int)bits, VFH_MOUNT | VFH_UPLOAD);
        json_t *back = vf_host_perms_json(bits);
        CHECK(json_equal(back, l));
        json_decref(back);
        json_decref(l);

        l = json_pack("[s]", "fly");
        CHECK_INTEQ(vf_host_perms_parse(l, &bits, &err), -EINVAL);
        CHECK(err && strstr(err->msg, "'fly' is not a host permission"));
        err = tess_error_free(err);
        json_decref(l);

        l = json_pack("{s:[s]}", "local", "create-vfolder");
        CHECK_INTEQ(vf_allowed_hosts_check(l, &err), 0);
        json_decref(l);
        l = json_pack("{s:s}", "local", "create-vfolder");
        CHECK_INTEQ(vf_allowed_hosts_check(l, &err), -EINVAL);
        err = tess_error_free(err);
        json_decref(l);

        char *all = vf_host_perms_all_text("local");
        json_t *j = json_loads(all, 0, NULL);
        CHECK_INTEQ(vf_host_perms_parse(json_object_get(j, "local"), &bits, &err), 0);
        CHECK_INTEQ((int)bits, VFH_ALL);
        json_decref(j);
        free(all);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_hosts),
                TEST(test_names),
                TEST(test_layout),
                TEST(test_perms),
                { 0 },
        };
        return test_main(tests);
}
