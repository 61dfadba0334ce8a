"""numba-cuda on the simulated driver: start, allocate device arrays, copy to
and from the device, free; one array of LEAK bytes is kept to the end on
purpose (unless --no-leak), so that the guard's report at exit must list it.

Prints "client_numba ok" when every step succeeded."""
import sys

import numpy as np
from numba import cuda

LEAK = 2_883_584      # 2.75 MiB: a size nothing else allocates
kept = []


def main():
    leak = "--no-leak" not in sys.argv
    if not cuda.is_available():
        raise SystemExit("client_numba: numba sees no CUDA device")
    dev = cuda.get_current_device()
    assert dev.compute_capability >= (7, 0), dev.compute_capability

    host = np.arange(262_144, dtype=np.float32)          # 1 MiB
    d = cuda.to_device(host)
    e = cuda.device_array(host.shape, dtype=host.dtype)
    e.copy_to_device(d)
    back = e.copy_to_host()
    assert np.array_equal(back, host), "device memory did not keep the values"
    del d, e
    # numba frees in batches: flush the pending frees now
    cuda.current_context().memory_manager.deallocations.clear()

    if leak:
        kept.append(cuda.device_array(LEAK, dtype=np.uint8))  # held by a global to the end
    cuda.synchronize()
    print("client_numba ok")


if __name__ == "__main__":
    main()
