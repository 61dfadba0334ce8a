# exit_in_dump.sh - exit() from the program's signal handler while its
# thread writes a dump (tests/dumps/exit_in_dump.c). Sourced by tests/run.sh
# (its helpers, $T, $WORK, $PRELOAD).
build exit_in_dump tests/dumps/exit_in_dump.c -L"$B/sim" -l:libcuda.so.1

# exit() from the program's signal handler while the same thread writes a
# dump (held 5 s by a FIFO that takes 4 KiB): the process exits with the
# handler's status, no hang (the exit report used to wait for the lock the
# dump held, for ever; so did libdw exiting out of memory in a report)
rm -f "$WORK/slowfifo"; mkfifo "$WORK/slowfifo"
timeout 30 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/slowfifo" "$T/exit_in_dump" "$WORK/slowfifo" \
    >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "exit() called during a report on the same thread: no exit report" "$WORK/err"; then
    ok "exit() from a signal handler while its thread writes a dump: the process exits, no hang"
else bad "exit() during a dump on the same thread (rc $rc)" "$WORK/err"; fi
