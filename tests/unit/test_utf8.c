/* test_utf8.c - one UTF-8 sequence at a time (common/utf8.c): what is
 * valid, what jansson would refuse, and sequences cut off by the length. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/utf8.h"

#define SEQ(s) utf8_seq_len((const unsigned char *)(s), sizeof(s) - 1)

static void test_valid_sequences(void)
{
        CHECK_INTEQ(SEQ("a"), 1);
        CHECK_INTEQ(SEQ("\xc3\xa9"), 2);         /* é */
        CHECK_INTEQ(SEQ("\xe2\x82\xac"), 3);     /* € */
        CHECK_INTEQ(SEQ("\xf0\x9f\x98\x80"), 4); /* U+1F600 */
        CHECK_INTEQ(SEQ("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF, the last */
        CHECK_INTEQ(SEQ("\xc3\xa9x"), 2);        /* only the first sequence */
}

static void test_refused_sequences(void)
{
        CHECK_INTEQ(SEQ("\x80"), 0);             /* a lone continuation byte */
        CHECK_INTEQ(SEQ("\xc0\xae"), 0);         /* overlong '.' */
        CHECK_INTEQ(SEQ("\xe0\x80\xae"), 0);     /* overlong, 3 bytes */
        CHECK_INTEQ(SEQ("\xf0\x80\x80\xae"), 0); /* overlong, 4 bytes */
        CHECK_INTEQ(SEQ("\xed\xa0\x80"), 0);     /* a surrogate */
        CHECK_INTEQ(SEQ("\xf4\x90\x80\x80"), 0); /* past U+10FFFF */
        CHECK_INTEQ(SEQ("\xff"), 0);
        CHECK_INTEQ(SEQ("\xc3x"), 0); /* not a continuation */
}

static void test_cut_by_the_length(void)
{
        CHECK_INTEQ(utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 2), 0);
        CHECK_INTEQ(utf8_seq_len((const unsigned char *)"\xc3\xa9", 1), 0);
        CHECK_INTEQ(utf8_seq_len((const unsigned char *)"\xc3\0", 2), 0); /* a NUL ends it */
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_valid_sequences),
                TEST(test_refused_sequences),
                TEST(test_cut_by_the_length),
                { 0 },
        };
        return test_main(tests);
}
