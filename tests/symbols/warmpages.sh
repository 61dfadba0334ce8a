# warmpages.sh - the report thread's symbolizer warm-up gives back what it
# read and keeps only to read again: libdw's code as it ran it and the image
# of the program's file that libelf mapped, resident no more once it ends
# (before, 300 kB and more of libdw's code, and the image's pages read),
# and never a mapping of libdw's file the program made itself;
# the exit report then still names the frame (tests/symbols/warmpages.c).
# Sourced by run.sh (its helpers, $B, $T, $WORK, $PRELOAD).
build warmpages tests/symbols/warmpages.c -L"$B/sim" -l:libcuda.so.1
guarded GPUMEM_STACK_DEPTH=32 "$T/warmpages"
read -r _ image _ _ _ dw _ _ own _ own_size _ <"$WORK/out" || true
if [ "$image" = 0 ] && [ -n "$dw" ] && [ "$dw" -le 64 ] && [ -n "$own" ] && [ "$own" -gt 0 ] && [ "$own" = "$own_size" ] \
   && { [ "${GMG_SANITIZER:-}" = tsan ] || grep -q " in warmpages_site tests/symbols/warmpages.c:[0-9]" "$WORK/err"; } \
   && grep -q " in warmpages_site " "$WORK/err"; then
    ok "the symbolizer's warm-up gives back libdw's code and the program's file image it read, never the program's own mapping of libdw (resident: $(cat "$WORK/out")); the exit report still names the frame"
else bad "the warm-up's pages given back: $(cat "$WORK/out")" "$WORK/err"; fi

# under a tracer (a debugger may write breakpoints into libdw's code while
# the threads are stopped, between the look at a page and its drop) the
# libraries' code stays resident; the image is still given back
if ! command -v strace >/dev/null 2>&1; then
    skip "the warm-up under a tracer keeps libdw's code" "no strace here"
else
    strace -f -o /dev/null env LD_PRELOAD="$PRELOAD" GPUSIM_STATS="$WORK/stats" GPUMEM_STACK_DEPTH=32 "$T/warmpages" >"$WORK/out" 2>"$WORK/err"
    read -r _ image _ _ _ dw _ <"$WORK/out" || true
    if [ "$image" = 0 ] && [ -n "$dw" ] && [ "$dw" -gt 64 ]; then
        ok "the warm-up under a tracer (strace) leaves libdw's code resident, gives back the file image ($(cat "$WORK/out"))"
    else bad "the warm-up under a tracer: $(cat "$WORK/out")" "$WORK/err"; fi
fi
