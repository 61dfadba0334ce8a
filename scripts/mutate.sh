#!/bin/sh
# mutate.sh [BUILD_DIR] [mutate.py options] - make mutate: mutation testing of
# src/ with universalmutator (PyPI), installed with pip into
# BUILD_DIR/mutate-venv on first use. Runs the fixed sample of
# tests/mutants.txt, each mutant in a scratch copy of the tree under
# BUILD_DIR/mutate, and prints the score and the survivors. Slow (each mutant
# is a build and a `make test`): run it niced, `nice -n 19 make mutate`.
# See docs/testing.md. Not part of `make test` or CI.
set -eu
B=build
case "${1:-}" in -*|"") ;; *) B=$1; shift ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
V=$ROOT/$B/mutate-venv
if [ ! -x "$V/bin/mutate" ]; then
    echo "mutate: installing universalmutator into $V" >&2
    python3 -m venv "$V"
    "$V/bin/pip" install -q universalmutator
fi
exec python3 "$ROOT/scripts/mutate.py" --build "$B" --mutator "$V/bin/mutate" "$@"
