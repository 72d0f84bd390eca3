/* real.c - the dynamic linker's side: the real dlsym, and ours.
 *
 * Programs and the CUDA runtime that dlopen libcuda or libnvidia-ml and
 * look symbols up with dlsym would bypass the LD_PRELOADed wrappers; our
 * dlsym hands them our wrapper for every symbol we wrap (when some limit
 * is set and the real library has it).  Everything else goes to the real
 * dlsym as a tail call, so that glibc still sees the original caller:
 * RTLD_NEXT lookups of other interposers keep their meaning. */
#include "common/compat.h"

#include <dlfcn.h>

#include "fgpu/hook.h"

typedef void *(*dlsym_fn)(void *, const char *);

static dlsym_fn real_dlsym_ptr;

static dlsym_fn real_dlsym(void)
{
        dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);
        /* glibc 2.34 moved dlsym into libc; before, its version is the
         * architecture's first: 2.2.5 on x86-64, 2.17 on aarch64 */
        static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17" };
        for (size_t i = 0; !f && i < ARRAY_SIZE(versions); i++) {
                f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
                if (f)
                        __atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
        }
        return f;
}

void *fgpu_real_dlsym(void *handle, const char *name)
{
        dlsym_fn f = real_dlsym();
        return f ? f(handle, name) : NULL;
}

static bool may_be_ours(const char *s)
{
        return s && ((s[0] == 'c' && s[1] == 'u') || (s[0] == 'n' && s[1] == 'v' && s[2] == 'm' && s[3] == 'l'));
}

FGPU_EXPORT void *dlsym(void *restrict handle, const char *restrict symbol)
{
        dlsym_fn f = real_dlsym();

        if (!f) /* no glibc dlsym to hand over to: nothing can be found */
                return NULL;
        if (handle == RTLD_NEXT || !may_be_ours(symbol))
                return f(handle, symbol); /* a tail call: the caller is still the caller */
        fgpu_init();
        struct fgpu_symbol *s = fgpu.active ? fgpu_symbol_find(symbol) : NULL;
        void *p = f(handle, symbol);
        if (s && p && *s->real)
                return s->wrapper;
        return p;
}
