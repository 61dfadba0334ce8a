#!/usr/bin/env bash
# check-layers.sh [SRC_DIR] - the layering of SPEC §7 (docs/ARCHITECTURE.md):
# every quoted #include in the library names its header by layer
# ("core/track.h") and points to the file's own layer or one it may call.
# Prints each violation and exits 1; prints one line and exits 0 when none.
# `check-layers.sh --self-test` proves that a violation is caught.
set -u
if [ "${1:-}" = --self-test ]; then
    t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
    mkdir -p "$t/core" "$t/report"
    printf '#include "report/report.h"\n' >"$t/core/bad.c"; : >"$t/report/report.h"
    if "$0" "$t" >/dev/null 2>&1; then echo "check-layers: self-test FAILED (core -> report not caught)"; exit 1; fi
    printf '#include "report.h"\n' >"$t/core/bad.c"
    if "$0" "$t" >/dev/null 2>&1; then echo "check-layers: self-test FAILED (unprefixed include not caught)"; exit 1; fi
    printf '#include "base/log.h"\n' >"$t/core/bad.c"
    "$0" "$t" >/dev/null 2>&1 || { echo "check-layers: self-test FAILED (a downward include refused)"; exit 1; }
    echo "check-layers: self-test ok"; exit 0
fi
SRC=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}

# what each layer may include, besides itself
allowed() {
    case $1 in
        base)    echo "" ;;
        driver)  echo "base" ;;
        core)    echo "base" ;;
        hooks)   echo "base driver core" ;;
        report)  echo "base core" ;;
        cluster) echo "base core" ;;
        guard)   echo "base driver core hooks report cluster" ;;
        cli)     echo "base cluster" ;;   # cluster's layout headers only (status_layout.h); nothing of it is linked
        *)       echo "?" ;;
    esac
}

bad=0; files=0
while IFS= read -r f; do
    rel=${f#"$SRC"/}
    case $rel in */*) layer=${rel%%/*} ;; *) layer=guard ;; esac
    ok=" $layer $(allowed "$layer") "
    files=$((files + 1))
    while IFS=: read -r line inc; do
        hdr=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$inc")
        [ -n "$hdr" ] || continue
        case $hdr in ../include/*) continue ;; esac
        case $hdr in
            */*) to=${hdr%%/*} ;;
            *)   echo "$rel:$line: #include \"$hdr\" does not name its layer (write \"LAYER/$hdr\")"; bad=1; continue ;;
        esac
        case $ok in
            *" $to "*) ;;
            *) echo "$rel:$line: #include \"$hdr\": layer '$layer' may not include '$to' (calls run downward only)"; bad=1 ;;
        esac
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done < <(find "$SRC" -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
[ "$bad" = 0 ] || exit 1
echo "check-layers: $files files, every #include points down its layer"
