"""Two tests for pytest --gpumem -n 2 alone (tests/wheel.sh): with two tests
and two workers, pytest-xdist gives each worker one, and they run at once.
Each holds 12 MiB until the other does too; each one's numbers are its own,
so neither exceeds its 16 MiB budget."""
import os
import time

import pytest
from cuda.bindings import driver as cu

MiB = 1 << 20


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


def alloc(n):
    return check(cu.cuMemAlloc(n))


def free(p):
    check(cu.cuMemFree(p))


def overlap(me, other):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("only under pytest-xdist")
    d = os.environ["GMG_OVERLAP_DIR"]
    p = alloc(12 * MiB)
    open(os.path.join(d, me), "w").close()
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(d, other)):
        assert time.time() < deadline, "the other worker never held its memory"
        time.sleep(0.05)
    time.sleep(0.2)
    free(p)


@pytest.mark.limit_gpu_memory("16MiB")
def test_overlap_a():
    overlap("a", "b")


@pytest.mark.limit_gpu_memory("16MiB")
def test_overlap_b():
    overlap("b", "a")
