# primary.sh - the primary context: the last release, a reset and a
# destroy the driver refuses reclaim exactly what the driver frees, also for
# a driver whose cuDevicePrimaryCtxGetState cannot answer (the guard counts
# retains itself) (tests/teardown/primary.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build primary_context tests/teardown/primary.c -L"$B/sim" -l:libcuda.so.1

# the last cuDevicePrimaryCtxRelease resets the context (the driver frees its
# memory): reclaimed then, not at an earlier release; also for a driver
# whose cuDevicePrimaryCtxGetState cannot answer (the guard counts retains)
for cfg in "" GPUSIM_NO_PRIMARY_STATE=1; do
    tguarded 60 $cfg "$T/primary_context" release
    if has "release: after the first release guard 1048576 sim 1048576; after the last guard 0 sim 0; retained again guard 262144 sim 262144" "$WORK/out" \
       && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q " in leak_before_release " \
       && has "SUMMARY: gpumemguard: 262144 bytes in 1 allocation still live at exit, 1048576 bytes in 1 allocation reclaimed by context teardown" "$WORK/err"; then
        ok "the last cuDevicePrimaryCtxRelease reclaims the context's memory, an earlier one does not${cfg:+ ($cfg)}"
    else bad "last primary context release${cfg:+ ($cfg)}" "$WORK/out"; fi
done

# a reset keeps the primary context's retain count: the release after it that
# is not the last reclaims nothing; also where the guard counts retains itself
for cfg in "" GPUSIM_NO_PRIMARY_STATE=1; do
    tguarded 60 $cfg "$T/primary_context" reset_refs
    has "reset_refs: after a release guard 1048576 sim 1048576; after the last guard 0 sim 0" "$WORK/out" \
        && ok "a primary context reset keeps the retain count: only the last release reclaims${cfg:+ ($cfg)}" \
        || bad "retain count across a reset${cfg:+ ($cfg)}" "$WORK/out"
done

# a driver whose cuDevicePrimaryCtxGetState cannot answer: reset still reclaims
guarded GPUSIM_NO_PRIMARY_STATE=1 "$T/apitest" direct reset
if has "guard live 131072 sim live 131072" "$WORK/out" && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q leak_before_reset; then
    ok "without cuDevicePrimaryCtxGetState, a primary context reset still reclaims (context remembered from retain)"
else bad "reset without GetState" "$WORK/err"; fi

# cuCtxDestroy of a primary context: the driver refuses, its memory stays
tguarded 60 "$T/primary_context" destroy_primary
has "destroy primary: refused; guard 1048576 sim 1048576" "$WORK/out" \
    && ok "cuCtxDestroy(_v2) the driver refuses (a primary context): nothing reclaimed, the memory still counts" \
    || bad "refused cuCtxDestroy" "$WORK/out"

# the thread's context reset by the driver (still current): an allocation
# gets the driver's error, not a refusal charged to some device
env "$T/primary_context" stale_ctx >"$WORK/out0" 2>/dev/null
tguarded 60 GPUMEM_LIMIT=1M "$T/primary_context" stale_ctx
if grep -q "^stale context: alloc [1-9]" "$WORK/out0" && cmp -s "$WORK/out0" "$WORK/out" && ! has "refused" "$WORK/err"; then
    ok "an allocation in a context the driver has reset: the driver's own error ($(cut -d' ' -f4 "$WORK/out0")), no refusal"
else bad "allocation in a reset context: guarded '$(cat "$WORK/out")', driver '$(cat "$WORK/out0")'" "$WORK/err"; fi
