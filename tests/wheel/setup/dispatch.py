"""A tool whose sub-command runs pytest (tests/wheel.sh): `dispatch.py test
ARGS` shifts sys.argv and runs pytest ARGS, which may ask for --gpumem."""
import sys

import pytest

if sys.argv[1:2] == ["test"]:
    sys.argv = sys.argv[1:]
    sys.exit(pytest.main())
sys.exit(3)
