"""torch_gpumem_tests.py - GPU suite case 10: PyTorch tests under the pytest
plugin's markers (pytest --gpumem, from the installed wheel). Two fail on
purpose: test_over_budget and test_leaks; run.sh checks which failed."""
import pytest
import torch

MiB = 1 << 20
kept = []


@pytest.mark.limit_gpu_memory("256MiB")
def test_within_budget():
    x = torch.ones(64 * MiB, dtype=torch.uint8, device="cuda")
    assert int(x[0]) == 1


@pytest.mark.limit_gpu_memory("256MiB")
def test_over_budget():
    x = torch.ones(512 * MiB, dtype=torch.uint8, device="cuda")
    assert int(x[-1]) == 1


@pytest.mark.limit_gpu_leaks("1MiB")
def test_no_leak():
    x = torch.ones(32 * MiB, dtype=torch.uint8, device="cuda")
    assert int(x.sum()) == 32 * MiB


def keep_activation():
    kept.append(torch.ones(1024 * MiB, dtype=torch.uint8, device="cuda"))


@pytest.mark.limit_gpu_leaks("1MiB")
def test_leaks():
    keep_activation()
