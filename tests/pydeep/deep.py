# deep.py DEPTH - an allocation made DEPTH Python frames deep, through
# ctypes, from the user's entry function main() called at module level:
# tests/pydeep/pydeep.sh checks that the report keeps <module> and main
# (the outermost frames) and the innermost ones, and says how many frames
# in between were left out.
import ctypes
import sys

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0


def leaf():
    p = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(3 << 20)) == 0  # kept live


def recurse(n):
    if n == 0:
        leaf()
    else:
        recurse(n - 1)


def main():
    recurse(int(sys.argv[1]))


sys.setrecursionlimit(max(sys.getrecursionlimit(), int(sys.argv[1]) + 100))


main()
