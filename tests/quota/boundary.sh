# boundary.sh - GPUMEM_LIMIT to the byte, family by family, on the pool's
# or handle's device (tests/quota/boundary.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build boundary tests/quota/boundary.c -L"$B/sim" -l:libcuda.so.1

# the limit to the byte, family by family, on the pool's or handle's device
tguarded 120 GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:8M,1:8M GPUMEM_STACK_DEPTH=0 "$T/boundary"
has "boundary: 0 2 0 2 2 0 0 0 0 2 0 0 2; device 0 guard 0 sim 0; device 1 guard 0 sim 0" "$WORK/out" \
    && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" \
    && ok "GPUMEM_LIMIT to the byte: another device's pool, cuMemCreate (released while mapped), arrays, mipmaps; a graph node over it; all back to 0" \
    || bad "the limit to the byte" "$WORK/out"
