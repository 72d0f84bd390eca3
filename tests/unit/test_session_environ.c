/* test_session_environ.c - the reserved environment names
 * (common/env_reserved.c) and a session's environment checked by the
 * manager (manager/sessions/session_environ.c): a 400 that names the
 * variable for each reserved name, the others accepted. */
#include "common/compat.h"

#include <jansson.h>

#include "../lib/test.h"
#include "common/env_reserved.h"
#include "manager/sessions/session_environ.h"

static void test_reserved_names(void)
{
        static const char *const reserved[] = {
                "TESSERA_UID", "TESSERA_GID", "TESSERA_PYTHON", "TESSERA_STARTUP_COMMAND", "TESSERA_SESSION_ID",
                "TESSERA_FGPU_REAL_LIBCUDA", "TESSERA_FAKE_CUDA_STATE", "TESSERA_", "BACKENDAI_SESSION_ID",
                "BACKENDAI_KERNEL_ID", "BACKENDAI_CLUSTER_ROLE", "BACKENDAI_CLUSTER_IDX", "BACKENDAI_CLUSTER_HOST",
                "BACKENDAI_CLUSTER_SIZE", "TESSERA_UID=0", "BACKENDAI_KERNEL_ID=x",
        };
        static const char *const allowed[] = {
                "PATH", "HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "MY_VAR", "TESSERA", "tessera_uid",
                "XTESSERA_UID", "BACKENDAI_SESSION_IDX", "BACKENDAI_KERNEL", "BACKENDAI_SOMETHING", "MY_VAR=TESSERA_UID",
        };

        for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
                if (!env_reserved(reserved[i]))
                        test_fail(__FILE__, __LINE__, "'%s' is not reserved", reserved[i]);
        for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
                if (env_reserved(allowed[i]))
                        test_fail(__FILE__, __LINE__, "'%s' is reserved", allowed[i]);
}

static void check_bad(const char *json, const char *want_in_message)
{
        json_t *env = json_loads(json, 0, NULL);
        struct tess_error *err = NULL;

        CHECK_INTEQ(session_environ_check(env, "config.environ", &err), -EINVAL);
        CHECK(err && strstr(err->msg, want_in_message));
        if (err && !strstr(err->msg, want_in_message))
                test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", err->msg, want_in_message);
        tess_error_free(err);
        json_decref(env);
}

static void test_environ_check(void)
{
        json_t *env = json_loads("{\"A\": \"1\", \"LD_PRELOAD\": \"/x.so\", \"BACKENDAI_OTHER\": \"\"}", 0, NULL);
        struct tess_error *err = NULL;

        CHECK_INTEQ(session_environ_check(env, "config.environ", &err), 0);
        json_decref(env);
        check_bad("{\"A\": \"1\", \"TESSERA_UID\": \"0\"}", "'config.environ.TESSERA_UID' is reserved");
        check_bad("{\"TESSERA_GID\": \"0\"}", "'config.environ.TESSERA_GID' is reserved");
        check_bad("{\"BACKENDAI_KERNEL_ID\": \"k\"}", "'config.environ.BACKENDAI_KERNEL_ID' is reserved");
        check_bad("{\"A=B\": \"1\"}", "invalid variable name");
        check_bad("{\"\": \"1\"}", "invalid variable name");
        check_bad("{\"A\": 1}", "'config.environ.A' must be a string");
}

static const struct test tests[] = {
        TEST(test_reserved_names),
        TEST(test_environ_check),
        {},
};

int main(void)
{
        return test_main(tests);
}
