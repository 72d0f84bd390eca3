/* fuzz_authorization.c - the headers a client sends before it is
 * authenticated: line 1 Authorization, line 2 the date, line 3 the API
 * version, line 4 the Content-Type. */
#include "common/compat.h"

#include "common/sign.h"
#include "common/timeutil.h"
#include "fuzz.h"

#define YEAR_10000_USEC (253402300800LL * USEC_PER_SEC)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *line[4] = { 0 }, ymd[9], iso[64], ymd2[9], mime[128], hex[SIGN_HEX_MAX];
        const uint8_t *p = data, *end = data + size;
        struct tess_error *err = NULL;
        struct sign_auth a;
        int64_t usec, back;

        for (int i = 0; i < 4; i++) {
                const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
                line[i] = fuzz_strndup(p, (size_t)((nl ? nl : end) - p));
                p = nl ? nl + 1 : end;
        }
        if (sign_parse_authorization(line[0], &a, &err) == 0) {
                FUZZ_ASSERT(!err && a.access_key[0] && a.signature[0]);
                FUZZ_ASSERT(strlen(a.access_key) < sizeof(a.access_key) && strlen(a.signature) < SIGN_HEX_MAX);
                FUZZ_ASSERT(sign_compute(a.hash, "secret", "GET", "/", line[1], "20250722", "h", "", "v9.20250722", NULL,
                                         hex, &err) == 0);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL);
                err = tess_error_free(err);
        }
        if (time_parse(line[1], &usec, ymd) == 0) {
                FUZZ_ASSERT(strlen(ymd) == 8 && strspn(ymd, "0123456789") == 8);
                if (usec >= 0 && usec < YEAR_10000_USEC) {
                        time_format_iso(usec, iso, sizeof(iso));
                        FUZZ_ASSERT(time_parse(iso, &back, ymd2) == 0 && back == usec);
                }
        }
        if (sign_check_version(line[2], &err) == 0)
                FUZZ_ASSERT(line[2][0] == 'v' && strlen(line[2]) <= 11);
        err = tess_error_free(err);
        sign_mimetype(line[3], mime, sizeof(mime));
        FUZZ_ASSERT(!strchr(mime, ';') && strlen(mime) < sizeof(mime));
        for (int i = 0; i < 4; i++)
                free(line[i]);
        return 0;
}
