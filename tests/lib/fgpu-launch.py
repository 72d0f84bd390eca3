# fgpu-launch.py - a program in a session that keeps its GPU busy through
# the CUDA driver (ctypes, no CUDA toolkit needed): a context, a module and
# a function, then launches of one full wave (216 blocks of 1024 threads on
# the mock GPU's 108 SMs) for SECONDS.  With the mock plugin's fake driver
# nothing runs, but each launch counts as busy time (docs/fgpu.md, "The
# fake driver").  Prints "launches N" at the end.
# usage: python3 fgpu-launch.py SECONDS
import ctypes
import sys
import time

cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
assert cuda.cuInit(0) == 0
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
assert cuda.cuModuleLoadData(ctypes.byref(mod), b"fake module") == 0
assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"spin") == 0
launch = cuda.cuLaunchKernel
launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
end, n = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < end:
    for _ in range(100):
        assert launch(fn, 216, 1, 1, 1024, 1, 1, 0, None, None, None) == 0
    n += 100
print("launches", n)
