# folded_names.py - a Python allocation whose frames flame graph tools must
# read (tests/python/names.sh): run from a file under a directory whose name
# is not UTF-8 (Latin-1 bytes, held by Python as lone surrogates), through
# a function whose name is 800 characters of 'ä', longer than a folded
# frame keeps. Leaks 1 MiB through ctypes.
import ctypes

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0

NAME = "xy" + "\u00e4" * 800


def alloc(n):
    p = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0
    return p.value


try:
    alloc.__code__ = alloc.__code__.replace(co_name=NAME, co_qualname=NAME)
except TypeError:  # before 3.11: no co_qualname
    alloc.__code__ = alloc.__code__.replace(co_name=NAME)
alloc(1 << 20)
print("leaked")
