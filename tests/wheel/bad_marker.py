import pytest


@pytest.mark.limit_gpu_memory("12 parsecs")
def test_bad_size():
    pass
