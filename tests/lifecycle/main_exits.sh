# main_exits.sh - a program whose main thread ends by pthread_exit ends when
# its last thread does, as without the guard (whose own thread never ends):
# status 0, the exit report with its frames named (the zombie main thread's
# /proc/PID/maps reads empty), and `gpumemguard dump` finds the process
# guarded meanwhile (tests/lifecycle/main_exits.c). Sourced by tests/run.sh
# (its helpers, $B, $T, $WORK, $PRELOAD).
build main_exits tests/lifecycle/main_exits.c -L"$B/sim" -l:libcuda.so.1
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a main thread ended by pthread_exit" "TSan's runtime keeps a thread of its own, which /proc counts: the guard's thread cannot tell it is the last (plain and ASan builds run it)"
else
timeout -s KILL 20 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/me.%p.txt" "$T/main_exits" 3 >"$WORK/out" 2>"$WORK/err" &
me_bg=$!
for _ in $(seq 100); do grep -q "^ready" "$WORK/out" && break; sleep 0.05; done
me_pid=$(sed -n 's/^ready //p' "$WORK/out"); sleep 0.5
if [ -z "${GMG_SANITIZER:-}" ]; then
    "$B/gpumemguard" dump "$me_pid" >"$WORK/dump.out" 2>&1; me_dump=$?
else me_dump=0; fi
wait $me_bg; rc=$?
me_exit=$(grep -l "still live at exit" "$WORK"/me.*.txt 2>/dev/null | head -1)
if [ $rc = 0 ] && [ $me_dump = 0 ] && [ -n "$me_exit" ] && grep -q "SUMMARY: gpumemguard: 5242880 bytes in 2 allocations still live at exit" "$me_exit" \
   && grep -q " in main_alloc .*main_exits.c" "$me_exit" && grep -q " in worker .*main_exits.c" "$me_exit"; then
    ok "the main thread ended by pthread_exit: the process ends with its last thread (status 0, not kept alive by the guard's), its exit report's frames named, and dump finds it"
else bad "main thread ended by pthread_exit (rc $rc: 137 is kept alive; dump $me_dump: $(cat "$WORK/dump.out" 2>/dev/null))" "${me_exit:-$WORK/err}"; fi
fi
