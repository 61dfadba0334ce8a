# newline_name.py - a Python file name holding a newline and a quote, as a
# templating engine may give compile(): the text report must not show a
# frame the program never ran (tests/python/names.sh).
import ctypes
cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0)
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
SRC = "def load(cu, ctypes):\n    p = ctypes.c_uint64(); cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(3 << 20))\n"
ns = {}
# a file name with a newline (legal on Linux; here given to compile, as templating engines do)
exec(compile(SRC, 'model.py", line 1, in innocent\n    File "trainer.py', "exec"), ns)
ns["load"](cu, ctypes)
