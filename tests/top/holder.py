# holder.py READY DONE BYTES - a Python program under the guard for
# `gpumemguard top` (tests/top.sh): allocates BYTES through ctypes from
# load_weights (the line marked SITE), creates READY, waits for DONE.
import ctypes
import os
import sys
import time

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0


def load_weights(n):
    p = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # SITE
    return p.value


kept = load_weights(int(sys.argv[3]))
open(sys.argv[1], "w").close()
for _ in range(3000):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.02)
