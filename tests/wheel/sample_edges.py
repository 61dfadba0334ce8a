"""Sample tests for the pytest plugin's edges (tests/wheel.sh runs them with
`pytest -p pytester --gpumem --gpumem-limit 0`): no default budget from a
0; the plugin's own mark of its re-run not left in the tests' environment;
a pytest session run inside a test (pytester) measuring nothing rather than
the outer test's figures; a test that fails after the driver ran out of
memory, with what filled it in its report; a child a test forks that goes
on running pytest (its failure is its own); sizes that are none."""
import os

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


def test_no_default_budget():  # --gpumem-limit 0: none
    free(alloc(2 * MiB))


def test_env_clean():
    assert "GPUMEMGUARD_PYTEST_REEXEC" not in os.environ


@pytest.mark.limit_gpu_memory("4 MiB")
def test_inner_session_keeps_outer_figures(pytester):
    free(alloc(8 * MiB))  # over this test's budget: it must fail
    pytester.makepyfile("def test_inner():\n    pass\n")
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--gpumem").assert_outcomes(passed=1)


def fill_device():
    kept = []
    while True:
        err, p = cu.cuMemAlloc(1 << 30)
        if err != cu.CUresult.CUDA_SUCCESS:
            return kept, err
        kept.append(p)


def test_oom_explained():
    kept, err = fill_device()
    for p in kept:
        free(p)
    assert err == cu.CUresult.CUDA_SUCCESS, "out of memory after %d GiB" % len(kept)


def test_sizes_that_are_none():
    from gpumemguard import Guard
    g = Guard()
    for text in ("1 MiB\x00junk", "\udcff", "1.5"):
        with pytest.raises(ValueError):
            g.parse_size(text)
    assert g.parse_size("1.5K") == 1536
    assert g.limit(0) == 0  # no GPUMEM_LIMIT
    assert g.refusals(0) == (0, 1)  # test_oom_explained's out of memory, before this test
    with pytest.raises(ValueError):
        g.refusals(64)


def test_fork_child_goes_on():  # last: its child runs the rest of the session
    free(alloc(MiB))
    pid = os.fork()
    if pid == 0:
        raise SystemExit(3)  # the child's own failure, not one of the plugin's
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status)
