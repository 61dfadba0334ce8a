"""A caching pool of the program's own, named by a `pool:` line of
GPUMEM_SUPPRESSIONS (tests/wheel.sh runs this with and without it): the
segments a test makes its pool keep are retained, not the test's leak; a
leak beside them still fails the test."""
import pytest
from cuda.bindings import driver as cu

MiB = 1 << 20
arena = []   # the pool's segments, kept for later tests
kept = []


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    assert err == cu.CUresult.CUDA_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


@pytest.fixture(scope="session", autouse=True)
def context():
    check(cu.cuInit(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(check(cu.cuDeviceGet(0))))
    check(cu.cuCtxSetCurrent(ctx))
    yield


def my_arena_grow(n):
    arena.append(check(cu.cuMemAlloc(n)))


@pytest.mark.limit_gpu_leaks("1MiB")
def test_pool_keeps_its_segment():
    my_arena_grow(8 * MiB)


@pytest.mark.limit_gpu_leaks("1MiB")
def test_leak_beside_the_pool():
    my_arena_grow(4 * MiB)
    kept.append(check(cu.cuMemAlloc(3 * MiB)))
