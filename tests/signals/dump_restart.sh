# dump_restart.sh - the dump signal is invisible to a program blocked in a
# system call: its read() is restarted, never EINTR. Sourced by tests/run.sh.
build dump_restart tests/signals/dump_restart.c -L"$B/sim" -l:libcuda.so.1
guarded GPUMEM_REPORT="$WORK/restart.%n.txt" "$T/dump_restart"; rc=$?
if [ $rc = 0 ] && has "read: 1 'x' errno 0" "$WORK/out" && [ -s "$WORK/restart.1.txt" ] \
   && has "(signal" "$WORK/restart.1.txt"; then
    ok "a dump (SIGUSR1) while the program, with no handler of its own, is blocked in read(): the dump is written and the read restarted, not EINTR"
else
    cat "$WORK/out" "$WORK/err" >"$WORK/restart.log" 2>/dev/null; bad "read() restarted across a dump (rc $rc)" "$WORK/restart.log"
fi
