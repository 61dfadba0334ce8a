"""Sample tests for the pytest plugin (tests/wheel.sh runs them with
`pytest --gpumem`, installed from the wheel): cuda-bindings on the simulated
driver; some pass, some fail on purpose, and the shell test checks the text."""
import os

import pytest
from cuda.bindings import driver as cu

MiB = 1 << 20
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


def alloc(n):
    return check(cu.cuMemAlloc(n))


def free(p):
    check(cu.cuMemFree(p))


@pytest.fixture
def big_buffer():
    p = alloc(100 * MiB)     # the fixture's, not the test's
    yield p
    free(p)


@pytest.mark.limit_gpu_memory("16 MiB")
def test_within_budget():
    free(alloc(8 * MiB))


@pytest.mark.limit_gpu_memory("16MiB")
def test_over_budget():
    a = alloc(12 * MiB)
    b = alloc(12 * MiB)
    free(b)
    free(a)


def hold_site():
    kept.append(alloc(3 * MiB))


@pytest.mark.limit_gpu_leaks("1 MiB")
def test_leaks():
    hold_site()
    hold_site()
    free(alloc(5 * MiB))


@pytest.mark.limit_gpu_leaks("4MiB")
def test_small_leak_allowed():
    kept.append(alloc(2 * MiB))


def test_default_budget():
    free(alloc(40 * MiB))


@pytest.mark.limit_gpu_memory("64MiB")
def test_marker_over_default():
    free(alloc(40 * MiB))


@pytest.mark.limit_gpu_memory("1MiB")
@pytest.mark.limit_gpu_leaks("0")
def test_fixture_memory_not_counted(big_buffer):
    assert big_buffer


@pytest.mark.limit_gpu_memory("1MiB")
def test_fails_on_its_own():
    assert 1 == 2, "its own failure"


def test_env_and_guard_kept():
    """Run again under the guard: the environment is the one pytest had."""
    from gpumemguard import Guard
    assert os.environ.get("GMG_SAMPLE_ENV") == "kept, with spaces"
    assert Guard.loaded()
