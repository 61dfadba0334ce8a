"""NVIDIA cuda-bindings (cuda.bindings.driver) on the simulated driver: start,
allocate, copy, free; one buffer of LEAK bytes is left live on purpose (unless
--no-leak), so that the guard's report at exit must list it.

Prints "client_bindings ok" when every call succeeded."""
import sys

from cuda.bindings import driver as cu

LEAK = 3_538_944      # 3.375 MiB: a size nothing else allocates
FREED = (1_048_576, 2_621_440)


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise SystemExit(f"client_bindings: {name.decode() if name else err}")
    return rest[0] if len(rest) == 1 else rest


def main():
    leak = "--no-leak" not in sys.argv
    check(cu.cuInit(0))
    assert check(cu.cuDriverGetVersion()) >= 13000
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    major = check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    warp = check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev))
    assert major >= 7 and warp == 32, (major, warp)
    check(cu.cuDeviceGetUuid(dev))
    stream = check(cu.cuStreamCreate(0))

    # synchronous allocations, a real round trip through device memory
    payload = bytes(range(256)) * 16
    bufs = [check(cu.cuMemAlloc(n)) for n in FREED]
    check(cu.cuMemcpyHtoD(bufs[0], payload, len(payload)))
    check(cu.cuMemcpyDtoD(bufs[1], bufs[0], len(payload)))
    back = bytearray(len(payload))
    check(cu.cuMemcpyDtoH(back, bufs[1], len(payload)))
    assert bytes(back) == payload, "device memory did not keep the bytes"
    for b in bufs:
        check(cu.cuMemFree(b))

    # stream-ordered, from the device's pool
    pool = check(cu.cuDeviceGetDefaultMemPool(dev))
    p = check(cu.cuMemAllocFromPoolAsync(786_432, pool, stream))
    check(cu.cuMemFreeAsync(p, stream))
    check(cu.cuStreamSynchronize(stream))

    if leak:
        check(cu.cuMemAlloc(LEAK))
    check(cu.cuStreamDestroy(stream))
    print("client_bindings ok")


if __name__ == "__main__":
    main()
