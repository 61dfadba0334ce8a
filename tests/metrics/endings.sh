# endings.sh - the metrics file's last numbers when the process ends by a
# fatal signal (SIGTERM: a batch system's time limit) or by
# GPUMEM_ON_LIMIT=abort, as at exit; and a FIFO or a symbolic link in the
# file's place left as it is. Uses tests/metrics/interval.c (built by interval.sh). Sourced by
# tests/run.sh.
used_of() { awk -v k="$2" '$1 ~ "^"k"\\{device=\"0\"," {print $NF}' "$1" 2>/dev/null; }

# SIGTERM while it waits: the report, the file with its 1 MiB, then 143
rm -f "$WORK/end.prom" "$WORK/end.in"
mkfifo "$WORK/end.in"
env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/end.prom" GPUMEM_METRICS_INTERVAL=30 GPUMEM_REPORT=none \
    "$T/interval" <"$WORK/end.in" >"$WORK/end.out" 2>"$WORK/end.err" &
EP=$!
exec 7>"$WORK/end.in"
for _ in $(seq 200); do grep -q '^a$' "$WORK/end.out" && break; sleep 0.05; done
kill -TERM $EP; wait $EP 2>/dev/null; rc=$?
exec 7>&-
if [ $rc = 143 ] && [ "$(used_of "$WORK/end.prom" gpumem_used_bytes)" = 1048576 ]; then
    ok "metrics: a process ended by SIGTERM leaves the file with its last numbers (1 MiB in use), as at exit"
else bad "metrics at SIGTERM (rc $rc): '$(used_of "$WORK/end.prom" gpumem_used_bytes)'" "$WORK/end.err"; fi

# GPUMEM_ON_LIMIT=abort: the refusal counted in the file before the abort
rm -f "$WORK/abort.prom"
env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/abort.prom" GPUMEM_LIMIT=512K GPUMEM_ON_LIMIT=abort \
    GPUMEM_REPORT=none "$T/interval" </dev/null >"$WORK/abort.out" 2>"$WORK/abort.err" &
wait $! 2>/dev/null; rc=$?
if [ $rc = 134 ] && [ "$(used_of "$WORK/abort.prom" gpumem_refused_allocations_total)" = 1 ]; then
    ok "metrics: GPUMEM_ON_LIMIT=abort leaves the file with the refusal counted before the process aborts"
else bad "metrics at abort (rc $rc): refused '$(used_of "$WORK/abort.prom" gpumem_refused_allocations_total)'" "$WORK/abort.err"; fi

# a FIFO in the file's place: said once, and still a FIFO after the run
rm -f "$WORK/fifo.prom"
mkfifo "$WORK/fifo.prom"
printf '\n\n' | env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/fifo.prom" GPUMEM_REPORT=none "$T/interval" \
    >"$WORK/fifo.out" 2>"$WORK/fifo.err"; rc=$?
if [ $rc = 0 ] && [ -p "$WORK/fifo.prom" ] && [ "$(grep -c "GPUMEM_METRICS" "$WORK/fifo.err")" = 1 ] \
   && has "a device, FIFO or socket" "$WORK/fifo.err"; then
    ok "metrics: a FIFO at GPUMEM_METRICS is said once and left a FIFO (never replaced by the file)"
else bad "metrics: FIFO at the path (rc $rc; $(stat -c %F "$WORK/fifo.prom" 2>&1))" "$WORK/fifo.err"; fi

# a symbolic link in the file's place (/dev/stdout is one; a link to
# /dev/null, or to a file elsewhere): said once, never followed nor replaced
rm -f "$WORK/link.prom" "$WORK/link.target"
echo keep >"$WORK/link.target"
ln -s "$WORK/link.target" "$WORK/link.prom"
printf '\n\n' | env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/link.prom" GPUMEM_REPORT=none "$T/interval" \
    >"$WORK/link.out" 2>"$WORK/link.err"; rc=$?
if [ $rc = 0 ] && [ -L "$WORK/link.prom" ] && [ "$(cat "$WORK/link.target")" = keep ] \
   && [ "$(grep -c "GPUMEM_METRICS" "$WORK/link.err")" = 1 ] && has "a symbolic link" "$WORK/link.err"; then
    ok "metrics: a symbolic link at GPUMEM_METRICS is said once and left as it is (neither followed nor replaced)"
else bad "metrics: a symbolic link at the path (rc $rc; $(stat -c %F "$WORK/link.prom" 2>&1))" "$WORK/link.err"; fi

# the same link put there while the process runs: its next write says so
rm -f "$WORK/late.prom" "$WORK/late.in"; mkfifo "$WORK/late.in"
env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/late.prom" GPUMEM_REPORT=none "$T/interval" <"$WORK/late.in" \
    >"$WORK/late.out" 2>"$WORK/late.err" &
LP=$!
exec 7>"$WORK/late.in"
for _ in $(seq 200); do grep -q '^a$' "$WORK/late.out" && break; sleep 0.05; done
rm -f "$WORK/late.prom"; ln -s "$WORK/link.target" "$WORK/late.prom"
printf '\n\n' >&7; exec 7>&-
wait $LP; rc=$?
if [ $rc = 0 ] && [ -L "$WORK/late.prom" ] && [ "$(cat "$WORK/link.target")" = keep ] \
   && has "a symbolic link is in the file's place (neither followed nor replaced)" "$WORK/late.err"; then
    ok "metrics: a symbolic link put at GPUMEM_METRICS while the process runs: the write at exit says so, the link left as it is"
else bad "metrics: a symbolic link put there later (rc $rc)" "$WORK/late.err"; fi

# a stale temporary of this pid's name (a process of the same pid killed
# mid-write, as pods reuse low pids): stepped over, the file written
rm -rf "$WORK/stale"; mkdir "$WORK/stale"
bash -c ': >"$1/.gpumem-metrics.$$.0.tmp"; exec env LD_PRELOAD="$2" GPUMEM_METRICS="$1/x.prom" GPUMEM_REPORT=none "$3" </dev/null' \
    _ "$WORK/stale" "$PRELOAD" "$T/interval" >"$WORK/stale.out" 2>"$WORK/stale.err"
if [ -f "$WORK/stale/x.prom" ] && ! has "cannot write" "$WORK/stale.err"; then
    ok "metrics: a stale temporary of the same pid's name is stepped over; the file is written"
else bad "metrics with a stale temporary of the same pid: $(ls -A "$WORK/stale")" "$WORK/stale.err"; fi
