# unwritable.sh - report paths that cannot take a report: a FIFO with no
# reader, a directory, a symlink, a pipe whose reader has gone, a file whose
# close fails (tests/paths/failclose.c). Never a hang, one message, the
# report on stderr (tests/dumps/dumps.c). Sourced by tests/run.sh (its
# helpers, $ROOT, $T, $WORK, $PRELOAD).
build libfailclose.so -shared -fPIC tests/paths/failclose.c

# a report path that is a FIFO with no reader (or a directory) never hangs
mkfifo "$WORK/fifo"; mkdir -p "$WORK/adir"
for dest in "$WORK/fifo" "$WORK/adir"; do
    kind=$([ -d "$dest" ] && echo "directory" || echo "FIFO with no reader")
    timeout 30 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$dest" "$T/dumps" dump_exit >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "cannot write report to $dest" "$WORK/err" && has "SUMMARY: gpumemguard" "$WORK/err"; then
        ok "GPUMEM_REPORT is a $kind: no hang, one message, the report on stderr"
    else bad "report to a $kind (rc $rc)" "$WORK/err"; fi
done

# a symlink as report path: one line, no misleading errno
ln -sf "$WORK/target2" "$WORK/link2"
guarded GPUMEM_REPORT="$WORK/link2" "$T/dumps" dump_exit
[ "$(grep -c "link2" "$WORK/err")" = 1 ] && ! has "Invalid argument" "$WORK/err" \
    && ok "a symlinked report path is refused in one line" || bad "symlink message" "$WORK/err"

# a report to a pipe whose reader has gone: no SIGPIPE death
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=stdout "$T/dumps" dumps 0 2>"$WORK/err" | (exec 0<&-); rc=${PIPESTATUS[0]}
env LD_PRELOAD="$PRELOAD" "$T/dumps" dumps 0 2>&1 >/dev/null | (exec 0<&-); rc2=${PIPESTATUS[0]}
[ $rc = 0 ] && [ $rc2 = 0 ] && has "cannot write report to stdout" "$WORK/err" \
    && ok "a report to a pipe whose reader has gone: no SIGPIPE death, the report falls back to stderr" \
    || bad "SIGPIPE (status $rc, $rc2)" "$WORK/err"

# a report whose file fails at close (a write error NFS or a quota reports
# only then): not renamed into place, the temporary removed, the report on
# stderr
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a report file failing at close" "a close() preloaded beside the guard crashes TSan-built programs (segfault); plain and ASan builds run it"
else
    rm -rf "$WORK/closefail"; mkdir -p "$WORK/closefail"
    timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libfailclose.so" GPUMEM_REPORT="$WORK/closefail/r.txt" "$T/dumps" dump_exit \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && [ -z "$(ls "$WORK/closefail")" ] && has "cannot write report to $WORK/closefail/r.txt (Input/output error)" "$WORK/err" \
       && has "gpumemguard report (signal, dump 1)" "$WORK/err" && has "SUMMARY: gpumemguard: 197520 bytes" "$WORK/err"; then
        ok "a report file whose close fails (EIO): no file put in place, no temporary left, the reports on stderr"
    else bad "close failing on the report file (rc $rc): $(ls "$WORK/closefail" | tr '\n' ' ')" "$WORK/err"; fi
fi
