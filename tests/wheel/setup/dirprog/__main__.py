"""A program run as a directory (`python dirprog`, tests/wheel.sh) that
changes directory, then starts pytest --gpumem itself: the re-run under the
guard must find the directory again."""
import os
import sys

import pytest

os.chdir("setup")  # relative to where the program was started
sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "--gpumem", "sample_setup.py", "-k", "passes"]))
