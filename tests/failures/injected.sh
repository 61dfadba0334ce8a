# injected.sh - the simulated driver failing calls (GPUSIM_FAIL): after each
# call the guard counts what the driver holds; a failed allocation keeps no
# quota, a failed free keeps its record counted (tests/failures/injected.c).
# Sourced by tests/run.sh (its helpers, $T, $WORK).
build injected tests/failures/injected.c -L"$B/sim" -l:libcuda.so.1

# every family allocated and freed while the driver fails some calls
guarded GPUSIM_FAIL="cuMemAlloc_v2:7,cuMemFree_v2:5,cuMemCreate:3,cuMemRelease:2,cuArrayCreate_v2:4,cuMemAllocPitch_v2:2,cuMemAllocManaged:3,cuMemAllocAsync:6,cuMemFreeAsync:4" \
    "$T/injected" families
if grep -qE "injected: [1-9][0-9]* failed calls, guard off the driver 0 times, guard ([0-9]+) sim \1$" "$WORK/out"; then
    ok "the driver failing allocations and frees of every family: after each call the guard counts what the driver holds"
else bad "injected driver failures" "$WORK/out"; fi

# injected driver failures of allocations and frees
tguarded 120 GPUSIM_FAIL=cuMemCreate:2,cuArrayCreate_v2:1,cuMemAllocAsync:2,cuMemRelease:1,cuMemFreeAsync:1 "$T/injected" handles
has "injected: create 0 2 array 2 0 async 0 2 (guard 3407872 sim 3407872); release 999 0 freeasync 999 0; guard 0 sim 0" "$WORK/out" \
    && ok "failed cuMemCreate, cuArrayCreate, cuMemAllocAsync keep no quota; a failed cuMemRelease and cuMemFreeAsync keep it counted" \
    || bad "injected driver failures" "$WORK/out"
