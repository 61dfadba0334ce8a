# pybench.py DEPTH PAIRS [ROUNDS] - CPU ns per cuMemAlloc_v2+cuMemFree_v2 pair
# made through ctypes from DEPTH Python frames, against the simulated driver
# (the thread's own CPU time over a round of PAIRS pairs).
#
# Prints two figures: the least of ROUNDS rounds (40 unless given) through
# cuMemAlloc_v2 and cuMemFree_v2 (the guard's when it is preloaded), and the
# least of as many through the simulated driver's own names for them
# (simBenchMemAlloc, simBenchMemFree: the driver alone, whatever is
# preloaded). The rounds take turns in the same process, from the same
# Python frames, through the same ctypes calls: what the guard adds is the
# first less the second, with the same interpreter, the same memory layout
# and the same moments of a shared machine on both sides (other programs
# only ever add time). "-" for the second when the driver has no such names
# (a real one). scripts/bench.sh runs it guarded with GPUMEM_PYTHON off and
# auto: the difference between those two is the cost of capturing the
# Python frames.
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
paths = [(cu.cuMemAlloc_v2, cu.cuMemFree_v2)]
try:
    paths.append((cu.simBenchMemAlloc, cu.simBenchMemFree))
except AttributeError:
    pass
p = ctypes.c_uint64()
ref = ctypes.byref(p)
size = ctypes.c_size_t(4096)


def pairs(n, alloc, free):
    t = time.thread_time_ns()
    for _ in range(n):
        alloc(ref, size)
        free(p)
    return time.thread_time_ns() - t


def at_depth(d, n, alloc, free):  # the loop runs d Python frames deep (this one counts)
    return pairs(n, alloc, free) if d <= 2 else at_depth(d - 1, n, alloc, free)


depth, n = int(sys.argv[1]), int(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
best = [None] * len(paths)
for r in range(rounds * len(paths)):
    v = r % len(paths)
    t = at_depth(depth, n, *paths[v])
    best[v] = t if best[v] is None else min(best[v], t)
print(" ".join(f"{b / n:.1f}" for b in best) + (" -" if len(paths) < 2 else ""))
