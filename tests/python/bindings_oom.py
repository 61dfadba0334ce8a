"""cuda-bindings (its driver calls release the GIL) as a training step does
it: weights() keeps a buffer, activations() makes three and frees them (the
peak), then too_big() asks the driver for more than the device has (no
GPUMEM_LIMIT), gets CUDA_ERROR_OUT_OF_MEMORY, and the program goes on with a
smaller one, as frameworks do. tests/oom/driver_oom.sh finds the lines by
"# SITE:"."""
from cuda.bindings import driver as cu

MiB = 1 << 20
GiB = 1 << 30


def alloc(n):
    err, p = cu.cuMemAlloc(n)  # SITE:alloc
    return err, p


def weights():
    return alloc(4 * MiB)[1]  # SITE:weights


def activations():
    bufs = [alloc(2 * MiB)[1] for _ in range(3)]  # SITE:activations
    for b in bufs:
        cu.cuMemFree(b)


def too_big():
    return alloc(100 * GiB)  # SITE:too_big


def main():
    cu.cuInit(0)
    _, dev = cu.cuDeviceGet(0)
    _, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    cu.cuCtxSetCurrent(ctx)
    weights()
    activations()
    err, _ = too_big()
    assert err == cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY, err
    err, p = alloc(1 * MiB)  # the retry, smaller: it goes on
    assert err == cu.CUresult.CUDA_SUCCESS
    cu.cuMemFree(p)
    print("bindings_oom ok")


if __name__ == "__main__":
    main()
