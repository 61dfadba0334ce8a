"""More sample tests for the pytest plugin (tests/wheel.sh): a leak deep below
its test, object cycles holding memory, and a flaky test that
pytest-rerunfailures runs again."""
import os

import pytest

from sample_gpumem import MiB, alloc, context, free  # noqa: F401 (context: the session's fixture)

kept = []


def deep(n):
    if n == 0:
        kept.append(alloc(2 * MiB))
        return
    deep(n - 1)


@pytest.mark.limit_gpu_leaks("0")
def test_deep_leak():
    deep(24)  # 25 Python frames below the test: past the inner half of a 32-frame stack


class Cycle(object):
    def __init__(self):
        self.me = self
        self.p = alloc(3 * MiB)

    def __del__(self):
        free(self.p)


def test_cycle_without_marker():
    Cycle()  # garbage once the test returns: freed by a collection, no leak


@pytest.mark.flaky(reruns=1)
@pytest.mark.limit_gpu_memory("4 MiB")
def test_flaky_then_within():
    mark = os.path.join(os.environ["GMG_MORE_DIR"], "ran")
    first = not os.path.exists(mark)
    open(mark, "w").close()
    free(alloc(8 * MiB if first else 1 * MiB))  # over its budget the first time only
