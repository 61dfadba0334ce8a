# everyday/everyday.sh - what a new user meets first: report names (the
# program with its arguments, no symbol versions), `gpumemguard dump`
# naming the file it caused, --help with an option for every setting, an
# option's bad value named as typed, the pkg-config file, `make demo`.
# Sourced by run.sh after tests/sites/sites.sh (which builds $T/unrolled).
GMG=$B/gpumemguard

# the program with its arguments, in text and JSON; no @GLIBC version anywhere
guarded GPUMEM_REPORT="$WORK/names.%n" GPUMEM_REPORT_FORMAT=text,json,folded "$T/unrolled" 1 'a b'
cmd="$T/unrolled 1 'a b'"
if grep -qF "gpumemguard report (exit, dump 1) for $cmd [gpumemguard " "$WORK/names.1.txt" \
   && grep -qF "program: $ROOT/$T/unrolled" "$WORK/names.1.txt" \
   && [ "$(jq -r .cmdline "$WORK/names.1.json" 2>/dev/null)" = "$cmd" ] \
   && [ "$(jq -r .exe "$WORK/names.1.json" 2>/dev/null)" = "$ROOT/$T/unrolled" ]; then
    ok "reports name the program with its arguments ($cmd), and its path"
else
    cat "$WORK/names.1.txt" >"$WORK/namesall" 2>/dev/null; bad "reports: the program's arguments" "$WORK/namesall"
fi
# an argument and a program path holding a terminal's control sequences
# (ESC, BEL, a C1 CSI in UTF-8): written as \xHH in text, exact in JSON
esc=$(printf '\033]0;owned\007\302\233') prog="$WORK/un$(printf '\033')[1mrolled"
cp "$T/unrolled" "$prog"
# (and a lone byte 0x9b, no UTF-8: CSI to a terminal in 8-bit mode; JSON has U+FFFD)
lone=$(printf 'z\233z') fffd=$(printf '\357\277\275')
guarded GPUMEM_REPORT="$WORK/ctl.%n" GPUMEM_REPORT_FORMAT=text,json "$prog" 1 "x${esc}y" "$lone"
if grep -qF 'rolled 1 x\x1b]0;owned\x07\xc2\x9by z\x9bz [gpumemguard ' "$WORK/ctl.1.txt" \
   && grep -qF "for $WORK"'/un\x1b[1mrolled 1 ' "$WORK/ctl.1.txt" && grep -qF '(un\x1b[1mrolled+0x' "$WORK/ctl.1.txt" \
   && ! LC_ALL=C grep -q "$(printf '[\033\007]')" "$WORK/ctl.1.txt" && ! LC_ALL=C grep -q "$(printf '\233')" "$WORK/ctl.1.txt" \
   && [ "$(jq -r .cmdline "$WORK/ctl.1.json" 2>/dev/null)" = "$prog 1 x${esc}y z${fffd}z" ]; then
    ok "reports: control characters of the arguments and the program's path written as \\xHH in text (no escape sequence reaches a terminal), exact in JSON"
else
    cat -v "$WORK/ctl.1.txt" >"$WORK/ctlall" 2>/dev/null; bad "reports: control characters of the command line written raw" "$WORK/ctlall"
fi
if grep -q '__libc_start_main' "$WORK/names.1.txt" && grep -q '__libc_start_main' "$WORK/names.1.folded" \
   && ! grep -q '@GLIBC\|@@' "$WORK/names.1.txt" "$WORK/names.1.json" "$WORK/names.1.folded"; then
    ok "frames carry no symbol version (__libc_start_main, not __libc_start_main@@GLIBC_2.34) in text, JSON, folded"
else
    grep -h '@' "$WORK/names.1".* >"$WORK/namesat" 2>/dev/null; bad "symbol versions in frames" "$WORK/namesat"
fi
if grep -q '^==[0-9]*== live: 4.0 MiB (4194304 bytes) in 4 allocations;' "$WORK/names.1.txt" \
   && grep -q '^==[0-9]*== device 0: limit none, in use 4.0 MiB (4194304 bytes), peak 4.0 MiB (4194304 bytes), refused 0$' "$WORK/names.1.txt" \
   && grep -q '^  live allocations: 4 (4.0 MiB (4194304 bytes) requested, 4.0 MiB (4194304 bytes) granted)$' "$WORK/names.1.txt" \
   && grep -q '^SUMMARY: gpumemguard: 4194304 bytes in 4 allocations still live at exit$' "$WORK/names.1.txt"; then
    ok "sizes as people read them in headers, groups and fragmentation; SUMMARY in LeakSanitizer's plain form"
else
    bad "sizes as people read them" "$WORK/names.1.txt"
fi

# --help: an option for every setting the library reads
if true; then
    "$GMG" --help >"$WORK/help" 2>&1
    settings=$(sed -n '/^static const char \*const known\[\]/,/};/p' src/base/config.c | grep -o '"GPUMEM_[A-Z_]*"' | tr -d '"')
    [ -n "$settings" ] || settings=$(grep -o '"GPUMEM_[A-Z_]*"' src/base/config.c | tr -d '"' | sort -u)
    miss=""
    for v in $settings; do grep -qE -- "--[a-z-]+ [A-Z0-9|]+ +$v " "$WORK/help" || miss="$miss $v"; done
    if [ -z "$miss" ] && [ -n "$settings" ]; then
        ok "gpumemguard --help lists an option for every setting ($(echo $settings | wc -w))"
    else
        bad "--help: no option for$miss" "$WORK/help"
    fi
fi

# an option's bad value is named as the user typed it
if [ -z "${GMG_SANITIZER:-}" ]; then
    "$GMG" --limit 1gb -- "$T/unrolled" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 2 ] && has "--limit '1gb' (GPUMEM_LIMIT) is not valid" "$WORK/err"; then
        ok "gpumemguard --limit 1gb: status 2, the message names --limit as typed"
    else
        bad "--limit 1gb (rc $rc)" "$WORK/err"
    fi
    "$GMG" --metrics-interval 0 --python maybe -- "$T/unrolled" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 2 ] && grep -q -- "--metrics-interval '0' (GPUMEM_METRICS_INTERVAL)\|--python 'maybe' (GPUMEM_PYTHON)" "$WORK/err"; then
        ok "gpumemguard --metrics-interval / --python: bad values named by their options"
    else
        bad "--metrics-interval 0 --python maybe (rc $rc)" "$WORK/err"
    fi
    env LD_PRELOAD="$PRELOAD" GPUMEM_LIMIT=1gb "$T/unrolled" >/dev/null 2>"$WORK/err"; rc=$?
    if [ $rc = 2 ] && has "GPUMEM_LIMIT='1gb' is not valid" "$WORK/err" && ! has "--limit" "$WORK/err"; then
        ok "GPUMEM_LIMIT=1gb set by hand: the message names the variable"
    else
        bad "GPUMEM_LIMIT=1gb by hand (rc $rc)" "$WORK/err"
    fi
    # a launcher under the command sets the variable itself: named as the variable
    "$GMG" --limit 4G -- env GPUMEM_LIMIT=1gb "$T/unrolled" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 2 ] && has "GPUMEM_LIMIT='1gb' is not valid" "$WORK/err" && ! has "--limit" "$WORK/err"; then
        ok "gpumemguard --limit 4G -- env GPUMEM_LIMIT=1gb ...: the message names the variable, not the option the user gave a good value"
    else
        bad "a launcher's own bad GPUMEM_LIMIT under --limit (rc $rc)" "$WORK/err"
    fi
else
    skip "option values named as typed" "the command preloads the library alone"
fi

# gpumemguard dump names the file its dump went to, once written: dump 2
# of a path without %n is p.2.txt; several formats, one file each
if [ -z "${GMG_SANITIZER:-}" ]; then
    build idle tests/integration/idle.c -L"$B/sim" -l:libcuda.so.1
    mkdir -p "$WORK/edump"
    rm -f "$WORK/ed.ready" "$WORK/ed.done"
    "$GMG" --report "$WORK/edump/p.txt" -- "$T/idle" "$WORK/ed.ready" "$WORK/ed.done" 20 >/dev/null 2>"$WORK/ed.err" &
    ed=$!
    for _ in $(seq 200); do [ -e "$WORK/ed.ready" ] && break; sleep 0.05; done
    "$GMG" dump "$ed" >"$WORK/d1" 2>&1; "$GMG" dump "$ed" >"$WORK/d2" 2>&1
    if has "its report is written: $WORK/edump/p.txt" "$WORK/d1" && has "its report is written: $WORK/edump/p.2.txt" "$WORK/d2" \
       && has "gpumemguard report (signal, dump 2)" "$WORK/edump/p.2.txt"; then
        ok "gpumemguard dump prints the file its dump was written to (p.txt, then p.2.txt), once written"
    else
        cat "$WORK/d1" "$WORK/d2" >"$WORK/dd"; bad "dump: the written file" "$WORK/dd"
    fi
    touch "$WORK/ed.done"; wait "$ed"
    rm -f "$WORK/ed.ready" "$WORK/ed.done"
    "$GMG" --report "$WORK/edump/m.%p.%n" --format json,text -- "$T/idle" "$WORK/ed.ready" "$WORK/ed.done" 20 >/dev/null 2>"$WORK/ed.err" &
    ed=$!
    for _ in $(seq 200); do [ -e "$WORK/ed.ready" ] && break; sleep 0.05; done
    prog=$(cat "/proc/$ed/task/$ed/children" 2>/dev/null | tr -d ' ')
    "$GMG" dump "$ed" >"$WORK/d1" 2>&1
    if has "its report is written: $WORK/edump/m.$prog.1.txt, $WORK/edump/m.$prog.1.json" "$WORK/d1" \
       && [ -s "$WORK/edump/m.$prog.1.txt" ] && [ -s "$WORK/edump/m.$prog.1.json" ]; then
        ok "gpumemguard dump with two formats and %p.%n: names both files"
    else
        bad "dump: two formats" "$WORK/d1"
    fi
    touch "$WORK/ed.done"; wait "$ed"
fi

# the pkg-config file agrees with gpumemguard.h: Cflags only (the library
# is preloaded, its API found with dlsym), so nothing links the guard in
make -s "B=$B" "$B/gpumemguard.pc" >/dev/null 2>&1
if [ -f "$B/gpumemguard.pc" ] && grep -q '^Cflags: -I' "$B/gpumemguard.pc" && ! grep -q -- '-lgpumemguard\|^Libs:' "$B/gpumemguard.pc" \
   && grep -q '^preload=' "$B/gpumemguard.pc" && grep -q 'dlsym(RTLD_DEFAULT' include/gpumemguard.h \
   && ! grep -q 'lgpumemguard' include/gpumemguard.h; then
    ok "gpumemguard.pc has Cflags and no Libs, as gpumemguard.h says (dlsym, never linked)"
else
    bad "gpumemguard.pc and gpumemguard.h disagree" "$B/gpumemguard.pc"
fi

# make demo leads with the README's command, then the same by hand
if [ -z "${GMG_SANITIZER:-}" ]; then
    scripts/demo.sh "$B" >"$WORK/demo" 2>&1; rc=$?
    if [ $rc = 0 ] && has "gpumemguard --limit 256M -- ./leaky" "$WORK/demo" && has "LD_PRELOAD=" "$WORK/demo" \
       && [ "$(grep -c '^SUMMARY: gpumemguard: ' "$WORK/demo")" = 3 ] \
       && grep -q "^gpumemguard: the driver refused cuMemAlloc of 2.0 GiB" "$WORK/demo" \
       && grep -q "^Live at the peak of device 0 (152043520 bytes)" "$WORK/demo" \
       && [ "$(grep -n 'gpumemguard --limit 256M -- ./leaky' "$WORK/demo" | head -1 | cut -d: -f1)" -lt \
            "$(grep -n 'LD_PRELOAD=' "$WORK/demo" | head -1 | cut -d: -f1)" ]; then
        ok "make demo runs the README's command (gpumemguard --limit 256M -- ./leaky), then the same by hand, then the driver's own out of memory with what was live at the peak"
    else
        bad "make demo (rc $rc)" "$WORK/demo"
    fi
    # what it tells the reader to look for is what the runs print: the
    # leaking line its reports name, and how many runs there are
    said=$(sed -n 's/.*5 x 16 MiB (\(scripts\/demo_leaky\.c:[0-9]*\)).*/\1/p' "$WORK/demo" | head -1)
    runs=$(sed -n 's/.*(the program runs \([a-z]*\) times\?:.*/\1/p' "$WORK/demo")
    if [ -n "$said" ] && grep -A1 "80.0 MiB (83886080 bytes) in 5 allocations" "$WORK/demo" | grep -q " in train_step $said " \
       && [ "$runs" = three ] && [ "$(grep -c '^SUMMARY: gpumemguard: ' "$WORK/demo")" = 3 ]; then
        ok "make demo's guide names the leaking line its reports name ($said) and says how many runs follow ($runs)"
    else
        bad "make demo's guide: line '$said', runs '$runs'" "$WORK/demo"
    fi
fi
