/* procaddr.c - cuGetProcAddress and cuGetProcAddress_v2, through which the
 * CUDA runtime (11.3 and later) finds nearly every driver function.  The
 * real one is asked first, so the driver's own choice of version and of
 * per-thread-stream variant stands; if the address it gives is the real
 * function of one of our wrappers, the wrapper is returned instead.  Also
 * the lookup of our symbols by name (dlsym) and by real address. */
#include "common/compat.h"

#include "fgpu/hook.h"

CUresult (*real_cuGetProcAddress)(const char *, void **, int, cuuint64_t);
CUresult (*real_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

struct fgpu_symbol *const fgpu_symbol_tables[] = { fgpu_mem_symbols, fgpu_launch_symbols, fgpu_nvml_symbols,
                                                   fgpu_procaddr_symbols, NULL };

struct fgpu_symbol *fgpu_symbol_find(const char *name)
{
        for (struct fgpu_symbol *const *t = fgpu_symbol_tables; *t; t++)
                for (struct fgpu_symbol *s = *t; s->name; s++)
                        if (streq(s->name, name))
                                return s;
        return NULL;
}

struct fgpu_symbol *fgpu_symbol_by_real(void *addr)
{
        for (struct fgpu_symbol *const *t = fgpu_symbol_tables; *t; t++)
                for (struct fgpu_symbol *s = *t; s->name; s++)
                        if (*s->real == addr && !s->nvml)
                                return s;
        return NULL;
}

/* Do we wrap some version of this base name ("cuMemAlloc": cuMemAlloc_v2)? */
static bool wraps_base(const char *symbol)
{
        size_t n = symbol ? strlen(symbol) : 0;
        for (struct fgpu_symbol *const *t = fgpu_symbol_tables; *t && n; t++)
                for (struct fgpu_symbol *s = *t; s->name; s++)
                        if (strncmp(s->name, symbol, n) == 0 && (s->name[n] == '\0' || s->name[n] == '_'))
                                return true;
        return false;
}

static void substitute(const char *symbol, void **pfn)
{
        if (!fgpu.active || !pfn || !*pfn)
                return;
        struct fgpu_symbol *s = fgpu_symbol_by_real(*pfn);
        if (s) {
                *pfn = s->wrapper;
                return;
        }
        if (wraps_base(symbol))
                fgpu_log("cuGetProcAddress(%s): the driver's function is not one this hook wraps; passed through",
                         symbol);
}

FGPU_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
        fgpu_init();
        if (!real_cuGetProcAddress)
                return CUDA_ERROR_NOT_FOUND;
        CUresult r = real_cuGetProcAddress(symbol, pfn, version, flags);
        if (r == CUDA_SUCCESS)
                substitute(symbol, pfn);
        return r;
}

FGPU_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                         CUdriverProcAddressQueryResult *status)
{
        fgpu_init();
        if (!real_cuGetProcAddress_v2)
                return CUDA_ERROR_NOT_FOUND;
        CUresult r = real_cuGetProcAddress_v2(symbol, pfn, version, flags, status);
        if (r == CUDA_SUCCESS)
                substitute(symbol, pfn);
        return r;
}

struct fgpu_symbol fgpu_procaddr_symbols[] = {
        { "cuGetProcAddress", (void *)cuGetProcAddress, (void **)&real_cuGetProcAddress, false },
        { "cuGetProcAddress_v2", (void *)cuGetProcAddress_v2, (void **)&real_cuGetProcAddress_v2, false },
        { 0 },
};
