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
