"""fgpu_torch.py - PyTorch under libtessera-fgpu.so (tests/gpu/run.sh).

  fgpu_torch.py mem        mem_get_info, then 3.5 GiB (must work) and 5 GiB more (must fail)
  fgpu_torch.py matmul N   seconds for N 4096x4096 matmuls (after a warm-up)
"""
import sys
import time

import torch

GIB = 2**30
if sys.argv[1] == "mem":
    free, total = torch.cuda.mem_get_info()
    print(f"mem_get_info total {total / GIB:.2f} GiB free {free / GIB:.2f} GiB")
    x = torch.empty(int(3.5 * GIB), dtype=torch.uint8, device="cuda")
    print("3.5 GiB: allocated")
    del x
    torch.cuda.empty_cache()
    try:
        y = torch.empty(5 * GIB, dtype=torch.uint8, device="cuda")
        print("5 GiB: allocated")
    except torch.cuda.OutOfMemoryError:
        print("5 GiB: out of memory")
elif sys.argv[1] == "matmul":
    n = int(sys.argv[2])
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    t0 = time.time()
    for _ in range(n):
        c = a @ b
    torch.cuda.synchronize()
    print(f"{time.time() - t0:.4f}")
