# fgpu-probe.py - what a program in a session sees of its GPU through the
# CUDA driver and NVML (ctypes, no CUDA toolkit needed), and whether
# allocations of given sizes succeed.  Prints one "key value" per line:
#   cuda_total, cuda_free (cuMemGetInfo), device_total (cuDeviceTotalMem),
#   nvml_total (nvmlDeviceGetMemoryInfo), alloc_<GiB> (the CUresult).
# usage: python3 fgpu-probe.py [GIB...]
import ctypes
import sys

cuda = ctypes.CDLL("libcuda.so.1")
size = ctypes.c_size_t
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cuda.cuInit(0) == 0
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
free, total, dtotal = size(), size(), size()
assert cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0
assert cuda.cuDeviceTotalMem_v2(ctypes.byref(dtotal), dev) == 0
print("cuda_total", total.value)
print("cuda_free", free.value)
print("device_total", dtotal.value)


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


nvml = ctypes.CDLL("libnvidia-ml.so.1")
handle, mem = ctypes.c_void_p(), Memory()
assert nvml.nvmlInit_v2() == 0
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
assert nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) == 0
print("nvml_total", mem.total)

for gib in sys.argv[1:]:
    ptr = ctypes.c_ulonglong()
    r = cuda.cuMemAlloc_v2(ctypes.byref(ptr), size(int(float(gib) * 2**30)))
    print("alloc_%s" % gib, r)
    if r == 0:
        cuda.cuMemFree_v2(ptr)
