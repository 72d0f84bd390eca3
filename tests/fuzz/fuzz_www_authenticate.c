/* fuzz_www_authenticate.c - the WWW-Authenticate header of a registry's 401
 * (or of any server a redirect leads to), as the registry client reads it
 * before it asks a token realm. */
#include "common/compat.h"

#include "fuzz.h"
#include "registry/www_authenticate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tess_error *err = NULL;
        struct auth_challenges c;

        if (www_authenticate_parse((const char *)data, size, &c, &err) < 0) {
                FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "WWW-Authenticate: ", 18) == 0);
                tess_error_free(err);
                return 0;
        }
        FUZZ_ASSERT(!err && c.n <= WWW_AUTH_MAX_CHALLENGES);
        for (size_t i = 0; i < c.n; i++) {
                const struct auth_challenge *ch = &c.v[i];
                FUZZ_ASSERT(ch->scheme[0] && !strpbrk(ch->scheme, " \t,=\""));
                FUZZ_ASSERT(ch->n_params <= WWW_AUTH_MAX_PARAMS && !(ch->token68 && ch->n_params));
                FUZZ_ASSERT(auth_challenges_find(&c, ch->scheme) != NULL);
                for (size_t j = 0; j < ch->n_params; j++) {
                        const char *name = ch->params[j].name;
                        FUZZ_ASSERT(name[0] && !strpbrk(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ \t,=\""));
                        FUZZ_ASSERT(auth_challenge_param(ch, name) == ch->params[j].value);
                        FUZZ_ASSERT(strlen(ch->params[j].value) < size);
                }
        }
        auth_challenges_release(&c);
        return 0;
}
