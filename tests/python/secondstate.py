# secondstate.py - an allocation made, with the GIL held, by Python code
# that runs in a second thread state of the main interpreter, which C code
# (here ctypes.pythonapi) made and swapped in on the thread: its frames are
# that state's (in_second_state alone), not those of the thread's first
# state, which stands still below it in outer() (3.10 and 3.11 keep the
# thread's gilstate on the first state meanwhile). tests/python.sh.
import ctypes
from ctypes import byref, c_int, c_size_t, c_uint64, c_void_p, py_object

cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0)
dev = c_int(); cu.cuDeviceGet(byref(dev), 0)
ctx = c_void_p(); cu.cuDevicePrimaryCtxRetain(byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
held = ctypes.PyDLL("libcuda.so.1")  # its calls keep the GIL
api = ctypes.pythonapi
api.PyInterpreterState_Get.restype = c_void_p
api.PyThreadState_New.restype = c_void_p
api.PyThreadState_New.argtypes = [c_void_p]
api.PyThreadState_Swap.restype = c_void_p
api.PyThreadState_Swap.argtypes = [c_void_p]
api.PyObject_CallObject.restype = py_object
api.PyObject_CallObject.argtypes = [py_object, c_void_p]
api.PyThreadState_Clear.argtypes = [c_void_p]
api.PyThreadState_Delete.argtypes = [c_void_p]


def in_second_state():
    p = c_uint64()
    held.cuMemAlloc_v2(byref(p), c_size_t(3 << 20))


def outer():
    new = api.PyThreadState_New(api.PyInterpreterState_Get())
    old = api.PyThreadState_Swap(new)
    api.PyObject_CallObject(in_second_state, None)
    api.PyThreadState_Swap(old)
    api.PyThreadState_Clear(new)
    api.PyThreadState_Delete(new)


outer()
