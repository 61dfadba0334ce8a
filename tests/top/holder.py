# holder.py READY DONE BYTES [controls] - a Python program under the guard
# for `gpumemguard top` (tests/top.sh): allocates BYTES through ctypes from
# load_weights (the line marked SITE), creates READY, waits for DONE. With
# `controls`, the allocating function is named with terminal controls (an
# escape sequence, an 8-bit CSI, a bell) in a file whose name holds one.
import ctypes
import os
import sys
import time
import types

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


def with_controls(fn):
    """fn's code under a name and file name holding terminal controls."""
    name = "f\x1b[2J\x1b]0;PWNED\x07\u009b31mred"
    code = fn.__code__.replace(co_name=name, co_filename="\x1b[1mfile\x1b[0m.py")
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=name)
    return types.FunctionType(code, globals())


alloc = with_controls(load_weights) if sys.argv[4:] == ["controls"] else load_weights
kept = alloc(int(sys.argv[3]))
open(sys.argv[1], "w").close()
for _ in range(3000):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.02)
