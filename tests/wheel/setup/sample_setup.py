"""Limits added after collection, and set-up that runs inside the test's
call (tests/wheel.sh, with setup/conftest.py). Each test's name says what
pytest --gpumem must make of it: *_fails or *_passes."""
import unittest

import pytest
from cuda.bindings import driver as cu

from conftest import check

MiB = 1 << 20
kept = []


def alloc(n):
    return check(cu.cuMemAlloc(n))


def free(p):
    check(cu.cuMemFree(p))


def test_over_conftest_budget():  # the conftest's hook adds a 1 MiB budget: fails
    free(alloc(8 * MiB))


def test_applymarker_in_body_fails(request):
    request.applymarker(pytest.mark.limit_gpu_memory("1 MiB"))
    free(alloc(8 * MiB))


@pytest.fixture
def leak_budget(request):
    request.node.add_marker(pytest.mark.limit_gpu_leaks("1 MiB"))


def test_leak_marker_from_fixture_fails(leak_budget):
    kept.append(alloc(8 * MiB))


@pytest.fixture
def big():
    p = alloc(100 * MiB)  # the fixture's set-up, freed at its tear-down
    yield p
    free(p)


@pytest.mark.limit_gpu_memory("1 MiB")
@pytest.mark.limit_gpu_leaks("1 MiB")
def test_getfixturevalue_is_setup_passes(request):
    assert request.getfixturevalue("big")


@pytest.mark.limit_gpu_memory("4 MiB")
def test_own_peak_after_getfixturevalue_fails(request):  # 8 MiB of its own
    request.getfixturevalue("big")
    free(alloc(8 * MiB))


@pytest.mark.limit_gpu_memory("4 MiB")
def test_own_peak_before_getfixturevalue_fails(request):  # 8 MiB of its own, then the fixture's 100
    free(alloc(8 * MiB))
    request.getfixturevalue("big")


@pytest.fixture
def outer(request):
    return request.getfixturevalue("big")  # a fixture asking for another inside the call


@pytest.mark.limit_gpu_leaks("1 MiB")
def test_nested_getfixturevalue_leak_fails(request):  # 8 MiB of its own left live
    request.getfixturevalue("outer")
    kept.append(alloc(8 * MiB))


@pytest.fixture
def nothing():
    return 1


@pytest.mark.limit_gpu_memory("12 MiB")
def test_peak_across_getfixturevalue_fails(request):  # 8 MiB held across a fixture's set-up, 8 more: 16
    a = alloc(8 * MiB)
    request.getfixturevalue("nothing")
    free(alloc(8 * MiB))
    free(a)


class Case(unittest.TestCase):
    def setUp(self):
        self.p = alloc(100 * MiB)  # set-up, freed in tearDown

    def tearDown(self):
        free(self.p)

    @pytest.mark.limit_gpu_memory("1 MiB")
    @pytest.mark.limit_gpu_leaks("1 MiB")
    def test_setup_is_not_the_body_passes(self):
        pass

    @pytest.mark.limit_gpu_memory("4 MiB")
    def test_body_over_fails(self):
        free(alloc(8 * MiB))
