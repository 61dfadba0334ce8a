# frees.sh - two threads freeing one pointer at once, with and without a
# third reusing the address (tests/races/frees.c): no phantom record, no
# double release, never fewer bytes counted than the driver holds. Sourced
# by tests/run.sh (its helpers, $T, $WORK).
build racing_frees tests/races/frees.c -L"$B/sim" -l:libcuda.so.1

guarded GPUSIM_FREE_DELAY_US=20 "$T/racing_frees" double_free 1500
has "double free: 1500 rounds, 0 phantoms, guard 0, sim 0" "$WORK/out" \
    && ok "two threads freeing one pointer at once, 1500 rounds: no phantom record, no double release" \
    || bad "concurrent double free" "$WORK/out"
guarded GPUSIM_FREE_DELAY_US=20 "$T/racing_frees" array_destroy 500
has "array destroy: 500 rounds, 0 wrong, guard 0, sim 0" "$WORK/out" \
    && ok "two threads destroying one array at once, 500 rounds: one of them succeeds each time, nothing stays counted" \
    || bad "concurrent array destroy" "$WORK/out"

# the same, with a third thread allocating the freed address again at once
guarded GPUSIM_FREE_DELAY_US=100 GPUSIM_AFTER_FREE_US=2000 "$T/racing_frees" free_reuse 100
has "free and reuse: 100 rounds, 0 with the guard below the driver" "$WORK/out" \
    && ok "racing frees while a third thread reuses the address: its allocation stays counted (100 rounds)" \
    || bad "racing frees with address reuse" "$WORK/out"

# one exact race: the second free of p reaches the driver after the
# driver gave p's address out again, and frees that newer allocation
# (a machine too loaded to keep the order, 300 ms apart either way, says
# "another address": tried again, up to three times)
for try in 1 2 3; do
    guarded GPUSIM_FREE_DELAYS=600000,600000 GPUMEM_LIMIT=64M "$T/racing_frees" aba
    has "aba: another address" "$WORK/out" || break
done
if has "aba: same address, guard 0, sim 0" "$WORK/out" && has "aba: then the whole limit: 0" "$WORK/out"; then
    ok "a double free that reaches the driver after the address was given out again: the newer allocation it freed is gone from the count, the whole limit free"
else bad "a double free freeing a newer allocation at its address" "$WORK/out"; fi
# the same, and a third allocation at that address after the second free
# was done and before it settles: live, and counted
for try in 1 2 3; do
    guarded GPUSIM_FREE_DELAYS=600000,600000 GPUSIM_AFTER_FREE_US=300000 GPUMEM_LIMIT=64M "$T/racing_frees" aba_late
    has "aba: another address" "$WORK/out" || break
done
if has "aba: same address twice, guard 1048576, sim 1048576" "$WORK/out"; then
    ok "the same, and the address given out a third time before the second free settles: that allocation stays counted"
else bad "a double free's newer allocation, then a third at the address" "$WORK/out"; fi
