#!/bin/sh
# pyclients.sh BUILD_DIR - the real Python CUDA clients the tests run under the
# guard (tests/pyclients.sh), in a virtual environment BUILD_DIR/venv:
# NVIDIA's cuda-bindings, numba-cuda and cuda.core, at pinned versions that
# work with the CUDA 13.0 driver API (the simulated driver's) on CPython 3.11+.
#
# Idempotent: once installed, BUILD_DIR/venv/.gmg-pyclients holds the pins and
# the interpreter, and a second run does nothing. When the install cannot be
# done (no network, no venv module), it says why in one line, leaves the reason
# in BUILD_DIR/pyclients.skip for the tests to report them as skipped, and
# exits 0: the rest of the tests still run. PYTHON picks the interpreter
# (default python3); pip's output is in BUILD_DIR/pyclients.log.
set -u
B=${1:-build}
PYTHON=${PYTHON:-python3}
VENV=$B/venv
STAMP=$VENV/.gmg-pyclients
SKIP=$B/pyclients.skip
LOG=$B/pyclients.log
# the whole set, dependencies included, so that an install is reproducible
PINS="cuda-bindings==13.0.3 cuda-core==1.2.2 numba-cuda==0.30.4 numba==0.68.1 llvmlite==0.50.0
numpy==2.4.6 cuda-pathfinder==1.9.0 packaging==26.3"

mkdir -p "$B"
want="$(command -v "$PYTHON" 2>/dev/null) $("$PYTHON" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)
$PINS"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    rm -f "$SKIP"
    exit 0
fi

fail() {
    echo "pyclients: $1; the Python client tests will be skipped (details: $LOG)" >&2
    echo "$1" > "$SKIP"
    rm -rf "$VENV"
    exit 0
}

command -v "$PYTHON" >/dev/null 2>&1 || fail "no $PYTHON"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
    || fail "$PYTHON is older than 3.11"
echo "pyclients: installing cuda-bindings, numba-cuda and cuda.core into $VENV" >&2
rm -rf "$VENV"
: > "$LOG"
"$PYTHON" -m venv "$VENV" >>"$LOG" 2>&1 || fail "$PYTHON -m venv failed"
# shellcheck disable=SC2086 # the pins are words
PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 900 "$VENV/bin/python" -m pip install --no-input --progress-bar off \
    $PINS >>"$LOG" 2>&1 \
    || fail "pip could not install the pinned clients ($(grep -m1 -E '^ERROR' "$LOG" | cut -c1-160 || echo 'see the log'))"
"$VENV/bin/python" -c 'import cuda.bindings.driver, cuda.core, numba.cuda' >>"$LOG" 2>&1 \
    || fail "the installed clients do not import"
printf '%s\n' "$want" > "$STAMP"
rm -f "$SKIP"
echo "pyclients: installed in $VENV" >&2
