# subinterp.py - an allocation made by code that runs in a sub-interpreter
# (_xxsubinterpreters, 3.10 and 3.11): its frames are the sub-interpreter's,
# not those of the main interpreter's call that runs it (tests/python.sh).
import _xxsubinterpreters as interpreters

SUB = r'''
import ctypes
cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0)
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
def allocate_in_subinterpreter():
    p = ctypes.c_uint64()
    cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(5 << 20))
allocate_in_subinterpreter()
'''


def run_it():
    cid = interpreters.create()
    interpreters.run_string(cid, SUB)
    interpreters.destroy(cid)


run_it()
