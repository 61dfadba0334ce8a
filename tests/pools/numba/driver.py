# driver.py - a Python client standing for numba's driver module (its path
# has a numba/ directory, as numba's numba/cuda/cudadrv/driver.py does): it
# allocates through ctypes, so its native frames are ctypes' glue and the
# owner is read from the Python frame. tests/pools.sh runs it under the guard.
import ctypes

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
_dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(_dev), 0) == 0
_ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(_ctx), _dev) == 0
assert cu.cuCtxSetCurrent(_ctx) == 0


def memalloc(n):
    p = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0
    return p.value


kept = memalloc(3 << 20)
print("numba-like client done")
