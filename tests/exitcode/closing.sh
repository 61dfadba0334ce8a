# closing.sh - GPUMEM_EXITCODE sets the status on a leak only once every
# library is finalized: the program's own shared libraries, finalized after
# the guard (loaded first), still run their destructors (a log's last line
# and its close). Sourced by tests/run.sh (its helpers, $B, $T, $WORK).
build libclosing.so -shared -fPIC tests/exitcode/libclosing.c
build closing tests/exitcode/closing.c -L"$T" -lclosing -Wl,-rpath,"$ROOT/$T" -L"$B/sim" -l:libcuda.so.1
rm -f "$WORK/closing.log"
guarded GPUMEM_EXITCODE=23 CLOSING_LOG="$WORK/closing.log" "$T/closing"; rc=$?
if [ $rc = 23 ] && has "a line from main" "$WORK/closing.log" \
   && has "closing line, written by the library's destructor" "$WORK/closing.log"; then
    ok "GPUMEM_EXITCODE=23 on a leak: the program's own library still runs its destructor (its log complete), then the status is 23"
else bad "GPUMEM_EXITCODE cut the program's library destructors (rc $rc): $(cat "$WORK/closing.log" 2>&1 | tr '\n' '|')" "$WORK/err"; fi
