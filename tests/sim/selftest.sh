# selftest.sh - the simulated driver itself, without the guard: sizes that
# overflow fail; linear memory and arrays share the device; a fork while threads are inside it leaves the child a
# driver that works (tests/sim/selftest.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build sim_selftest tests/sim/selftest.c -L"$B/sim" -l:libcuda.so.1

"$T/sim_selftest" sim_sizes >"$WORK/out" 2>&1
has "sim sizes: 2 2 2" "$WORK/out" && ok "simulated driver: SIZE_MAX alloc, pitch and array sizes that wrap fail (out of memory)" \
    || bad "simulated driver sizes" "$WORK/out"
GPUSIM_MEM=64M "$T/sim_selftest" sim_shared >"$WORK/out" 2>&1
has "sim shared: 2, free within total" "$WORK/out" \
    && ok "simulated driver: memory an array holds is not given again as linear memory (40 MiB + 40 MiB of 64 MiB: out of memory)" \
    || bad "simulated driver: arrays and linear memory share the device" "$WORK/out"
timeout 120 "$T/sim_selftest" sim_fork 60 >"$WORK/out" 2>&1
has "forks 60, children fine 60" "$WORK/out" && ok "simulated driver: 60 forks while two threads are inside it, every child works" \
    || bad "simulated driver fork" "$WORK/out"
# a capacity that is not a size ends the program with a message, not a
# device of a few bytes that refuses every allocation
sim_caps=""
for cap in GPUSIM_MEM=64X GPUSIM_MEM=8G,M GPUSIM_HOST_MEM=lots GPUSIM_MEM=-1G GPUSIM_MEM=1G,; do
    env "$cap" "$T/sim_selftest" sim_sizes >"$WORK/out" 2>&1
    rc=$?; name=${cap%%=*}; val=${cap#*=}; val=${val##*,}
    [ $rc = 2 ] && has "gpusim: $name: '$val' is not a size (a number, then K, M, G or T)" "$WORK/out" || sim_caps="$sim_caps $cap(rc $rc)"
done
env GPUSIM_MEM=1G,2k GPUSIM_HOST_MEM=4096 "$T/sim_selftest" sim_sizes >"$WORK/out" 2>&1 && has "sim sizes: 2 2 2" "$WORK/out" \
    || sim_caps="$sim_caps good-sizes"
[ -z "$sim_caps" ] && ok "simulated driver: GPUSIM_MEM and GPUSIM_HOST_MEM that are not sizes (64X, M, lots, -1G, an empty one) end it with a message; 1G,2k and 4096 are taken" \
    || bad "simulated driver capacities:$sim_caps" "$WORK/out"
