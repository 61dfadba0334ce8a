"""cuda-bindings (its driver calls release the GIL) from two Python call
sites whose native stacks are identical: weights() and optimizer() each keep
one buffer; with "refuse", too_big_a() and too_big_b() ask for more than the
limit, three times each. tests/pyclients.sh finds the lines by "# SITE:"."""
import sys

from cuda.bindings import driver as cu

MiB = 1 << 20


def alloc(n):
    err, p = cu.cuMemAlloc(n)  # SITE:alloc
    return p if err == cu.CUresult.CUDA_SUCCESS else None


def weights():
    return alloc(6 * MiB)  # SITE:weights


def optimizer():
    return alloc(1 * MiB)  # SITE:optimizer


def too_big_a():
    return alloc(8 * MiB)  # SITE:too_big_a


def too_big_b():
    return alloc(9 * MiB)  # SITE:too_big_b


def main():
    cu.cuInit(0)
    _, dev = cu.cuDeviceGet(0)
    _, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    cu.cuCtxSetCurrent(ctx)
    if sys.argv[1:] == ["refuse"]:
        for _ in range(3):
            assert too_big_a() is None and too_big_b() is None
    else:
        assert weights() is not None and optimizer() is not None
    print("bindings_sites ok")


if __name__ == "__main__":
    main()
