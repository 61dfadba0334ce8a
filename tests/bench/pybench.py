# pybench.py DEPTH PAIRS - CPU ns per cuMemAlloc_v2+cuMemFree_v2 pair made
# through ctypes from DEPTH Python frames, against the simulated driver (the
# thread's own CPU time, best of 9 rounds: on a shared machine other
# programs only ever add to it). scripts/bench.sh runs it unguarded and
# guarded with GPUMEM_PYTHON off and auto: the difference between those two
# is the cost of capturing the Python frames.
import ctypes
import sys
import time

cu = ctypes.CDLL("libcuda.so.1")
cu.cuInit(0)
dev = ctypes.c_int()
cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p()
cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
cu.cuCtxSetCurrent(ctx)
alloc, free = cu.cuMemAlloc_v2, cu.cuMemFree_v2
p = ctypes.c_uint64()
ref = ctypes.byref(p)
size = ctypes.c_size_t(4096)


def pairs(n):
    t = time.thread_time_ns()
    for _ in range(n):
        alloc(ref, size)
        free(p)
    return time.thread_time_ns() - t


def at_depth(d, n):  # the loop runs d Python frames deep (this one counts)
    return pairs(n) if d <= 2 else at_depth(d - 1, n)


depth, n = int(sys.argv[1]), int(sys.argv[2])
print(f"{min(at_depth(depth, n) for _ in range(9)) / n:.1f}")
