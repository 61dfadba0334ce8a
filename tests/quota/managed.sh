# managed.sh - GPUMEM_COUNT_MANAGED: managed memory counts against the
# limit (1, the default) or is tracked and reported without counting (0)
# (tests/quota/managed.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
build managed tests/quota/managed.c -L"$B/sim" -l:libcuda.so.1

tguarded 60 GPUMEM_LIMIT=4M "$T/managed"
has "managed: managed 8MiB 2, 4MiB 0, +1 2; guard 4194304 sim 4194304" "$WORK/out" \
    && ok "managed memory counts against GPUMEM_LIMIT by default: 8 MiB refused under 4M" \
    || bad "managed memory counted" "$WORK/out"
tguarded 60 GPUMEM_LIMIT=4M GPUMEM_COUNT_MANAGED=0 "$T/managed"
if has "managed: managed 8MiB 0, 4MiB 0, +1 2; guard 4194304 sim 12582912" "$WORK/out" \
   && grep -A1 -F "8.0 MiB (8388608 bytes) in 1 allocation (cuMemAllocManaged, device 0) allocated from:" "$WORK/err" | grep -q " in managed_site "; then
    ok "GPUMEM_COUNT_MANAGED=0: 8 MiB managed allowed under 4M, not counted, still reported as live"
else bad "GPUMEM_COUNT_MANAGED=0" "$WORK/out"; fi

# CUDA 13's managed memory pools: their memory is managed memory, counted or not as cuMemAllocManaged's
tguarded 60 GPUMEM_LIMIT=4M "$T/managed" pools
if has "managed pools: 8MiB 2 2 2, 4MiB 0, +1 2; guard 4194304" "$WORK/out"; then
    ok "managed memory pools (by location at the host and a device, and made): 8 MiB from each refused under 4M, as managed memory"
else bad "managed memory pools counted" "$WORK/out"; fi
tguarded 60 GPUMEM_LIMIT=4M GPUMEM_COUNT_MANAGED=0 "$T/managed" pools
if has "managed pools: 8MiB 0 0 0, 4MiB 0, +1 2; guard 4194304" "$WORK/out" \
   && grep -A1 -F "24.0 MiB (25165824 bytes) in 3 allocations (cuMemAllocManaged, device 0) allocated from:" "$WORK/err" \
      | grep -q " in managed_pool_site "; then
    ok "GPUMEM_COUNT_MANAGED=0: 8 MiB from each managed memory pool allowed under 4M, not counted, reported live as managed memory on device 0"
else bad "GPUMEM_COUNT_MANAGED=0, managed memory pools" "$WORK/out" "$WORK/err"; fi
