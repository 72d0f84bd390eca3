/* fuzz_vfolder_token.c - folder transfer tokens from outside
 * (manager/vfolder/vfolder_token.c): no input crashes the parser; one that parses
 * is a token we made (it round-trips through vf_token_make to the same
 * text) with a clean path.  The first byte picks a key: 0 the fuzzer's
 * known key, so that valid MACs can be reached through the corpus. */
#include "common/compat.h"

#include "fuzz.h"
#include "manager/vfolder/vfolder_token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const unsigned char master[MASTER_KEY_LEN] = "fuzz master key, 32 bytes long..";
        unsigned char key[VF_TOKEN_KEY_LEN];
        struct tess_error *err = NULL;
        struct vf_token t;
        char *in = fuzz_strndup(data, size);

        vf_token_key(master, key);
        if (vf_token_parse(key, in, 0, &t, &err) == 0) {
                char *again = vf_token_make(key, &t);
                FUZZ_ASSERT(streq(again, in));
                FUZZ_ASSERT(t.op >= VFT_UPLOAD && t.op <= VFT_ARCHIVE && strlen(t.path) <= BENEATH_PATH_MAX);
                free(again);
        } else {
                FUZZ_ASSERT(err && err->code == EACCES);
                tess_error_free(err);
        }
        free(in);
        return 0;
}
