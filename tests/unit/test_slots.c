/* test_slots.c - resource slot values as a user writes them. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/slots.h"

/* Parse s for slot name; return the value or -1 on error. */
static int64_t parse(const char *name, const char *s)
{
        struct tess_error *err = NULL;
        int64_t v = -1;

        if (slot_parse_string(name, s, &v, &err) < 0) {
                CHECK(err && err->code == EINVAL && err->msg && *err->msg);
                tess_error_free(err);
                return -1;
        }
        CHECK(err == NULL);
        return v;
}

/* Parse a JSON text (a single value) through slot_parse_value. */
static int64_t parse_json(const char *name, const char *text)
{
        struct tess_error *err = NULL;
        json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
        int64_t v = -1;

        CHECK(j != NULL);
        if (slot_parse_value(name, j, &v, &err) < 0) {
                CHECK(err && err->code == EINVAL);
                v = -1;
        }
        tess_error_free(err);
        json_decref(j);
        return v;
}

/* The error message of a failing parse, for checking it names the problem. */
static bool parse_error_mentions(const char *name, const char *s, const char *needle)
{
        struct tess_error *err = NULL;
        int64_t v;
        bool ok;

        if (slot_parse_string(name, s, &v, &err) >= 0)
                return false;
        ok = strstr(err->msg, needle) != NULL;
        if (!ok)
                printf("# message was: %s\n", err->msg);
        tess_error_free(err);
        return ok;
}

static void test_slots_memory_sizes(void)
{
        CHECK_INTEQ(parse("mem", "4g"), 4LL << 30);
        CHECK_INTEQ(parse("mem", "4G"), 4LL << 30);
        CHECK_INTEQ(parse("mem", "512m"), 512LL << 20);
        CHECK_INTEQ(parse("mem", "1.5GiB"), 3LL << 29);
        CHECK_INTEQ(parse("mem", "1.5gb"), 3LL << 29);
        CHECK_INTEQ(parse("mem", "1k"), 1024);
        CHECK_INTEQ(parse("mem", "2t"), 2LL << 40);
        CHECK_INTEQ(parse("mem", "1073741824"), 1073741824);
        CHECK_INTEQ(parse("mem", "100b"), 100);
        CHECK_INTEQ(parse("mem", "0"), 0);
        CHECK_INTEQ(parse("mem", " 8g"), 8LL << 30);
        CHECK_INTEQ(parse("mem", "+1m"), 1 << 20);
        /* bytes cannot be split */
        CHECK_INTEQ(parse("mem", "0.5"), -1);
        CHECK_INTEQ(parse("mem", "1.0001k"), -1);
        CHECK_INTEQ(parse("mem", "4x"), -1);
        CHECK_INTEQ(parse("mem", "4gx"), -1);
        CHECK_INTEQ(parse("mem", "g"), -1);
        CHECK_INTEQ(parse("mem", ""), -1);
        CHECK_INTEQ(parse("mem", "1.2.3"), -1);
        CHECK_INTEQ(parse("mem", "99999999999e"), -1); /* overflows int64 */
}

static void test_slots_counts_and_fractions(void)
{
        CHECK_INTEQ(parse("cpu", "2"), 2000);
        CHECK_INTEQ(parse("cpu", "0.5"), 500);
        CHECK_INTEQ(parse("cpu", "0.001"), 1);
        CHECK_INTEQ(parse("cpu", "1.500000"), 1500); /* trailing zeros beyond the quantum are fine */
        CHECK_INTEQ(parse("cpu", "0.0005"), -1);
        CHECK_INTEQ(parse("cpu", ".5"), 500); /* as Python's Decimal */
        CHECK_INTEQ(parse("cpu", "."), -1);
        CHECK_INTEQ(parse("cpu", "5."), -1);
        CHECK_INTEQ(parse("cpu", "abc"), -1);
        CHECK_INTEQ(parse("cpu", "1 "), -1);
        CHECK_INTEQ(parse("cuda.shares", "0.5"), 50);
        CHECK_INTEQ(parse("cuda.shares", "0.25"), 25);
        CHECK_INTEQ(parse("cuda.shares", "0.005"), -1);
        CHECK(parse_error_mentions("cuda.shares", "0.005", "quantum"));
        CHECK_INTEQ(parse("cuda.device", "2"), 2);
        CHECK_INTEQ(parse("cuda.device", "0.5"), -1);
        /* unknown (agent-advertised) slots count in 1/1000 */
        CHECK_INTEQ(parse("rocm.device", "1.5"), 1500);
}

static void test_slots_infinity_and_negative(void)
{
        CHECK_INTEQ(parse("cpu", "Infinity"), SLOT_INFINITY);
        CHECK_INTEQ(parse("mem", "infinity"), SLOT_INFINITY);
        CHECK_INTEQ(parse("mem", "inf"), SLOT_INFINITY);
        CHECK_INTEQ(parse("cpu", "-1"), -1);
        CHECK(parse_error_mentions("cpu", "-1", "negative"));
        CHECK(parse_error_mentions("mem", "-4g", "negative"));
        CHECK_INTEQ(parse("cpu", "-Infinity"), -1);
        CHECK_INTEQ(parse_json("cpu", "-1"), -1);
        CHECK_INTEQ(parse_json("cpu", "-0.5"), -1);
        CHECK_INTEQ(parse("cpu", "9223372036854775807"), -1); /* too large once scaled */
        /* memory is parsed in milli-bytes, so it tops out near 9.2e15 bytes */
        CHECK_INTEQ(parse("mem", "8p"), 8LL << 50);
        CHECK_INTEQ(parse("mem", "9223372036854775807"), -1);
        CHECK(parse_error_mentions("mem", "9223372036854775807", "too large"));
}

static void test_slots_json_values(void)
{
        CHECK_INTEQ(parse_json("cpu", "0.5"), 500);
        CHECK_INTEQ(parse_json("cpu", "2"), 2000);
        CHECK_INTEQ(parse_json("cpu", "\"2\""), 2000);
        CHECK_INTEQ(parse_json("cpu", "0.1"), 100);        /* 0.1 is inexact as a double */
        CHECK_INTEQ(parse_json("cuda.shares", "0.3"), 30);
        CHECK_INTEQ(parse_json("cuda.shares", "0.005"), -1);
        CHECK_INTEQ(parse_json("mem", "1073741824"), 1073741824);
        CHECK_INTEQ(parse_json("mem", "\"4g\""), 4LL << 30);
        CHECK_INTEQ(parse_json("mem", "1e30"), -1);
        CHECK_INTEQ(parse_json("cpu", "true"), -1);
        CHECK_INTEQ(parse_json("cpu", "null"), -1);
        CHECK_INTEQ(parse_json("cpu", "[1]"), -1);
        CHECK_INTEQ(parse_json("cpu", "\"Infinity\""), SLOT_INFINITY);
}

static void check_round_trip(const char *name, const char *text, const char *canonical)
{
        char out[64];
        int64_t v = parse(name, text);

        CHECK(v >= 0);
        CHECK_STREQ(slot_format(name, v, out, sizeof(out)), canonical);
        CHECK_INTEQ(parse(name, out), v);
}

static void test_slots_format_round_trip(void)
{
        char out[64];

        check_round_trip("cpu", "2", "2");
        check_round_trip("cpu", "0.5", "0.5");
        check_round_trip("cpu", "1.250", "1.25");
        check_round_trip("cpu", "0.001", "0.001");
        check_round_trip("cpu", "Infinity", "Infinity");
        check_round_trip("cuda.shares", "0.05", "0.05");
        check_round_trip("cuda.shares", "3", "3");
        check_round_trip("mem", "4g", "4294967296");
        check_round_trip("mem", "1.5k", "1536");
        check_round_trip("cuda.device", "8", "8");
        CHECK_STREQ(slot_format_human("mem", 4LL << 30, out, sizeof(out)), "4 GiB");
        CHECK_STREQ(slot_format_human("mem", 3LL << 29, out, sizeof(out)), "1.5 GiB");
        CHECK_STREQ(slot_format_human("mem", 100, out, sizeof(out)), "100 B");
        CHECK_STREQ(slot_format_human("cpu", 2500, out, sizeof(out)), "2.5");
        CHECK_STREQ(slot_format_human("cpu", SLOT_INFINITY, out, sizeof(out)), "inf");
}

static void test_slots_from_json_only_known(void)
{
        struct tess_error *err = NULL;
        struct slots s;
        json_t *j = json_loads("{\"cpu\": 0.5, \"mem\": \"4g\", \"cuda.shares\": \"0.5\"}", 0, NULL);

        CHECK_INTEQ(slots_from_json(&s, j, true, &err), 0);
        CHECK_INTEQ(s.n, 3);
        CHECK_INTEQ(slots_get(&s, "cpu"), 500);
        CHECK_INTEQ(slots_get(&s, "mem"), 4LL << 30);
        CHECK_INTEQ(slots_get(&s, "cuda.shares"), 50);
        CHECK_INTEQ(slots_get(&s, "cuda.device"), 0);
        CHECK(!slots_has(&s, "cuda.device"));
        json_decref(j);

        j = json_loads("{\"cpu\": 1, \"tpu\": 1}", 0, NULL);
        CHECK(slots_from_json(&s, j, true, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "tpu"));
        err = tess_error_free(err);
        CHECK_INTEQ(slots_from_json(&s, j, false, &err), 0);
        CHECK_INTEQ(slots_get(&s, "tpu"), 1000);
        json_decref(j);

        j = json_loads("[1, 2]", 0, NULL);
        CHECK(slots_from_json(&s, j, false, &err) == -EINVAL);
        err = tess_error_free(err);
        json_decref(j);

        CHECK_INTEQ(slots_from_json(&s, NULL, true, &err), 0);
        CHECK_INTEQ(s.n, 0);

        j = json_loads("{\"cpu\": \"-1\"}", 0, NULL);
        CHECK(slots_from_json(&s, j, true, &err) == -EINVAL);
        err = tess_error_free(err);
        json_decref(j);

        j = json_loads("{\"bad name!\": 1}", 0, NULL);
        CHECK(slots_from_json(&s, j, false, &err) == -EINVAL);
        err = tess_error_free(err);
        json_decref(j);
}

static void test_slots_text_round_trip(void)
{
        struct tess_error *err = NULL;
        struct slots s, back;
        char *text;

        CHECK_INTEQ(slots_from_text(&s, "{\"mem\": \"1.5g\", \"cpu\": \"Infinity\", \"cuda.shares\": 2.5}", &err),
                    0);
        text = slots_to_text(&s);
        CHECK_STREQ(text, "{\"cpu\":\"Infinity\",\"cuda.shares\":\"2.5\",\"mem\":\"1610612736\"}");
        CHECK_INTEQ(slots_from_text(&back, text, &err), 0);
        CHECK_INTEQ(back.n, 3);
        for (int i = 0; i < s.n; i++)
                CHECK_INTEQ(slots_get(&back, s.s[i].name), s.s[i].value);
        free(text);

        CHECK_INTEQ(slots_from_text(&s, NULL, &err), 0);
        CHECK_INTEQ(s.n, 0);
        CHECK_INTEQ(slots_from_text(&s, "", &err), 0);
        CHECK_INTEQ(slots_from_text(&s, "{}", &err), 0);
        CHECK_INTEQ(s.n, 0);
        text = slots_to_text(&s);
        CHECK_STREQ(text, "{}");
        free(text);
        CHECK(slots_from_text(&s, "{not json", &err) == -EINVAL);
        err = tess_error_free(err);
}

static void test_slots_set_limits(void)
{
        struct tess_error *err = NULL;
        struct slots s;
        char name[16];

        slots_init(&s);
        for (int i = 0; i < SLOTS_MAX; i++) {
                snprintf(name, sizeof(name), "s%d", i);
                CHECK_INTEQ(slots_set(&s, name, i, &err), 0);
        }
        CHECK(slots_set(&s, "one.too.many", 1, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(slots_set(&s, "s3", 42, &err), 0); /* updating an existing one is fine */
        CHECK_INTEQ(slots_get(&s, "s3"), 42);
        CHECK_INTEQ(s.n, SLOTS_MAX);
        slots_init(&s);
        CHECK(slots_set(&s, "", 1, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(slots_set(&s, "0123456789012345678901234567890123", 1, &err) == -EINVAL);
        err = tess_error_free(err);
}

static void test_slots_add_saturates(void)
{
        struct tess_error *err = NULL;
        struct slots a, b;

        slots_init(&a);
        slots_init(&b);
        slots_set(&a, "cpu", 1000, NULL);
        slots_set(&a, "mem", INT64_MAX - 10, NULL);
        slots_set(&b, "cpu", 500, NULL);
        slots_set(&b, "mem", 100, NULL);
        slots_set(&b, "cuda.shares", SLOT_INFINITY, NULL);
        CHECK_INTEQ(slots_add(&a, &b, &err), 0);
        CHECK_INTEQ(slots_get(&a, "cpu"), 1500);
        CHECK_INTEQ(slots_get(&a, "mem"), SLOT_INFINITY);
        CHECK_INTEQ(slots_get(&a, "cuda.shares"), SLOT_INFINITY);

        slots_init(&b);
        slots_set(&b, "cpu", 1, NULL);
        slots_set(&a, "cpu", SLOT_INFINITY, NULL);
        CHECK_INTEQ(slots_add(&a, &b, &err), 0);
        CHECK_INTEQ(slots_get(&a, "cpu"), SLOT_INFINITY);
        CHECK(err == NULL);
}

static void test_slots_fit(void)
{
        struct slots req, lim;
        const char *which = NULL;

        slots_init(&req);
        slots_init(&lim);
        slots_set(&req, "cpu", 2000, NULL);
        slots_set(&req, "mem", 4LL << 30, NULL);
        slots_set(&lim, "cpu", 2000, NULL);
        CHECK(slots_fit(&req, &lim, true, &which));
        CHECK(!slots_fit(&req, &lim, false, &which));
        CHECK_STREQ(which, "mem");
        slots_set(&lim, "mem", (4LL << 30) - 1, NULL);
        which = NULL;
        CHECK(!slots_fit(&req, &lim, true, &which));
        CHECK_STREQ(which, "mem");
        slots_set(&lim, "mem", SLOT_INFINITY, NULL);
        CHECK(slots_fit(&req, &lim, false, NULL));
        slots_set(&req, "cpu", 2001, NULL);
        CHECK(!slots_fit(&req, &lim, true, &which));
        CHECK_STREQ(which, "cpu");
        slots_set(&req, "cpu", SLOT_INFINITY, NULL);
        slots_set(&lim, "cpu", SLOT_INFINITY, NULL);
        CHECK(slots_fit(&req, &lim, false, NULL));
        /* an empty request fits anything */
        slots_init(&req);
        slots_init(&lim);
        CHECK(slots_fit(&req, &lim, false, NULL));
}

static void test_slots_types(void)
{
        CHECK(slot_type_find("cpu") != NULL);
        CHECK(slot_type_find("mem")->unit == SLOT_UNIT_BYTES);
        CHECK(slot_type_find("nope") == NULL);
        CHECK_INTEQ(slot_scale("cpu"), 1000);
        CHECK_INTEQ(slot_scale("cuda.shares"), 100);
        CHECK_INTEQ(slot_scale("cuda.device"), 1);
        CHECK_INTEQ(slot_scale("mem"), 1);
        CHECK_INTEQ(slot_scale("whatever"), 1000);
}

static const struct test tests[] = {
        TEST(test_slots_memory_sizes),
        TEST(test_slots_counts_and_fractions),
        TEST(test_slots_infinity_and_negative),
        TEST(test_slots_json_values),
        TEST(test_slots_format_round_trip),
        TEST(test_slots_from_json_only_known),
        TEST(test_slots_text_round_trip),
        TEST(test_slots_set_limits),
        TEST(test_slots_add_saturates),
        TEST(test_slots_fit),
        TEST(test_slots_types),
        {},
};

int main(void)
{
        return test_main(tests);
}
