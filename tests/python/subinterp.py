# subinterp.py [thread] - an allocation made by code that runs in a
# sub-interpreter (_xxsubinterpreters, 3.10 and 3.11): its frames are the
# sub-interpreter's, not those of the main interpreter's call that runs it
# (tests/python.sh). "thread": the sub-interpreter is made on the main thread
# and run on another; while it sleeps there, the main thread allocates: each
# allocation has the frames of the state that ran it, not those of the
# state made on its thread (the sub-interpreter's head state carries the
# main thread's id).
import ctypes
import os
import sys
import threading
import _xxsubinterpreters as interpreters

SUB = r'''
import ctypes, os, time
cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0)
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
def allocate_in_subinterpreter():
    p = ctypes.c_uint64()
    cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(5 << 20))
allocate_in_subinterpreter()
def sleep_in_subinterpreter():
    os.write(WFD, b"x")
    os.read(RFD, 1)
if WFD >= 0:
    sleep_in_subinterpreter()
'''


def run_it():
    cid = interpreters.create()
    interpreters.run_string(cid, SUB.replace("WFD", "-1").replace("RFD", "-1"))
    interpreters.destroy(cid)


def allocate_on_main_thread():
    cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0)
    dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
    ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
    p = ctypes.c_uint64()
    cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(3 << 20))


def run_on_a_thread():
    up_r, up_w = os.pipe()      # the sub-interpreter: allocated, now waiting
    down_r, down_w = os.pipe()  # the main thread: allocated, go on
    cid = interpreters.create()
    code = SUB.replace("WFD", str(up_w)).replace("RFD", str(down_r))
    t = threading.Thread(target=interpreters.run_string, args=(cid, code))
    t.start()
    os.read(up_r, 1)
    allocate_on_main_thread()
    os.write(down_w, b"x")
    t.join()
    interpreters.destroy(cid)


if len(sys.argv) > 1 and sys.argv[1] == "thread":
    run_on_a_thread()
else:
    run_it()
