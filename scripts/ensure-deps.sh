#!/bin/sh
# ensure-deps.sh [build|test] - install the Debian packages that are
# missing, as root.
#   build (the default: `make`, `make demo`): libunwind-dev (stacks),
#     uthash-dev (tables), libdw-dev (DWARF symbolization), libiberty-dev
#     (the C++ demangler, linked in statically)
#   test (`make test` and the sanitizer suites): those, and jq (JSON checks),
#     clang (TSan, the fuzz target), tmux (drives gpumemguard top's terminal
#     view), chromium and a font (every HTML report is loaded in headless
#     Chromium); promtool (Debian's prometheus) best effort
set -eu
what=${1:-build}
missing=""
have_hdr() { [ -f "/usr/include/$1" ] || [ -f "/usr/include/$(uname -m)-linux-gnu/$1" ]; }
have_hdr libunwind.h || missing="$missing libunwind-dev"
have_hdr uthash.h || missing="$missing uthash-dev"
have_hdr elfutils/libdwfl.h || missing="$missing libdw-dev"
have_hdr libiberty/demangle.h || missing="$missing libiberty-dev"
if [ "$what" = test ]; then
    command -v jq >/dev/null 2>&1 || missing="$missing jq"
    command -v clang >/dev/null 2>&1 || missing="$missing clang"
    command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
    command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
    [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing="$missing fonts-dejavu-core"
    # promtool checks the metrics file in the tests; without it the test
    # checks the file's form itself
    if ! command -v promtool >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        (export DEBIAN_FRONTEND=noninteractive; apt-get update -qq >/dev/null 2>&1;
         timeout 300 apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1) || true
    fi
elif [ "$what" != build ]; then
    echo "ensure-deps.sh: build or test, not '$what'" >&2
    exit 2
fi
[ -n "$missing" ] || exit 0
if [ "$(id -u)" != 0 ]; then
    echo "gpumemguard: missing packages:$missing; install them (apt-get install$missing) as root" >&2
    exit 1
fi
echo "gpumemguard: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq $missing >/dev/null
