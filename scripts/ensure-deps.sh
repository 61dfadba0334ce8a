#!/bin/sh
# ensure-deps.sh - install the Debian packages the build and tests need, when
# missing: libunwind-dev (stacks), uthash-dev (tables), libdw-dev (DWARF
# symbolization), jq (JSON checks in tests), clang (TSan, the fuzz target).
set -eu
missing=""
have_hdr() { [ -f "/usr/include/$1" ] || [ -f "/usr/include/$(uname -m)-linux-gnu/$1" ]; }
have_hdr libunwind.h || missing="$missing libunwind-dev"
have_hdr uthash.h || missing="$missing uthash-dev"
have_hdr elfutils/libdwfl.h || missing="$missing libdw-dev"
command -v jq >/dev/null 2>&1 || missing="$missing jq"
command -v clang >/dev/null 2>&1 || missing="$missing clang"
[ -n "$missing" ] || exit 0
if [ "$(id -u)" != 0 ]; then
    echo "gpumemguard: missing packages:$missing; install them (apt-get install$missing) as root" >&2
    exit 1
fi
echo "gpumemguard: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq $missing >/dev/null
