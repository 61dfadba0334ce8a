# failed_peak.sh - a peak is memory that was in use: an allocation the
# driver fails never raises it (tests/oom/failed_peak.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build failed_peak tests/oom/failed_peak.c -L"$B/sim" -l:libcuda.so.1

# a peak is memory that was in use: an allocation the driver fails (more
# than the device has) never raises it, in the process nor in its group
# (the report to a file: stderr has the driver's out-of-memory message)
guarded GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/oom1.json" "$T/failed_peak" 1073741824
p1=$(jq -c '[.devices[0].in_use, .devices[0].peak]' "$WORK/oom1.json" 2>/dev/null)
guarded GPUSIM_MEM=64M GPUMEM_GROUP="gmgpeak$$" GPUMEM_LIMIT=512M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/oom2.json" "$T/failed_peak" 268435456
p2=$(jq -c '[.devices[0].peak, .group.devices[0].peak]' "$WORK/oom2.json" 2>/dev/null)
rm -f "/dev/shm/gpumemguard-$(id -u)-gmgpeak$$"
if has "oom: 2, then 1 MiB: 0" "$WORK/out" && [ "$p1" = "[1048576,1048576]" ] && [ "$p2" = "[1048576,1048576]" ]; then
    ok "an allocation the driver fails never raises the peak (process $p1, group $p2)"
else bad "peak raised by a failed allocation: process [in_use,peak] $p1, [peak,group peak] $p2" "$WORK/err"; fi

# ... nor another thread's: while two threads' 1 GiB allocations were under
# way (reserved, then failed by the driver), two others made and freed
# 1 MiB blocks, never more than 8 MiB at once. The device line, the
# metrics, the timeline and what was live at the peak say at most 8 MiB;
# the driver's out-of-memory message names what the process held, at most
# 8 MiB too (it said 1.0 or 2.0 GiB: the quota's counter holds reservations
# under way).
tguarded 120 GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/race.json" GPUMEM_METRICS="$WORK/race.prom" \
    "$T/failed_peak" race 3000
r=$(jq -c '[.devices[0].peak, .at_peak[0].bytes, ([.timeline.devices[0].samples[][1]] | max), .devices[0].driver_oom]' "$WORK/race.json" 2>/dev/null)
m=$(sed -n 's/^gpumem_peak_bytes{.*device="0".*} \([0-9]*\)$/\1/p' "$WORK/race.prom")
held=$(sed -n 's/.*this process holds .* (\([0-9]*\) bytes) on device 0.*/\1/p; s/.*this process holds \([0-9]*\) bytes on device 0.*/\1/p' "$WORK/err" | sort -n | tail -1)
peak=${r#[}; peak=${peak%%,*}
api=$(sed -n 's/^race: .*; api peak \([0-9]*\)$/\1/p' "$WORK/out")
if has "race: 6000 of 6000 failed" "$WORK/out" && [ -n "$peak" ] && [ "$peak" -le 8388608 ] && [ "$peak" -ge 1048576 ] \
   && [ -n "$api" ] && [ "$api" -le 8388608 ] \
   && [ "$r" = "[$peak,$peak,$peak,6000]" ] && [ "$m" = "$peak" ] && [ -n "$held" ] && [ "$held" -le 8388608 ]; then
    ok "other threads' failed allocations never raise the peak: 2 threads' 6000 failed 1 GiB calls beside 8 MiB made at most: peak $peak in the device line, at the peak, the timeline and the metrics; the public API's $api; the message's 'holds' at most $held"
else bad "peak raised by other threads' failed allocations: [peak, at_peak, timeline max, driver_oom] $r, metrics $m, API $api, holds $held" "$WORK/err"; fi
