/* mem_hooks.c - every allocation family charged against the container's
 * limit on its device before the driver is asked (check and charge in one
 * step under the region's lock), the charge taken back if the driver
 * fails, and refunded on free; and the memory the device reports, as the
 * limit and the container's use.
 *
 * Device of an allocation: the current context's, except cuMemCreate's
 * (its location).  Arrays are charged their texel bytes.  Without a limit
 * every wrapper is the real call, after one branch. */
#include "common/compat.h"

#include "fgpu/hook.h"
#include "fgpu/mem_hooks.h"

CUresult (*real_cuMemAlloc_v2)(CUdeviceptr *, size_t);
CUresult (*real_cuMemAllocPitch_v2)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
CUresult (*real_cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
CUresult (*real_cuMemFree_v2)(CUdeviceptr);
CUresult (*real_cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
CUresult (*real_cuMemAllocAsync_ptsz)(CUdeviceptr *, size_t, CUstream);
CUresult (*real_cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult (*real_cuMemAllocFromPoolAsync_ptsz)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult (*real_cuMemFreeAsync)(CUdeviceptr, CUstream);
CUresult (*real_cuMemFreeAsync_ptsz)(CUdeviceptr, CUstream);
CUresult (*real_cuMemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
CUresult (*real_cuMemRelease)(CUmemGenericAllocationHandle);
CUresult (*real_cuArrayCreate_v2)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
CUresult (*real_cuArray3DCreate_v2)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
CUresult (*real_cuArrayDestroy)(CUarray);
CUresult (*real_cuMipmappedArrayCreate)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned int);
CUresult (*real_cuMipmappedArrayDestroy)(CUmipmappedArray);
CUresult (*real_cuMemGetInfo_v2)(size_t *, size_t *);
CUresult (*real_cuDeviceTotalMem_v2)(size_t *, CUdevice);

#define REAL_OR_MISSING(fn)                          \
        do {                                         \
                fgpu_init();                         \
                if (!real_##fn)                      \
                        return CUDA_ERROR_NOT_FOUND; \
        } while (0)

/* Charge, allocate, record; undo the charge if the driver fails. */
#define CHARGED(kind, dev, bytes, key_expr, call)                           \
        do {                                                                \
                int d_ = (dev);                                             \
                uint64_t b_ = (bytes);                                      \
                if (d_ < 0)                                                 \
                        return CUDA_ERROR_INVALID_CONTEXT;                  \
                CUresult c_ = fgpu_charge(d_, b_);                          \
                if (c_ != CUDA_SUCCESS)                                     \
                        return c_;                                          \
                CUresult r_ = (call);                                       \
                if (r_ == CUDA_SUCCESS)                                     \
                        fgpu_alloc_add(kind, (uint64_t)(key_expr), d_, b_); \
                else                                                        \
                        fgpu_refund(d_, b_);                                \
                return r_;                                                  \
        } while (0)

/* Free through the driver, then refund what was charged.  The record is
 * taken out of the table before the driver is asked: once the driver has
 * freed, another thread may be handed the same address and record its own
 * charge under it, which a later removal would take for ours. */
#define FREED(kind, key, call)                                                        \
        do {                                                                          \
                int d_;                                                               \
                uint64_t size_;                                                       \
                bool had_ = fgpu.active && fgpu_alloc_remove(kind, key, &d_, &size_); \
                CUresult r_ = (call);                                                 \
                if (had_ && r_ == CUDA_SUCCESS)                                       \
                        fgpu_refund(d_, size_);                                       \
                else if (had_)                                                        \
                        fgpu_alloc_add(kind, key, d_, size_);                         \
                return r_;                                                            \
        } while (0)

FGPU_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        REAL_OR_MISSING(cuMemAlloc_v2);
        if (!fgpu.active)
                return real_cuMemAlloc_v2(dptr, bytesize);
        CHARGED(FGPU_PTR, fgpu_current_device(), bytesize, *dptr, real_cuMemAlloc_v2(dptr, bytesize));
}

FGPU_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                        unsigned int elem)
{
        REAL_OR_MISSING(cuMemAllocPitch_v2);
        if (!fgpu.active)
                return real_cuMemAllocPitch_v2(dptr, pitch, width, height, elem);
        /* the pitch is the driver's choice: charge the row rounded up to 512 bytes, the largest alignment */
        uint64_t bytes = ((uint64_t)width + 511) / 512 * 512 * height;
        CHARGED(FGPU_PTR, fgpu_current_device(), bytes, *dptr,
                real_cuMemAllocPitch_v2(dptr, pitch, width, height, elem));
}

FGPU_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
        REAL_OR_MISSING(cuMemAllocManaged);
        if (!fgpu.active)
                return real_cuMemAllocManaged(dptr, bytesize, flags);
        CHARGED(FGPU_PTR, fgpu_current_device(), bytesize, *dptr, real_cuMemAllocManaged(dptr, bytesize, flags));
}

FGPU_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
        REAL_OR_MISSING(cuMemFree_v2);
        FREED(FGPU_PTR, dptr, real_cuMemFree_v2(dptr));
}

FGPU_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
        REAL_OR_MISSING(cuMemAllocAsync);
        if (!fgpu.active)
                return real_cuMemAllocAsync(dptr, bytesize, stream);
        CHARGED(FGPU_PTR, fgpu_current_device(), bytesize, *dptr, real_cuMemAllocAsync(dptr, bytesize, stream));
}

FGPU_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
        REAL_OR_MISSING(cuMemAllocAsync_ptsz);
        if (!fgpu.active)
                return real_cuMemAllocAsync_ptsz(dptr, bytesize, stream);
        CHARGED(FGPU_PTR, fgpu_current_device(), bytesize, *dptr, real_cuMemAllocAsync_ptsz(dptr, bytesize, stream));
}

FGPU_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream)
{
        REAL_OR_MISSING(cuMemAllocFromPoolAsync);
        if (!fgpu.active)
                return real_cuMemAllocFromPoolAsync(dptr, bytesize, pool, stream);
        CHARGED(FGPU_PTR, fgpu_current_device(), bytesize, *dptr,
                real_cuMemAllocFromPoolAsync(dptr, bytesize, pool, stream));
}

FGPU_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                  CUstream stream)
{
        REAL_OR_MISSING(cuMemAllocFromPoolAsync_ptsz);
        if (!fgpu.active)
                return real_cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, stream);
        CHARGED(FGPU_PTR, fgpu_current_device(), bytesize, *dptr,
                real_cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, stream));
}

FGPU_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
        REAL_OR_MISSING(cuMemFreeAsync);
        FREED(FGPU_PTR, dptr, real_cuMemFreeAsync(dptr, stream));
}

FGPU_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
        REAL_OR_MISSING(cuMemFreeAsync_ptsz);
        FREED(FGPU_PTR, dptr, real_cuMemFreeAsync_ptsz(dptr, stream));
}

FGPU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                 unsigned long long flags)
{
        REAL_OR_MISSING(cuMemCreate);
        if (!fgpu.active)
                return real_cuMemCreate(handle, size, prop, flags);
        int d = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : fgpu_current_device();
        if (prop && prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE && prop->location.type != 0)
                return real_cuMemCreate(handle, size, prop, flags); /* host memory: not the GPU's */
        CHARGED(FGPU_HANDLE, d, size, *handle, real_cuMemCreate(handle, size, prop, flags));
}

FGPU_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
        REAL_OR_MISSING(cuMemRelease);
        FREED(FGPU_HANDLE, handle, real_cuMemRelease(handle));
}

/* Bytes of one element of an array format, times its channels. */
static uint64_t texel_bytes(CUarray_format f, unsigned channels)
{
        unsigned b;
        switch (f) {
        case CU_AD_FORMAT_UNSIGNED_INT8:
        case CU_AD_FORMAT_SIGNED_INT8:
                b = 1;
                break;
        case CU_AD_FORMAT_UNSIGNED_INT16:
        case CU_AD_FORMAT_SIGNED_INT16:
        case CU_AD_FORMAT_HALF:
                b = 2;
                break;
        default:
                b = 4;
                break; /* 32-bit formats; wider block formats are rare and compressed */
        }
        return (uint64_t)b * (channels ? channels : 1);
}

static uint64_t array_bytes(size_t w, size_t h, size_t depth, CUarray_format f, unsigned channels)
{
        return (uint64_t)(w ? w : 1) * (h ? h : 1) * (depth ? depth : 1) * texel_bytes(f, channels);
}

FGPU_EXPORT CUresult cuArrayCreate_v2(CUarray *arr, const CUDA_ARRAY_DESCRIPTOR *desc)
{
        REAL_OR_MISSING(cuArrayCreate_v2);
        if (!fgpu.active || !desc)
                return real_cuArrayCreate_v2(arr, desc);
        CHARGED(FGPU_ARRAY, fgpu_current_device(),
                array_bytes(desc->Width, desc->Height, 1, desc->Format, desc->NumChannels), (uintptr_t)*arr,
                real_cuArrayCreate_v2(arr, desc));
}

FGPU_EXPORT CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
        REAL_OR_MISSING(cuArray3DCreate_v2);
        if (!fgpu.active || !desc)
                return real_cuArray3DCreate_v2(arr, desc);
        CHARGED(FGPU_ARRAY, fgpu_current_device(),
                array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels), (uintptr_t)*arr,
                real_cuArray3DCreate_v2(arr, desc));
}

FGPU_EXPORT CUresult cuArrayDestroy(CUarray arr)
{
        REAL_OR_MISSING(cuArrayDestroy);
        FREED(FGPU_ARRAY, (uintptr_t)arr, real_cuArrayDestroy(arr));
}

FGPU_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc,
                                            unsigned int levels)
{
        REAL_OR_MISSING(cuMipmappedArrayCreate);
        if (!fgpu.active || !desc)
                return real_cuMipmappedArrayCreate(arr, desc, levels);
        /* every level halves each side (down to 1): the levels' sum, which in 1D is
         * nearly twice level 0 */
        uint64_t bytes = 0;
        for (unsigned l = 0; l < (levels ? levels : 1) && l < 64; l++)
                bytes += array_bytes(desc->Width >> l, desc->Height >> l, desc->Depth >> l, desc->Format,
                                     desc->NumChannels);
        CHARGED(FGPU_ARRAY, fgpu_current_device(), bytes, (uintptr_t)*arr,
                real_cuMipmappedArrayCreate(arr, desc, levels));
}

FGPU_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray arr)
{
        REAL_OR_MISSING(cuMipmappedArrayDestroy);
        FREED(FGPU_ARRAY, (uintptr_t)arr, real_cuMipmappedArrayDestroy(arr));
}

/* ---- what the device reports ---- */

bool fgpu_seen_memory(int d, uint64_t real_free, uint64_t real_total, uint64_t *free, uint64_t *total,
                      uint64_t *used)
{
        uint64_t limit = fgpu_memory_limit(d);

        if (d < 0)
                return false;
        if (fgpu.config.closed) { /* nothing may be allocated: nothing is free */
                *total = limit ? limit : real_total;
                *free = 0;
                *used = *total;
                return true;
        }
        if (!limit)
                return false;
        uint64_t u = fgpu.region ? fgpu_region_used_live(fgpu.region, d) : 0;
        uint64_t left = u < limit ? limit - u : 0;
        *total = limit;
        *used = u;
        *free = left < real_free ? left : real_free;
        return true;
}

FGPU_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
        REAL_OR_MISSING(cuMemGetInfo_v2);
        CUresult r = real_cuMemGetInfo_v2(free, total);
        uint64_t f, t, u;
        if (r == CUDA_SUCCESS && fgpu.active && free && total &&
            fgpu_seen_memory(fgpu_current_device(), *free, *total, &f, &t, &u)) {
                *free = (size_t)f;
                *total = (size_t)t;
        }
        return r;
}

FGPU_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        REAL_OR_MISSING(cuDeviceTotalMem_v2);
        CUresult r = real_cuDeviceTotalMem_v2(bytes, dev);
        if (r == CUDA_SUCCESS && fgpu.active && bytes && fgpu_memory_limit((int)dev))
                *bytes = (size_t)fgpu_memory_limit((int)dev);
        return r;
}

#define SYM(n)                                           \
        {                                                \
#n, (void *)n, (void **)&real_##n, false \
        }
struct fgpu_symbol fgpu_mem_symbols[] = {
        SYM(cuMemAlloc_v2),
        SYM(cuMemAllocPitch_v2),
        SYM(cuMemAllocManaged),
        SYM(cuMemFree_v2),
        SYM(cuMemAllocAsync),
        SYM(cuMemAllocAsync_ptsz),
        SYM(cuMemAllocFromPoolAsync),
        SYM(cuMemAllocFromPoolAsync_ptsz),
        SYM(cuMemFreeAsync),
        SYM(cuMemFreeAsync_ptsz),
        SYM(cuMemCreate),
        SYM(cuMemRelease),
        SYM(cuArrayCreate_v2),
        SYM(cuArray3DCreate_v2),
        SYM(cuArrayDestroy),
        SYM(cuMipmappedArrayCreate),
        SYM(cuMipmappedArrayDestroy),
        SYM(cuMemGetInfo_v2),
        SYM(cuDeviceTotalMem_v2),
        { 0 },
};
