# hostile_names.py - a Python function and file whose names are markup
# (a code object compiled under any file name, renamed as any string),
# leaking 5 MiB through ctypes. The HTML page must show them as text and
# run none of them.
import ctypes

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0

FILE = "</script><script>document.title='PWNED-PY';document.body.append('PWNED-PY')</script><!--\u2028\u2029"
NAME = "<img src=x onerror=\"document.title='PWNED-IMG'\">&amp;\u2028"
SRC = (
    "def f(cu, ctypes, n):\n"
    "    p = ctypes.c_uint64()\n"
    "    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0\n"
    "    return p.value\n"
)
ns = {}
exec(compile(SRC, FILE, "exec"), ns)
f = ns["f"]
code = f.__code__
try:
    f.__code__ = code.replace(co_name=NAME, co_qualname=NAME)
except TypeError:  # before 3.11: no co_qualname
    f.__code__ = code.replace(co_name=NAME)
f(cu, ctypes, 5 << 20)
print("leaked")
