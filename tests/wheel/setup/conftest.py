"""conftest for sample_setup.py (tests/wheel.sh): a directory-wide budget
added by a hook, as conftests do, and the device context."""
import pytest
from cuda.bindings import driver as cu


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


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name.endswith("_conftest_budget"):
            item.add_marker(pytest.mark.limit_gpu_memory("1 MiB"))
