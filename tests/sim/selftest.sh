# selftest.sh - the simulated driver itself, without the guard: sizes that
# overflow fail; a fork while threads are inside it leaves the child a
# driver that works (tests/sim/selftest.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build sim_selftest tests/sim/selftest.c -L"$B/sim" -l:libcuda.so.1

"$T/sim_selftest" sim_sizes >"$WORK/out" 2>&1
has "sim sizes: 2 2 2" "$WORK/out" && ok "simulated driver: SIZE_MAX alloc, pitch and array sizes that wrap fail (out of memory)" \
    || bad "simulated driver sizes" "$WORK/out"
timeout 120 "$T/sim_selftest" sim_fork 60 >"$WORK/out" 2>&1
has "forks 60, children fine 60" "$WORK/out" && ok "simulated driver: 60 forks while two threads are inside it, every child works" \
    || bad "simulated driver fork" "$WORK/out"
