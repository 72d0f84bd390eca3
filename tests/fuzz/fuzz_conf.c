/* fuzz_conf.c - configuration files (after git's oss-fuzz/fuzz-config.c):
 * a table with an option of every type; whatever parses must print and
 * parse back to the same values. */
#include "common/compat.h"

#include "common/conf.h"
#include "common/timeutil.h"
#include "fuzz.h"

struct fz {
        char *name, *path;
        uint64_t count, bounded, size;
        bool flag;
        int64_t delay;
};

#define FZ struct fz
static const struct conf_opt opts[] = {
        CONF_OPT("name", CONF_T_STR, FZ, name, "x", 0, 0, false, "a string"),
        CONF_OPT("path", CONF_T_STR, FZ, path, NULL, 0, 0, false, NULL),
        CONF_OPT("count", CONF_T_U64, FZ, count, "1", 0, 0, false, NULL),
        CONF_OPT("bounded", CONF_T_U64, FZ, bounded, "5", 2, 1000, true, NULL),
        CONF_OPT("size", CONF_T_SIZE, FZ, size, "1m", 0, 0, false, NULL),
        CONF_OPT("flag", CONF_T_BOOL, FZ, flag, "false", 0, 0, true, NULL),
        CONF_OPT("delay", CONF_T_USEC, FZ, delay, "30s", 0, 0, true, NULL),
        {},
};
#undef FZ

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fz c = { 0 }, back = { 0 };
        struct tess_error *err = NULL;
        struct buf out = BUF_INIT;

        FUZZ_ASSERT(conf_defaults(opts, &c, NULL) == 0 && conf_defaults(opts, &back, NULL) == 0);
        if (conf_parse(opts, &c, "fuzz.conf", (const char *)data, size, &err) == 0) {
                conf_print(opts, &c, &out);
                FUZZ_ASSERT(conf_parse(opts, &back, "printed", out.data, out.len, &err) == 0);
                FUZZ_ASSERT(streq(back.name, c.name) && streq(back.path, c.path ? c.path : ""));
                FUZZ_ASSERT(back.count == c.count && back.bounded == c.bounded && back.size == c.size);
                FUZZ_ASSERT(back.flag == c.flag && back.bounded >= 2 && back.bounded <= 1000);
                /* --print-config writes whole seconds (tests/unit/test_conf.c) */
                FUZZ_ASSERT(back.delay / USEC_PER_SEC == c.delay / USEC_PER_SEC && c.delay >= 0);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "fuzz.conf", 9) == 0);
                err = tess_error_free(err);
        }
        buf_release(&out);
        conf_release(opts, &c);
        conf_release(opts, &back);
        return 0;
}
