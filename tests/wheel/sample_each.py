"""Sample test for the pytest plugin under pytest-xdist's --dist each
(tests/wheel.sh): the same test on every worker, over its budget on gw0 only,
which reports first; the summary counts each worker's run."""
import os
import time

import pytest

from sample_gpumem import MiB, alloc, context, free  # noqa: F401 (context: the session's fixture)


@pytest.mark.limit_gpu_memory("16 MiB")
def test_each_worker():
    over = os.environ.get("PYTEST_XDIST_WORKER") == "gw0"
    if not over:
        time.sleep(1)  # reports after gw0
    free(alloc((32 if over else 1) * MiB))
