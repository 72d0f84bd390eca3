/* cuda_abi_check.c - src/common/cuda_abi.h against NVIDIA's cuda.h.
 *
 * Built twice (tests/fgpu/fgpu.mk):
 *   cuda_abi_ours     on our header alone;
 *   cuda_abi_nvidia   with -DWITH_NVIDIA_CUDA_H, where a CUDA toolkit is
 *                     installed: cuda.h first (with the driver's own
 *                     internal switch, under which it declares every
 *                     versioned symbol by its exported name), then our
 *                     header's prototypes only, so that the compiler
 *                     rejects any prototype that differs from NVIDIA's.
 * Each prints every constant's value and every struct's size and field
 * offsets the header defines; test_fgpu_hook.c compares the two outputs. */
#ifdef WITH_NVIDIA_CUDA_H
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#define TESS_CUDA_ABI_PROTOTYPES_ONLY 1
#endif
#include "common/cuda_abi.h"

#include <stdio.h>

#define VALUE(name) printf("%s %lld\n", #name, (long long)(name));
#define SIZE(type)  printf("sizeof(%s) %zu\n", #type, sizeof(type));
#define FIELD(type, field) \
        printf("offsetof(%s, %s) %zu size %zu\n", #type, #field, offsetof(type, field), sizeof(((type *)0)->field));

int main(void)
{
        VALUE(CUDA_SUCCESS)
        VALUE(CUDA_ERROR_INVALID_VALUE)
        VALUE(CUDA_ERROR_OUT_OF_MEMORY)
        VALUE(CUDA_ERROR_NOT_INITIALIZED)
        VALUE(CUDA_ERROR_NO_DEVICE)
        VALUE(CUDA_ERROR_INVALID_DEVICE)
        VALUE(CUDA_ERROR_INVALID_IMAGE)
        VALUE(CUDA_ERROR_INVALID_CONTEXT)
        VALUE(CUDA_ERROR_INVALID_HANDLE)
        VALUE(CUDA_ERROR_NOT_FOUND)
        VALUE(CUDA_ERROR_NOT_PERMITTED)
        VALUE(CUDA_ERROR_NOT_SUPPORTED)

        VALUE((uintptr_t)CU_STREAM_LEGACY)
        VALUE((uintptr_t)CU_STREAM_PER_THREAD)

        VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
        VALUE(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)
        VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_PITCH)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)
        VALUE(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
        VALUE(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)
        VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        VALUE(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS)
        VALUE(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
        VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        VALUE(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
        VALUE(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)
        VALUE(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT)
        VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        VALUE(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)
        VALUE(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)
        VALUE(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
        VALUE(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)
        VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)

        VALUE(CU_MEM_ATTACH_GLOBAL)
        VALUE(CU_MEM_ATTACH_HOST)

        VALUE(CU_AD_FORMAT_UNSIGNED_INT8)
        VALUE(CU_AD_FORMAT_UNSIGNED_INT16)
        VALUE(CU_AD_FORMAT_UNSIGNED_INT32)
        VALUE(CU_AD_FORMAT_SIGNED_INT8)
        VALUE(CU_AD_FORMAT_SIGNED_INT16)
        VALUE(CU_AD_FORMAT_SIGNED_INT32)
        VALUE(CU_AD_FORMAT_HALF)
        VALUE(CU_AD_FORMAT_FLOAT)

        VALUE(CU_MEM_LOCATION_TYPE_INVALID)
        VALUE(CU_MEM_LOCATION_TYPE_DEVICE)
        VALUE(CU_MEM_ALLOCATION_TYPE_INVALID)
        VALUE(CU_MEM_ALLOCATION_TYPE_PINNED)
        VALUE(CU_MEM_HANDLE_TYPE_NONE)
        VALUE(CU_MEM_ALLOC_GRANULARITY_MINIMUM)
        VALUE(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        VALUE(CU_EXEC_AFFINITY_TYPE_SM_COUNT)

        VALUE(CU_GET_PROC_ADDRESS_DEFAULT)
        VALUE(CU_GET_PROC_ADDRESS_LEGACY_STREAM)
        VALUE(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        VALUE(CU_GET_PROC_ADDRESS_SUCCESS)
        VALUE(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
        VALUE(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)

        SIZE(CUresult)
        SIZE(CUdevice)
        SIZE(CUdeviceptr)
        SIZE(CUmemGenericAllocationHandle)
        SIZE(cuuint64_t)
        SIZE(CUdevice_attribute)
        SIZE(CUarray_format)
        SIZE(CUdriverProcAddressQueryResult)
        SIZE(CUmemAllocationGranularity_flags)

        SIZE(CUuuid)
        FIELD(CUuuid, bytes)
        SIZE(CUDA_ARRAY_DESCRIPTOR)
        FIELD(CUDA_ARRAY_DESCRIPTOR, Width)
        FIELD(CUDA_ARRAY_DESCRIPTOR, Height)
        FIELD(CUDA_ARRAY_DESCRIPTOR, Format)
        FIELD(CUDA_ARRAY_DESCRIPTOR, NumChannels)
        SIZE(CUDA_ARRAY3D_DESCRIPTOR)
        FIELD(CUDA_ARRAY3D_DESCRIPTOR, Width)
        FIELD(CUDA_ARRAY3D_DESCRIPTOR, Height)
        FIELD(CUDA_ARRAY3D_DESCRIPTOR, Depth)
        FIELD(CUDA_ARRAY3D_DESCRIPTOR, Format)
        FIELD(CUDA_ARRAY3D_DESCRIPTOR, NumChannels)
        FIELD(CUDA_ARRAY3D_DESCRIPTOR, Flags)
        SIZE(CUmemLocation)
        FIELD(CUmemLocation, type)
        FIELD(CUmemLocation, id)
        SIZE(CUmemAllocationProp)
        FIELD(CUmemAllocationProp, type)
        FIELD(CUmemAllocationProp, requestedHandleTypes)
        FIELD(CUmemAllocationProp, location)
        FIELD(CUmemAllocationProp, win32HandleMetaData)
        FIELD(CUmemAllocationProp, allocFlags)
        FIELD(CUmemAllocationProp, allocFlags.compressionType)
        FIELD(CUmemAllocationProp, allocFlags.gpuDirectRDMACapable)
        FIELD(CUmemAllocationProp, allocFlags.usage)
        FIELD(CUmemAllocationProp, allocFlags.reserved)
        SIZE(CUmemPoolProps)
        FIELD(CUmemPoolProps, allocType)
        FIELD(CUmemPoolProps, handleTypes)
        FIELD(CUmemPoolProps, location)
        FIELD(CUmemPoolProps, win32SecurityAttributes)
        FIELD(CUmemPoolProps, maxSize)
        FIELD(CUmemPoolProps, usage)
        FIELD(CUmemPoolProps, reserved)
        SIZE(CUexecAffinityParam)
        FIELD(CUexecAffinityParam, type)
        FIELD(CUexecAffinityParam, param)
        FIELD(CUexecAffinityParam, param.smCount.val)
        SIZE(CUctxCreateParams)
        FIELD(CUctxCreateParams, execAffinityParams)
        FIELD(CUctxCreateParams, numExecAffinityParams)
        FIELD(CUctxCreateParams, cigParams)
        SIZE(CUlaunchConfig)
        FIELD(CUlaunchConfig, gridDimX)
        FIELD(CUlaunchConfig, gridDimY)
        FIELD(CUlaunchConfig, gridDimZ)
        FIELD(CUlaunchConfig, blockDimX)
        FIELD(CUlaunchConfig, blockDimY)
        FIELD(CUlaunchConfig, blockDimZ)
        FIELD(CUlaunchConfig, sharedMemBytes)
        FIELD(CUlaunchConfig, hStream)
        FIELD(CUlaunchConfig, attrs)
        FIELD(CUlaunchConfig, numAttrs)
        return 0;
}
