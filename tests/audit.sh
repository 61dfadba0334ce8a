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
# (the report to a file: stderr has the driver's out-of-memory message)
guarded GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/oom1.json" "$T/audit" oom 1073741824
p1=$(jq -c '[.devices[0].in_use, .devices[0].peak]' "$WORK/oom1.json" 2>/dev/null)
guarded GPUSIM_MEM=64M GPUMEM_GROUP="gmgaudit$$" GPUMEM_LIMIT=512M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/oom2.json" "$T/audit" oom 268435456
p2=$(jq -c '[.devices[0].peak, .group.devices[0].peak]' "$WORK/oom2.json" 2>/dev/null)
rm -f "/dev/shm/gpumemguard-$(id -u)-gmgaudit$$"
if has "oom: 2, then 1 MiB: 0" "$WORK/out" && [ "$p1" = "[1048576,1048576]" ] && [ "$p2" = "[1048576,1048576]" ]; then
    ok "an allocation the driver fails never raises the peak (process $p1, group $p2)"
else bad "peak raised by a failed allocation: process [in_use,peak] $p1, [peak,group peak] $p2" "$WORK/err"; fi

# SPEC §2: a pitched allocation counts actual pitch x height. A driver whose
# pitch is finer than 512 bytes grants 256 x 10 here: it fits a limit of
# exactly that, and the peak is the grant, never the up-front estimate
guarded GPUSIM_PITCH=256 GPUMEM_LIMIT=2560 "$T/audit" pitch 100 10
if has "pitch: 0, pitch 256, guard 2560" "$WORK/out" && has "limit 2.5 KiB (2560 bytes), in use 2.5 KiB (2560 bytes), peak 2.5 KiB (2560 bytes), refused 0" "$WORK/err"; then
    ok "a pitched allocation whose actual pitch x height (2560) fits the limit exactly is granted"
else bad "pitched allocation within the limit refused by the 512-byte estimate" "$WORK/err"; fi
guarded GPUSIM_PITCH=256 "$T/audit" pitch 100 10
has "in use 2.5 KiB (2560 bytes), peak 2.5 KiB (2560 bytes), refused 0" "$WORK/err" \
    && ok "a pitched allocation's peak is its grant (2560), not the 512-byte estimate (5120)" \
    || bad "pitched allocation's peak" "$WORK/err"
guarded GPUSIM_PITCH=1024 GPUMEM_LIMIT=10239 "$T/audit" pitch 100 10
has "pitch: 2, pitch 1024, guard 0" "$WORK/out" && has "refused cuMemAllocPitch of 10.0 KiB (10240 bytes)" "$WORK/err" \
    && ok "a pitched allocation whose grant (1024 x 10) is one byte over the limit is refused, naming the grant" \
    || bad "pitched allocation over the limit" "$WORK/err"

# JSON (RFC 8259) and Prometheus label values are UTF-8: a program whose
# name is not (a byte of another encoding) still gets a valid report and a
# metrics file promtool takes
odd="$WORK/$(printf 'odd\xffname')"
cp "$T/audit" "$odd"
rm -f "$WORK/u.prom"
guarded GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/u.prom" "$odd" alloc 4096
jsonok=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); print(d["exe"].endswith("odd\ufffdname"))' "$WORK/err" 2>/dev/null)
promok=1
if command -v promtool >/dev/null 2>&1; then promtool check metrics <"$WORK/u.prom" >/dev/null 2>&1 || promok=0; fi
if [ "$jsonok" = True ] && [ $promok = 1 ] && grep -q "exe=\"odd$(printf '\xef\xbf\xbd')name\"" "$WORK/u.prom"; then
    ok "a program name that is not UTF-8: JSON report and metrics labels stay UTF-8 (U+FFFD)"
else bad "non-UTF-8 program name: JSON valid '$jsonok', promtool $promok" "$WORK/u.prom"; fi
rm -f "$odd"

# the text growth header counts the stacks it lists (reserved ranges and
# mappings are listed under their own heading, not as growth)
guarded "$T/audit" growth
if has "Growth since the previous dump (new and still live): 2 stacks" "$WORK/err" \
   && [ "$(sed -n '/^Growth since/,/^Live at the peak\|^Fragmentation/p' "$WORK/err" | grep -c 'allocated from:')" = 2 ]; then
    ok "the text growth header counts the stacks listed under it"
else bad "growth header count" "$WORK/err"; fi

# sizes read as people read them: 1048575 bytes is 1.0 MiB, not 1024.0 KiB
guarded GPUMEM_LIMIT=1000 "$T/audit" alloc 1048575
has "refused cuMemAlloc of 1.0 MiB (1048575 bytes) on device 0" "$WORK/err" \
    && ok "a size just under a unit reads as the unit above (1.0 MiB (1048575 bytes))" || bad "size rounding" "$WORK/err"

# gpumemguard dump: a bad --signal is a usage error (status 2), whatever the
# process (even one that does not exist)
"$B/gpumemguard" dump --signal bogus 2147483647 >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && has "--signal 'bogus' is not a dump signal" "$WORK/err" \
    && ok "gpumemguard dump --signal bogus: a usage error, status 2, before the process is looked at" \
    || bad "dump with a bad --signal (rc $rc)" "$WORK/err"

# a percent limit is a share of each device's memory: a device the program
# has not allocated on yet shows that share too, never a placeholder of 1 byte
rm -f "$WORK/p.prom"
guarded GPUSIM_DEVICES=2 GPUSIM_MEM=2G,8G GPUMEM_LIMIT=50% GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/p.prom" "$T/audit" dev1 4096
lim=$(jq -c '[.devices[].limit]' "$WORK/err" 2>/dev/null)
if [ "$lim" = "[1073741824,4294967296]" ] && grep -q '^gpumem_limit_bytes{device="0",[^}]*} 1073741824$' "$WORK/p.prom"; then
    ok "GPUMEM_LIMIT=50%: a device not allocated on shows its share (1 GiB of 2 GiB) in the report and the metrics"
else bad "percent limit of an unused device: $lim" "$WORK/p.prom"; fi

# the man page states the accepted values the library enforces
guarded GPUMEM_GROUP=.hidden "$T/audit" alloc 1; r1=$?
guarded GPUMEM_METRICS_INTERVAL=86401 "$T/audit" alloc 1; r2=$?
if [ $r1 = 2 ] && [ $r2 = 2 ] && grep -qF "not starting with '.'" docs/gpumemguard.1 \
   && grep -qF "a whole number from 1 to 86400" docs/gpumemguard.1; then
    ok "the man page gives GPUMEM_GROUP's and GPUMEM_METRICS_INTERVAL's accepted values as the library enforces them"
else bad "man page accepted values (GPUMEM_GROUP=.hidden rc $r1, GPUMEM_METRICS_INTERVAL=86401 rc $r2)"; fi

# two copies of the guard (a job's LD_PRELOAD and another path, or a copy a
# program dlopens by path): the first loaded intercepts everything; the
# other stays out (one exit report, not two; said once) and its public API
# answers with the first's numbers
mkdir -p "$WORK/copy"; cp "$B/libgpumemguard.so" "$WORK/copy/libgpumemguard.so"
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "two copies of the guard in one process" "two TSan-built copies of one library crash TSan's runtime at exit (plain and ASan builds run it)"
else
timeout 60 env LD_PRELOAD="$PRELOAD $WORK/copy/libgpumemguard.so" "$T/audit" copy "$WORK/copy/libgpumemguard.so" \
    >"$WORK/out" 2>"$WORK/err"
if [ "$(grep -c "^SUMMARY: gpumemguard: 1048576 bytes in 1 allocation still live at exit" "$WORK/err")" = 1 ] \
   && [ "$(grep -c "SUMMARY" "$WORK/err")" = 1 ] && has "copy: live 1048576" "$WORK/out" \
   && [ "$(grep -c "another copy of the guard is loaded first" "$WORK/err")" = 1 ]; then
    ok "two copies of the guard: one exit report, the other copy says so once and answers with the first's numbers"
else bad "two copies of the guard in one process" "$WORK/err"; fi
fi

# a refusal message lists what holds the quota: memory that does not count
# against it (pinned host memory here) is left out, so that it can never
# crowd the counted stacks out of the few the message shows
guarded GPUMEM_LIMIT=2M "$T/audit" hostrefuse
msg=$(sed -n '/^gpumemguard: the biggest live allocations on device 0:/,/^==/p' "$WORK/err")
if has "hostrefuse: 0 0 0 0, then 2" "$WORK/out" && grep -q "^1.0 MiB (1048576 bytes) in 1 allocation (cuMemAlloc, device 0)" <<<"$msg" \
   && ! grep -q "cuMemHostAlloc" <<<"$msg"; then
    ok "a refusal message lists the stacks that count against the quota, not pinned host memory that is bigger"
else bad "refusal message: uncounted host memory listed instead of the counted stacks" "$WORK/err"; fi

# a program whose path is longer than 255 bytes (a deep build or conda
# tree) is named whole: the report's exe, and its file name in the metrics
# file's exe label, never a cut-off prefix of it
deep="$WORK/$(printf 'd%.0s' $(seq 1 150))/$(printf 'e%.0s' $(seq 1 100))"
mkdir -p "$deep"; cp "$T/audit" "$deep/audit_program_with_a_long_name"
rm -f "$WORK/l.prom"
guarded GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/l.prom" "$deep/audit_program_with_a_long_name" alloc 4096
exe=$(jq -r '.exe' "$WORK/err" 2>/dev/null)
if [ "$exe" = "$deep/audit_program_with_a_long_name" ] \
   && grep -q '^gpumem_used_bytes{device="0",pid="[0-9]*",exe="audit_program_with_a_long_name"} 4096$' "$WORK/l.prom"; then
    ok "a program path of ${#exe} bytes is named whole in the report and in the metrics exe label"
else bad "long program path cut short: report exe '$exe'" "$WORK/l.prom"; fi
rm -rf "$WORK/$(printf 'd%.0s' $(seq 1 150))"
