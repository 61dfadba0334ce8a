# sizes.sh - sizes read as people read them (tests/integration/alloc.c).
# Sourced by tests/run.sh (its helpers, $T, $WORK).

# sizes read as people read them: 1048575 bytes is 1.0 MiB, not 1024.0 KiB
guarded GPUMEM_LIMIT=1000 "$T/alloc" 0 1048575
has "refused cuMemAlloc of 1.0 MiB (1048575 bytes) on device 0" "$WORK/err" \
    && ok "a size just under a unit reads as the unit above (1.0 MiB (1048575 bytes))" || bad "size rounding" "$WORK/err"
