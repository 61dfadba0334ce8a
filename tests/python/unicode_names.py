# unicode_names.py - Python call sites whose names are not Latin-1: a
# function named in CJK (UCS-2 in CPython's compact strings), one in Latin-1,
# and, from tests/python/names.sh, a copy of this file under a directory and
# a name with astral characters (UCS-4). The names must reach every format
# as UTF-8, unchanged.
import ctypes

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
_dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(_dev), 0) == 0
_ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(_ctx), _dev) == 0
assert cu.cuCtxSetCurrent(_ctx) == 0


def 数据加载(n):
    p = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0


def café():
    数据加载(2 << 20)


def 読み込み():
    数据加载(1 << 20)


café()
読み込み()
