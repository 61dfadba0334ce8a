# audit.sh - behaviours an audit against SPEC found wrong, one test each
# (tests/integration/audit.c is the program they run). Sourced by run.sh
# (uses its helpers).

# GPUMEM_EXITCODE replaces the status with _exit: the program's stdio
# buffers (stdout to a file or a pipe) must still be written, as exit does
guarded GPUMEM_EXITCODE=23 "$T/audit" stdio; rc=$?
[ $rc = 23 ] && has "program output, still buffered at exit" "$WORK/out" \
    && ok "GPUMEM_EXITCODE=23 on a leak: the program's buffered stdout is still written" \
    || bad "GPUMEM_EXITCODE loses the program's buffered output (rc $rc)" "$WORK/out"

# a peak is memory that was in use: an allocation the driver fails (more
# than the device has) never raises it, in the process nor in its group
guarded GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json "$T/audit" oom 1073741824
p1=$(jq -c '[.devices[0].in_use, .devices[0].peak]' "$WORK/err" 2>/dev/null)
guarded GPUSIM_MEM=64M GPUMEM_GROUP="gmgaudit$$" GPUMEM_LIMIT=512M GPUMEM_REPORT_FORMAT=json "$T/audit" oom 268435456
p2=$(jq -c '[.devices[0].peak, .group.devices[0].peak]' "$WORK/err" 2>/dev/null)
rm -f "/dev/shm/gpumemguard-$(id -u)-gmgaudit$$"
if has "oom: 2, then 1 MiB: 0" "$WORK/out" && [ "$p1" = "[1048576,1048576]" ] && [ "$p2" = "[1048576,1048576]" ]; then
    ok "an allocation the driver fails never raises the peak (process $p1, group $p2)"
else bad "peak raised by a failed allocation: process [in_use,peak] $p1, [peak,group peak] $p2" "$WORK/err"; fi
