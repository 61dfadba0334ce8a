# warmpages.sh - the report thread's symbolizer warm-up gives back what it
# read and keeps only to read again: libdw's code as it ran it and the image
# of the program's file that libelf mapped, resident no more once it ends
# (before, 300 kB and more of libdw's code, and the image's pages read);
# the exit report then still names the frame (tests/symbols/warmpages.c).
# Sourced by run.sh (its helpers, $B, $T, $WORK, $PRELOAD).
build warmpages tests/symbols/warmpages.c -L"$B/sim" -l:libcuda.so.1
guarded GPUMEM_STACK_DEPTH=32 "$T/warmpages"
read -r _ image _ _ _ dw _ <"$WORK/out" || true
if [ "$image" = 0 ] && [ -n "$dw" ] && [ "$dw" -le 64 ] \
   && { [ "${GMG_SANITIZER:-}" = tsan ] || grep -q " in warmpages_site tests/symbols/warmpages.c:[0-9]" "$WORK/err"; } \
   && grep -q " in warmpages_site " "$WORK/err"; then
    ok "the symbolizer's warm-up gives back libdw's code and the program's file image it read (resident: $(cat "$WORK/out")); the exit report still names the frame"
else bad "the warm-up's pages given back: $(cat "$WORK/out")" "$WORK/err"; fi
