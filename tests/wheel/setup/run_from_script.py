"""A script that changes directory, then starts pytest --gpumem itself
(tests/wheel.sh): the re-run under the guard must find the script and
start where it was started. Run from the directory above setup/."""
import os
import sys

import pytest

os.chdir("setup")  # relative to where the script was started
sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "--gpumem", "sample_setup.py", "-k", "passes"]))
