# during_free.sh - a context torn down while a thread frees its memory: the
# record is reclaimed, not live, its quota released
# (tests/teardown/during_free.c). Sourced by tests/run.sh (its helpers, $T,
# $WORK).
build teardown_race tests/teardown/during_free.c -L"$B/sim" -l:libcuda.so.1

guarded GPUSIM_FREE_DELAY_US=100000 "$T/teardown_race"
if has "after teardown: guard 0 sim 0" "$WORK/out" && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q leak_in_doomed; then
    ok "a context torn down during a free of its memory: the record is reclaimed, its quota released"
else bad "teardown during a free" "$WORK/err"; fi
