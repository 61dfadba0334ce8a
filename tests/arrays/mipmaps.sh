# mipmaps.sh - mipmapped arrays counted as the driver makes them: layered
# and cubemap ones, level counts clamped (tests/arrays/mipmaps.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build mipmaps tests/arrays/mipmaps.c -L"$B/sim" -l:libcuda.so.1

# layered and cubemap mipmapped arrays: every level has every layer
tguarded 120 GPUMEM_LIMIT=46924 "$T/mipmaps" mipmap_layered
if has "mipmap layered: 0 0 0, 1 byte more 2; guard 46924 sim 46924" "$WORK/out" \
   && has "mipmap layered: destroyed; guard 0 sim 0" "$WORK/out"; then
    ok "layered and cubemap mipmapped arrays: each level counts all layers (46924 bytes, the limit's every byte; one more refused)"
else bad "layered mipmapped arrays" "$WORK/out"; fi

# a mipmapped array's level count, clamped as the driver clamps it: 0
# levels are 1 (never free), 100 levels of a 64x64 array are 7
tguarded 120 GPUMEM_LIMIT=9557 "$T/mipmaps" mipmap_levels
if has "mipmap levels: 0 0, 1 byte more 2; guard 9557 sim 9557" "$WORK/out" \
   && has "mipmap levels: destroyed; guard 0 sim 0" "$WORK/out"; then
    ok "mipmapped arrays of 0 and 100 levels count the 1 and 7 levels the driver makes (9557 bytes, the limit's every byte; one more refused)"
else bad "mipmap level counts" "$WORK/out"; fi
