"""Run as `python -m run_as_module` from the directory above setup/
(tests/wheel.sh): changes directory, then starts pytest --gpumem itself."""
import os
import sys

import pytest

os.chdir("setup")
sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "--gpumem", "sample_setup.py", "-k", "passes"]))
