# escholder.py READY DONE BYTES - a guarded Python program whose biggest
# site names terminal controls (tests/top.sh): a function named with an
# escape sequence, an 8-bit CSI and a bell, in a file whose name holds one;
# allocates BYTES from it, creates READY, waits for DONE.
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

NAME = "f\x1b[2J\x1b]0;PWNED\x07\u009b31mred"
SRC = ("def load(n):\n    p = ctypes.c_uint64()\n"
       "    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0\n    return p.value\n")
code = [c for c in compile(SRC, "\x1b[1mfile\x1b[0m.py", "exec").co_consts if hasattr(c, "co_name")][0]
code = code.replace(co_name=NAME, co_qualname=NAME) if hasattr(code, "co_qualname") else code.replace(co_name=NAME)
kept = types.FunctionType(code, globals())(int(sys.argv[3]))
open(sys.argv[1], "w").close()
for _ in range(3000):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.02)
