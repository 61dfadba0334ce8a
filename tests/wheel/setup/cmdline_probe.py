"""The command line pytest --gpumem would run again, made as on a Python
without sys.orig_argv (before 3.10), printed as JSON (tests/wheel.sh)."""
import json
import types

from gpumemguard.pytest_plugin import _command_line

config = types.SimpleNamespace(invocation_params=types.SimpleNamespace(dir="/"))
print(json.dumps(_command_line(config, None)))
