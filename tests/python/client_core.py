"""cuda.core on the simulated driver: Device(), set_current, a stream, buffers
from the device's memory resource (stream-ordered, from its pool), a copy
between them, close; one buffer of LEAK bytes is never released, on purpose
(unless --no-leak), so that the guard's report at exit must list it.

Prints "client_core ok" when every step succeeded."""
import ctypes
import sys

try:
    from cuda.core import Device
except ImportError:  # releases before 0.4 had it only here
    from cuda.core.experimental import Device
from cuda.bindings import driver as cu

LEAK = 3_211_264      # 3.0625 MiB: a size nothing else allocates


def main():
    leak = "--no-leak" not in sys.argv
    dev = Device(0)
    dev.set_current()
    assert dev.compute_capability >= (7, 0), dev.compute_capability
    assert dev.properties.warp_size == 32
    stream = dev.create_stream()

    a = dev.allocate(1_048_576, stream=stream)
    b = dev.allocate(1_048_576, stream=stream)
    payload = bytes(range(256)) * 64
    err, = cu.cuMemcpyHtoD(int(a.handle), payload, len(payload))
    assert err == cu.CUresult.CUDA_SUCCESS, err
    a.copy_to(b, stream=stream)
    stream.sync()
    back = bytearray(len(payload))
    err, = cu.cuMemcpyDtoH(back, int(b.handle), len(payload))
    assert err == cu.CUresult.CUDA_SUCCESS and bytes(back) == payload, "device memory did not keep the bytes"
    a.close(stream)
    b.close(stream)

    if leak:
        # a buffer whose owner never lets go (as a reference-count bug in an
        # extension would): cuda.core frees live buffers at interpreter exit
        buf = dev.allocate(LEAK, stream=stream)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(buf))
    ev = stream.record()
    ev.sync()
    stream.close()
    print("client_core ok")


if __name__ == "__main__":
    main()
