/* test_fgpu_config.c - the fGPU hook's limits from its config file and
 * from the environment (src/fgpu/config.c): sizes, per-device values,
 * the file beating the environment, and malformed input failing closed. */
#include "common/compat.h"

#include "../lib/test.h"
#include "fgpu/fgpu.h"

#define GIB (1024ull * 1024 * 1024)

static void test_sizes(void)
{
        uint64_t v;
        CHECK(fgpu_parse_size("4g", &v) && v == 4 * GIB);
        CHECK(fgpu_parse_size("512m", &v) && v == 512ull << 20);
        CHECK(fgpu_parse_size("16GiB", &v) && v == 16 * GIB);
        CHECK(fgpu_parse_size("1024k", &v) && v == 1 << 20);
        CHECK(fgpu_parse_size(" 123 ", &v) && v == 123);
        CHECK(!fgpu_parse_size("", &v));
        CHECK(!fgpu_parse_size("-1g", &v));
        CHECK(!fgpu_parse_size("4x", &v));
        CHECK(!fgpu_parse_size("1.5g", &v));
        CHECK(!fgpu_parse_size("99999999999999999999", &v));
        CHECK(!fgpu_parse_size("20000000000t", &v)); /* overflows 64 bits */
}

static void test_file_limits_per_device(void)
{
        const char *text = "# written by the agent\n"
                           "region = /opt/tessera/fgpu/run/region\n"
                           "memory_limit = 8g\n"
                           "memory_limit_1 = 2g   # the second GPU gets less\n"
                           "sm_limit_0 = 50\n"
                           "sm_limit_1 = \"25\"\n";
        struct fgpu_config c;

        fgpu_config_parse_file(text, strlen(text), &c);
        CHECK(!c.closed);
        CHECK(c.memory_limited && c.sm_limited);
        CHECK(c.memory[0] == 8 * GIB);
        CHECK(c.memory[1] == 2 * GIB);
        CHECK(c.memory[5] == 8 * GIB); /* memory_limit applies to every device without its own */
        CHECK_INTEQ(c.sm[0], 50);
        CHECK_INTEQ(c.sm[1], 25);
        CHECK_INTEQ(c.sm[2], 0);
        CHECK_STREQ(c.region, "/opt/tessera/fgpu/run/region");
}

static void test_malformed_fails_closed(void)
{
        static const char *const bad[] = {
                "memory_limit = lots\n", "memory_limit = 0\n", "memory_limit_99 = 1g\n", "sm_limit = 0\n",
                "sm_limit = 101\n",      "sm_limit = 50%\n",   "speed = fast\n",         "memory_limit 4g\n",
                "memory_limitx = 1g\n",  "region =\n",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct fgpu_config c;
                fgpu_config_parse_file(bad[i], strlen(bad[i]), &c);
                if (!c.closed)
                        test_fail(__FILE__, __LINE__, "'%s' was accepted", bad[i]);
                CHECK(c.error[0] != '\0');
        }
        /* a NUL inside the file, a line longer than any real one */
        struct fgpu_config c;
        fgpu_config_parse_file("memory_limit = 1g\0x\n", 19, &c);
        CHECK(c.closed);
        char *longline = malloc(5000);
        memset(longline, 'a', 4999);
        longline[4999] = '\0';
        fgpu_config_parse_file(longline, 4999, &c);
        CHECK(c.closed);
        free(longline);
}

static const char *const *env_table;

static const char *fake_getenv(const char *name)
{
        for (const char *const *e = env_table; *e; e += 2)
                if (streq(e[0], name))
                        return e[1];
        return NULL;
}

static void test_environment(void)
{
        static const char *const env[] = {
                "CUDA_DEVICE_MEMORY_LIMIT", "4g", "CUDA_DEVICE_MEMORY_LIMIT_2", "1g", "CUDA_DEVICE_SM_LIMIT", "30", NULL
        };
        static const char *const bad[] = { "CUDA_DEVICE_SM_LIMIT_0", "200", NULL };
        static const char *const none[] = { "CUDA_VISIBLE_DEVICES", "0", NULL };
        struct fgpu_config c;

        env_table = env;
        fgpu_config_from_env(fake_getenv, &c);
        CHECK(!c.closed && c.memory_limited && c.sm_limited);
        CHECK(c.memory[0] == 4 * GIB && c.memory[2] == GIB);
        CHECK_INTEQ(c.sm[3], 30);
        env_table = bad;
        fgpu_config_from_env(fake_getenv, &c);
        CHECK(c.closed);
        env_table = none;
        fgpu_config_from_env(fake_getenv, &c);
        CHECK(!c.closed && !c.memory_limited && !c.sm_limited); /* no limit: pass-through */
}

static void test_file_beats_environment(void)
{
        char path[] = "/tmp/tessera-fgpu-conf.XXXXXX";
        int fd = mkstemp(path);
        const char *text = "memory_limit = 2g\n";
        struct fgpu_config c;

        if (fd < 0)
                SKIP("no temporary file");
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
        setenv("TESSERA_FGPU_CONFIG", path, 1);
        setenv("CUDA_DEVICE_MEMORY_LIMIT", "64g", 1); /* a user raising their own limit */
        setenv("TESSERA_FGPU_REGION", "/tmp/somewhere.region", 1);
        fgpu_config_load(&c);
        CHECK(!c.closed && c.memory[0] == 2 * GIB);
        CHECK_STREQ(c.region, "/tmp/somewhere.region");
        unlink(path);
        /* without the file, the environment */
        fgpu_config_load(&c);
        CHECK(!c.closed && c.memory[0] == 64 * GIB);
        /* a config path that is a directory is not a configuration: closed */
        setenv("TESSERA_FGPU_CONFIG", "/tmp", 1);
        fgpu_config_load(&c);
        CHECK(c.closed);
        unsetenv("TESSERA_FGPU_CONFIG");
        unsetenv("CUDA_DEVICE_MEMORY_LIMIT");
        unsetenv("TESSERA_FGPU_REGION");
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_sizes),       TEST(test_file_limits_per_device), TEST(test_malformed_fails_closed),
                TEST(test_environment), TEST(test_file_beats_environment), { 0 },
        };
        return test_main(tests);
}
