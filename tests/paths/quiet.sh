# quiet.sh - report and metrics paths that cannot be written are the
# environment's, not a bad value: said once, at the process's first CUDA use
# (reports then go to stderr); a process that never uses CUDA prints
# nothing. And the metrics file itself: mode 0644 whatever the umask, and
# written whatever the length of a legal file name. Sourced by run.sh.

nodir="$WORK/quiet-missing/dir"
# (not under TSan: a TSan-built library cannot be preloaded into a program
# that is not, like bash and true)
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    # a shell and ls under a job-wide LD_PRELOAD: nothing said, status as without the guard
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$nodir/r.txt" GPUMEM_METRICS="$nodir/m.prom" \
        bash -c 'ls / >/dev/null; true' >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && [ ! -s "$WORK/err" ] && [ ! -s "$WORK/out" ] \
        && ok "GPUMEM_REPORT and GPUMEM_METRICS in a missing directory: a process that never uses CUDA (bash, ls) prints nothing" \
        || bad "a non-CUDA process with unwritable paths (rc $rc)" "$WORK/err"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$nodir/r.txt" true >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && [ ! -s "$WORK/err" ] \
        && ok "GPUMEM_REPORT alone in a missing directory: true prints nothing" || bad "GPUMEM_REPORT, non-CUDA (rc $rc)" "$WORK/err"
else
    skip "unwritable paths in non-CUDA processes" "a TSan-built library cannot be preloaded into bash or true"
fi
# a CUDA program: each said once, the report on stderr
guarded GPUMEM_REPORT="$nodir/r.txt" GPUMEM_METRICS="$nodir/m.prom" "$T/nulls"; rc=$?
nr=$(grep -c "GPUMEM_REPORT='$nodir/r.txt': directory $nodir does not exist" "$WORK/err")
nm=$(grep -c "GPUMEM_METRICS='$nodir/m.prom': directory $nodir does not exist" "$WORK/err")
nw=$(grep -c "GPUMEM_METRICS" "$WORK/err")
nx=$(grep -c "$nodir/r.txt" "$WORK/err") # the report at exit, on stderr as said: not said again
if [ $rc = 0 ] && [ "$nr" = 1 ] && [ "$nm" = 1 ] && [ "$nw" = 1 ] && [ "$nx" = 1 ] && has "SUMMARY: gpumemguard" "$WORK/err"; then
    ok "the same paths in a CUDA program: each said once at its first CUDA use, not again at exit, the report on stderr, the program runs"
else bad "unwritable paths in a CUDA program (rc $rc, report said $nr, $nx in all, metrics said $nm/$nw)" "$WORK/err"; fi
# a directory, a FIFO in the file's place, a file where the directory should
# be, a missing directory, a directory that cannot be looked up (a symlink
# loop): the environment's, said once and why, the program runs
mkfifo "$WORK/q-fifo.prom"; : >"$WORK/q-file"; ln -s q-loop "$WORK/q-loop"
miss=""
for case in "$WORK|$WORK is a directory, not a file; it is left as it is, and each rewrite tries again" \
            "$WORK/q-fifo.prom|$WORK/q-fifo.prom is a device, FIFO or socket, not a file; it is left as it is" \
            "$WORK/q-file/m.prom|$WORK/q-file is not a directory; each rewrite tries again" \
            "$WORK/no-such-dir/m.prom|directory $WORK/no-such-dir does not exist (No such file or directory)" \
            "$WORK/q-loop/m.prom|directory $WORK/q-loop cannot be looked at (Too many levels of symbolic links)"; do
    m=${case%%|*}
    guarded GPUMEM_METRICS="$m" "$T/nulls"; rc=$?
    [ $rc = 0 ] && [ "$(grep -c "GPUMEM_METRICS" "$WORK/err")" = 1 ] && has "GPUMEM_METRICS='$m': ${case#*|}" "$WORK/err" \
        && has "nulls:" "$WORK/out" || miss="$miss [$m rc $rc: $(grep GPUMEM_METRICS "$WORK/err" | head -1)]"
done
rm -f "$WORK/q-fifo.prom" "$WORK/q-file" "$WORK/q-loop"
[ -z "$miss" ] && ok "GPUMEM_METRICS naming a directory, a FIFO, a path under a file, a missing directory or a symlink loop: said once with why, the program runs" \
    || bad "unwritable GPUMEM_METRICS paths:$miss" "$WORK/err"
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    # the syntax of a value still stops the process at start-up, CUDA or not
    env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/m%x.prom" true >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 2 ] && has "GPUMEM_METRICS" "$WORK/err" \
        && ok "a GPUMEM_METRICS that does not parse still stops even a non-CUDA process at start-up" \
        || bad "bad GPUMEM_METRICS syntax (rc $rc)" "$WORK/err"
fi
# the command's --report and --metrics into a missing directory: the same
if [ -z "${GMG_SANITIZER:-}" ]; then
    "$B/gpumemguard" --report "$nodir/r.txt" --metrics "$nodir/m.prom" -- bash -c 'ls / >/dev/null' >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && [ ! -s "$WORK/err" ] \
        && ok "gpumemguard --report/--metrics into a missing directory, a program that never uses CUDA: nothing said" \
        || bad "gpumemguard --report/--metrics missing dir (rc $rc)" "$WORK/err"
else
    skip "gpumemguard --report/--metrics into a missing directory" "the command preloads the guard alone (sanitizer build)"
fi

# the metrics file: 0644 under umask 077 (node_exporter runs as another user)
rm -f "$WORK/q.prom"
(umask 077; guarded GPUMEM_METRICS="$WORK/q.prom" "$T/nulls")
[ "$(stat -c %a "$WORK/q.prom" 2>/dev/null)" = 644 ] \
    && ok "GPUMEM_METRICS under umask 077: the file is mode 0644, readable by node_exporter" \
    || bad "metrics file mode under umask 077: $(stat -c %a "$WORK/q.prom" 2>&1)" "$WORK/err"
# a legal 250-byte file name: written (its temporary name fits NAME_MAX too)
long="$WORK/$(printf 'm%.0s' $(seq 1 245)).prom"
guarded GPUMEM_METRICS="$long" "$T/nulls"; rc=$?
[ $rc = 0 ] && [ -s "$long" ] && grep -q "^# TYPE gpumem_used_bytes gauge" "$long" && ! has "cannot write" "$WORK/err" \
    && [ -z "$(ls -A "$WORK" | grep -F '.gpumem-metrics.')" ] \
    && ok "GPUMEM_METRICS with a 250-byte file name: written, no temporary left" \
    || bad "metrics with a 250-byte name (rc $rc)" "$WORK/err"
