# in_use.sh - the bytes in use are the allocations held: a call under way
# that the driver then refuses is in none of them (tests/oom/marks.c,
# inflight). Sourced by tests/run.sh (its helpers, $T, $WORK).
build marks tests/oom/marks.c -L"$B/sim" -l:libcuda.so.1

# without a limit, a call under way for 100 GiB that the driver is about to
# refuse is in no report's or metric's bytes in use (it was: 100 GiB in use
# on a 64 MiB device, above the peak)
guarded GPUSIM_MEM=64M GPUSIM_OOM_DELAY_US=1500000 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/inflight.json" \
    GPUMEM_METRICS="$WORK/inflight.prom" "$T/marks" inflight
u=$(jq -c '[.devices[0].in_use, .devices[0].peak]' "$WORK/inflight.json" 2>/dev/null)
m=$(grep -E '^gpumem_used_bytes\{' "$WORK/inflight.prom" 2>/dev/null | awk '{print $NF}')
if [ "$u" = "[1048576,1048576]" ] && [ "$m" = 1048576 ]; then
    ok "no limit: a call under way that the driver then refuses is not in use (report $u, metrics $m)"
else bad "no limit: in use with a call under way: report [in_use,peak] $u, metrics $m" "$WORK/inflight.json"; fi
