"""`gpumemguard` and `python -m gpumemguard`: the bundled command, run in
this process's place (its status, its signals), with every argument."""
import os
import sys

from . import command_path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    cmd = command_path()
    try:
        os.execv(cmd, [cmd] + args)
    except OSError as e:
        sys.stderr.write("gpumemguard: cannot run the bundled command %s: %s\n" % (cmd, e.strerror))
        return 1


if __name__ == "__main__":
    sys.exit(main())
