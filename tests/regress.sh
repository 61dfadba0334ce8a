# regress.sh - tests that kill mutations of src/ the rest of the suite let
# live (the audit's list and `make mutate`'s survivors; which test
# kills which mutant is in docs/testing.md). Every check compares exact
# numbers, the driver's beside the guard's where both exist. Sourced by
# run.sh (uses its helpers and $B, $T, $WORK, $CC, $SAN_FLAGS, $CUDA_INC).

build regress tests/integration/regress.c -L"$B/sim" -l:libcuda.so.1
build latecuda tests/integration/latecuda.c
build libfailclose.so -shared -fPIC tests/integration/failclose.c
# as run.sh's guarded, with a time limit: a mutant that hangs fails here
rguarded() { timeout 60 env LD_PRELOAD="$PRELOAD" GPUSIM_STATS="$WORK/stats" "$@" >"$WORK/out" 2>"$WORK/err"; }

# fragmentation: six allocations end to end, the 2nd and 5th freed. Two gaps
# (256 KiB and 64 KiB); the 3rd and 4th touch, which is no gap. A 64 MiB
# device: its free memory at report time is 64 MiB less the live 3801088
rguarded GPUSIM_MEM=64M "$T/regress" frag
lo=$(sed -n 's/.*span \(0x[0-9a-f]*\)-.*/\1/p' "$WORK/out"); hi=$(sed -n 's/.*span 0x[0-9a-f]*-\(0x[0-9a-f]*\)$/\1/p' "$WORK/out")
if has "frag: end to end yes" "$WORK/out" && has "  live allocations: 4 (3.6 MiB (3801088 bytes) requested, 3.6 MiB (3801088 bytes) granted)" "$WORK/err" \
   && has "  size classes: 64KiB-1MiB: 2 1MiB-16MiB: 2" "$WORK/err" \
   && has "  address span: 3.9 MiB (4128768 bytes) [$lo, $hi)" "$WORK/err" \
   && has "  gaps: 2, 320.0 KiB (327680 bytes) in all, largest 256.0 KiB (262144 bytes)" "$WORK/err" && has "  span utilisation: 92.1%" "$WORK/err" \
   && has "  rounding waste: 0 bytes" "$WORK/err" && has "  device free at report time: 60.4 MiB (63307776 bytes) of 64.0 MiB (67108864 bytes)" "$WORK/err" \
   && ! has "device free at report time: unknown" "$WORK/err"; then
    ok "fragmentation (text): two gaps of 256 and 64 KiB counted exactly, touching neighbours no gap, span, utilisation, device free"
else bad "fragmentation, exact (text)" "$WORK/err"; fi
rguarded GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json "$T/regress" frag
jq -e --arg lo "$lo" --arg hi "$hi" '.fragmentation[0] | .live_allocations == 4 and .requested_bytes == 3801088
        and .granted_bytes == 3801088 and .span_start == $lo and .span_end == $hi and .span_bytes == 4128768
        and .gaps == 2 and .gap_bytes == 327680 and .largest_gap == 262144 and .rounding_waste == 0
        and .device_free == 63307776 and .device_total == 67108864' "$WORK/err" >/dev/null 2>&1 \
    && ok "fragmentation (JSON): gaps 2, gap_bytes 327680, largest_gap 262144, span_start/span_end the driver's addresses" \
    || bad "fragmentation, exact (JSON)" "$WORK/err"

# the last cuDevicePrimaryCtxRelease resets the context (the driver frees its
# memory): reclaimed then, not at an earlier release; also for a driver
# whose cuDevicePrimaryCtxGetState cannot answer (the guard counts retains)
for cfg in "" GPUSIM_NO_PRIMARY_STATE=1; do
    rguarded $cfg "$T/regress" release
    if has "release: after the first release guard 1048576 sim 1048576; after the last guard 0 sim 0; retained again guard 262144 sim 262144" "$WORK/out" \
       && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q " in leak_before_release " \
       && has "SUMMARY: gpumemguard: 262144 bytes in 1 allocation still live at exit, 1048576 bytes in 1 allocation reclaimed by context teardown" "$WORK/err"; then
        ok "the last cuDevicePrimaryCtxRelease reclaims the context's memory, an earlier one does not${cfg:+ ($cfg)}"
    else bad "last primary context release${cfg:+ ($cfg)}" "$WORK/out"; fi
done

# pinned host memory and registrations go with the context that made them
# (an H100's driver refuses cuMemFreeHost and cuMemHostUnregister of them
# afterwards: docs/gpu-validation.md): after cuCtxDestroy and
# cuDevicePrimaryCtxReset they are reclaimed, not live at exit
rguarded "$T/regress" host_teardown
if has "host_teardown: frees after destroy 1 1, unregister 713, free after reset 709" "$WORK/out" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit, 3735552 bytes in 4 allocations reclaimed by context teardown" "$WORK/err" \
   && [ "$(grep -A1 -F "bytes) in 1 allocation (cuMemHostAlloc, device 0) allocated from:" "$WORK/err" | grep -c " in host_in_ctx ")" = 2 ] \
   && grep -A1 -F "512.0 KiB (524288 bytes) in 1 allocation (cuMemHostAlloc, device 0) allocated from:" "$WORK/err" | grep -q " in host_in_primary " \
   && grep -A1 -F "64.0 KiB (65536 bytes) in 1 allocation (cuMemHostRegister, device 0) allocated from:" "$WORK/err" | grep -q " in host_register "; then
    ok "pinned host memory and registrations are reclaimed with their context (cuCtxDestroy, cuDevicePrimaryCtxReset), not left live"
else bad "pinned host memory reclaimed with its context" "$WORK/err"; fi

# a reset keeps the primary context's retain count: the release after it that
# is not the last reclaims nothing; also where the guard counts retains itself
for cfg in "" GPUSIM_NO_PRIMARY_STATE=1; do
    rguarded $cfg "$T/regress" reset_refs
    has "reset_refs: after a release guard 1048576 sim 1048576; after the last guard 0 sim 0" "$WORK/out" \
        && ok "a primary context reset keeps the retain count: only the last release reclaims${cfg:+ ($cfg)}" \
        || bad "retain count across a reset${cfg:+ ($cfg)}" "$WORK/out"
done

# a real driver has shut down before the report at exit (docs/gpu-validation.md):
# the device's free memory still comes from NVML, found by the UUID the guard
# kept while the driver answered
rguarded GPUSIM_SHUTDOWN_AT_EXIT=1 "$T/regress" order
has "device free at report time: 8.0 GiB (8579448832 bytes) of 8.0 GiB (8589934592 bytes) (NVML)" "$WORK/err" \
    && ok "the report at exit, after the driver shut down, has the device's free memory from NVML" \
    || bad "device free memory at exit after the driver's shutdown" "$WORK/err"

# GPUMEM_COUNT_MANAGED: managed memory counts (1, the default) or is tracked
# and reported without counting (0)
rguarded GPUMEM_LIMIT=4M "$T/regress" managed
has "managed: managed 8MiB 2, 4MiB 0, +1 2; guard 4194304 sim 4194304" "$WORK/out" \
    && ok "managed memory counts against GPUMEM_LIMIT by default: 8 MiB refused under 4M" \
    || bad "managed memory counted" "$WORK/out"
rguarded GPUMEM_LIMIT=4M GPUMEM_COUNT_MANAGED=0 "$T/regress" managed
if has "managed: managed 8MiB 0, 4MiB 0, +1 2; guard 4194304 sim 12582912" "$WORK/out" \
   && grep -A1 -F "8.0 MiB (8388608 bytes) in 1 allocation (cuMemAllocManaged, device 0) allocated from:" "$WORK/err" | grep -q " in managed_site "; then
    ok "GPUMEM_COUNT_MANAGED=0: 8 MiB managed allowed under 4M, not counted, still reported as live"
else bad "GPUMEM_COUNT_MANAGED=0" "$WORK/out"; fi

# groups biggest first (SPEC §4): 6 MiB in 1 allocation, 3 MiB in 3, 1 MiB
# in 2, made in another order and not in order of their counts
rguarded "$T/regress" order
heads=$(before_peak "$WORK/err" | grep -oE "\(([0-9]+) bytes\) in [0-9]+ allocations? \(cuMemAlloc, device 0\)" | tr -d '(' | cut -d' ' -f1,4 | tr '\n' ' ')
if has "order: guard 10485760 sim 10485760" "$WORK/out" && [ "$heads" = "6291456 1 3145728 3 1048576 2 " ] \
   && grep -A1 -F "(6291456 bytes) in 1 allocation " "$WORK/err" | grep -q " in site_big "; then
    ok "live groups are listed biggest first (6, 3, 1 MiB), not in the order made or by count"
else bad "group order: $heads" "$WORK/err"; fi
rguarded GPUMEM_REPORT_FORMAT=json "$T/regress" order
jq -e '[.live[] | [.bytes, .count]] == [[6291456, 1], [3145728, 3], [1048576, 2]] and .live[0].frames[0].function == "site_big"' \
    "$WORK/err" >/dev/null 2>&1 && ok "JSON live groups biggest first" || bad "JSON group order" "$WORK/err"

# a refusal message once per call site, however often the site is refused;
# every refusal counted
rguarded GPUMEM_LIMIT=1M "$T/regress" refuse
if has "refuse: 3 + 2 refused; guard 524288 sim 524288" "$WORK/out" \
   && [ "$(grep -c "^gpumemguard: refused cuMemAlloc" "$WORK/err")" = 2 ] \
   && grep -A2 -F "gpumemguard: refused cuMemAlloc of 2.0 MiB" "$WORK/err" | grep -q " in refused_site_a " \
   && grep -A2 -F "gpumemguard: refused cuMemAlloc of 4.0 MiB" "$WORK/err" | grep -q " in refused_site_b " \
   && has "refused: 5;" "$WORK/err"; then
    ok "two call sites refused 3 and 2 times: one message each, 5 refusals counted"
else bad "refusal messages once per site ($(grep -c "^gpumemguard: refused" "$WORK/err") messages)" "$WORK/err"; fi
rguarded GPUMEM_LIMIT=1M GPUMEM_ON_LIMIT=warn "$T/regress" refuse
[ "$(grep -c "over the limit" "$WORK/err")" = 2 ] && has "refuse: 0 + 0 refused; guard 15204352 sim 15204352" "$WORK/out" \
    && ok "GPUMEM_ON_LIMIT=warn: one 'over the limit' line per call site, every allocation made and counted" \
    || bad "warn once per site" "$WORK/err"

# cuMemGetInfo_v2(&free, NULL) under a limit: the driver's own return code
# (the same call without the guard), not the guard's success
env "$T/apitest" direct info >"$WORK/out0" 2>/dev/null
want=$(grep "^null total:" "$WORK/out0")
rguarded GPUMEM_LIMIT=8M "$T/apitest" direct info
if [ -n "$want" ] && [ "$want" != "null total: 0" ] && [ "$(grep "^null total:" "$WORK/out")" = "$want" ]; then
    ok "cuMemGetInfo_v2 with a NULL total under a limit returns what the driver returns ($want)"
else bad "null total: guarded '$(grep "^null total:" "$WORK/out")', driver '$want'" "$WORK/out"; fi

# the legacy (pre-_v2) entry points count what the driver holds: 2D and 3D
# arrays by their descriptors, pitch by the pitch; IPC gets its flag through
rguarded "$T/regress" legacy
has "legacy: array 0 guard 262144 sim 262144; 3d 0 guard 327680 sim 327680; pitch 0 (1024) guard 430080 sim 430080; freed guard 0 sim 0; ipc 0" "$WORK/out" \
    && ok "legacy cuArrayCreate, cuArray3DCreate, cuMemAllocPitch counted as the driver counts; cuIpcOpenMemHandle's flag passed on" \
    || bad "legacy entry points" "$WORK/out"

# every array format the guard knows, sized by its bytes per element: at
# GPUMEM_LIMIT exactly it is the driver's call, one row more the guard refuses
rguarded GPUMEM_LIMIT=1M "$T/regress" formats
# the header's own list (less CU_AD_FORMAT_MAX): a format added there must be added to hooks/array.c
nfmt=$(sed -n '/^typedef enum CUarray_format_enum/,/} CUarray_format;/p' "$CUDA_INC/cuda.h" \
       | grep -c 'CU_AD_FORMAT_[A-Za-z0-9_]* *=')
has "formats: 51, 0 wrong; guard 0 sim 0" "$WORK/out" && [ "$nfmt" = 52 ] \
    && ok "every array format of cuda.h (51): each sized by its element (1, 2, 4 or 8 bytes), refused one row over the limit and not at it; with 4 channels (as cudart passes UNORM_INT8X4) only the classic formats' elements are 4 times as wide" \
    || bad "array formats" "$WORK/out"

rguarded GPUMEM_LIMIT=1M "$T/regress" sparse
has "sparse 0 deferred 0 mipmapped sparse 0; guard 0 sim 0" "$WORK/out" && has "an ordinary array over the limit: 2" "$WORK/out" \
    && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" \
    && ok "sparse and deferred-mapping arrays (64 MiB under a 1 MiB limit) hold no memory: counted nowhere, freed; an ordinary one still refused" \
    || bad "sparse arrays" "$WORK/out"

# NULL outputs with sizes far over the limit: the driver's own error codes
# (the same calls without the guard), no refusal made or shown
env "$T/regress" nulls_big >"$WORK/out0" 2>/dev/null
rguarded GPUMEM_LIMIT=1M "$T/regress" nulls_big; rc=$?
if [ $rc = 0 ] && grep -q "^[0-9 ]*$" "$WORK/out0" && cmp -s "$WORK/out0" "$WORK/out" \
   && [ "$(cat "$WORK/err")" = "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" ]; then
    ok "NULL outputs of 13 allocating calls over the limit: the driver's error codes, nothing refused"
else bad "NULL outputs over the limit: guarded '$(cat "$WORK/out")', driver '$(cat "$WORK/out0")'" "$WORK/err"; fi

# cuCtxDestroy of a primary context: the driver refuses, its memory stays
rguarded "$T/regress" destroy_primary
has "destroy primary: refused; guard 1048576 sim 1048576" "$WORK/out" \
    && ok "cuCtxDestroy(_v2) the driver refuses (a primary context): nothing reclaimed, the memory still counts" \
    || bad "refused cuCtxDestroy" "$WORK/out"

# the thread's context reset by the driver (still current): an allocation
# gets the driver's error, not a refusal charged to some device
env "$T/regress" stale_ctx >"$WORK/out0" 2>/dev/null
rguarded GPUMEM_LIMIT=1M "$T/regress" stale_ctx
if grep -q "^stale context: alloc [1-9]" "$WORK/out0" && cmp -s "$WORK/out0" "$WORK/out" && ! has "refused" "$WORK/err"; then
    ok "an allocation in a context the driver has reset: the driver's own error ($(cut -d' ' -f4 "$WORK/out0")), no refusal"
else bad "allocation in a reset context: guarded '$(cat "$WORK/out")', driver '$(cat "$WORK/out0")'" "$WORK/err"; fi

# a pitch below the guard's 512-byte guess (256: 700 bytes -> 768): the
# reservation shrinks to what the driver granted, both ABIs
rguarded GPUSIM_PITCH=256 "$T/regress" pitch_small
has "pitch_small: 0 pitch 768 guard 76800 sim 76800; legacy 0 pitch 768 guard 153600 sim 153600" "$WORK/out" \
    && ok "a pitch of 768 where the guard guessed 1024: counted as granted (_v2 and legacy)" \
    || bad "pitch below the guess" "$WORK/out"

# a VMM handle in host memory: not counted on any device (2 MiB under a
# 1 MiB limit), tracked under the current context's device (1 here)
rguarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M GPUMEM_REPORT_FORMAT=json "$T/regress" vmm_host
has "vmm_host: 0; guard 0 0 sim 0 0" "$WORK/out" \
    && jq -e '[.live[] | select(.api == "cuMemCreate")] | length == 1 and .[0].device == 1 and .[0].bytes == 2097152
              and .[0].frames[0].function == "vmm_host"' "$WORK/err" >/dev/null 2>&1 \
    && ok "a host-memory cuMemCreate handle: not counted against the limit, reported on the current context's device" \
    || bad "host-memory VMM handle" "$WORK/out"

# the public API asked about devices that do not exist: no quota, nothing live
rguarded GPUMEM_LIMIT=4M "$T/regress" api
has "api: limit -1 0, 0 4194304, 64 0; live -1 1048576, 0 1048576, 64 0" "$WORK/out" \
    && ok "gpumemguard_limit(-1) and (64) are 0, (0) the limit; gpumemguard_live_bytes(-1) sums the devices" \
    || bad "public API out of range" "$WORK/out"

# GPUMEM_ON_LIMIT=warn never refuses, not even a request no device can hold:
# the driver answers (out of memory) and nothing is counted as refused
rguarded GPUMEM_LIMIT=8M GPUMEM_ON_LIMIT=warn "$T/trust" huge
if has "huge: 2 2 2 2; guard 1048576;" "$WORK/out" && has "device 0: limit 8.0 MiB (8388608 bytes), in use 2.0 MiB (2097152 bytes), peak 2.0 MiB (2097152 bytes), refused 0" "$WORK/err" \
   && has "refused: 0;" "$WORK/err" && ! has "gpumemguard: refused" "$WORK/err"; then
    ok "GPUMEM_ON_LIMIT=warn: SIZE_MAX-sized requests go to the driver, none refused by the guard"
else bad "warn with huge requests" "$WORK/err"; fi

# one cuMemUnmap over two mappings (handles released while mapped): both go,
# with their memory; a linear allocation and another mapping stay
rguarded GPUMEM_REPORT_FORMAT=json "$T/regress" unmap_range
if has "unmap_range: mapped guard 7340032 sim 7340032; unmapped guard 3145728 sim 3145728" "$WORK/out" \
   && jq -e '([.live[] | {api, bytes}] | sort_by(.bytes)) == [{"api":"cuMemAlloc","bytes":1048576},{"api":"cuMemCreate","bytes":2097152}]
             and ([.live[] | select(.api == "cuMemAlloc")][0].frames[0].function == "linear_stays")
             and ([.address_ranges[] | {api, bytes}] | sort_by(.api, .bytes))
                 == [{"api":"cuMemAddressReserve","bytes":2097152},{"api":"cuMemAddressReserve","bytes":8388608},{"api":"cuMemMap","bytes":2097152}]' \
      "$WORK/err" >/dev/null 2>&1; then
    ok "one cuMemUnmap over two mappings of released handles frees both; other records untouched"
else bad "unmap over several mappings" "$WORK/err"; fi

# a handler for the dump signal installed before the process touches CUDA
# (libcuda dlopened later, as Python does): armed at the first contact, the
# dump is written and the program's handler still runs, once; the debug log
# says it armed, once
for how in sigaction signal; do
    rguarded GPUMEM_LOG=debug "$T/latecuda" $how; rc=$?
    if [ $rc = 0 ] && has "latecuda: handler calls 1" "$WORK/out" && [ "$(grep -c "gpumemguard report (signal, dump 1)" "$WORK/err")" = 1 ] \
       && [ "$(grep -c "debug: dump signal $(kill -l USR1) armed" "$WORK/err")" = 1 ]; then
        ok "a SIGUSR1 handler set with $how before CUDA was loaded: chained after arming, one dump, 'armed' logged once"
    else bad "handler installed before CUDA ($how, rc $rc)" "$WORK/err"; fi
done

# a refusal on device 1 lists device 1's biggest live allocations, not
# device 0's (which holds more)
rguarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M "$T/regress" refuse_dev1
msg=$(sed -n '/^gpumemguard: the biggest live allocations on device 1:$/,/^$/p' "$WORK/err")
if has "refuse_dev1: 2; guard 524288 262144" "$WORK/out" && has "refused cuMemAlloc of 2.0 MiB (2097152 bytes) on device 1" "$WORK/err" \
   && grep -q "^256.0 KiB (262144 bytes) in 1 allocation (cuMemAlloc, device 1) allocated from:$" <<<"$msg" && grep -q " in dev1_site " <<<"$msg" \
   && ! grep -q "device 0)\| in dev0_site " <<<"$msg"; then
    ok "a refusal on device 1 shows device 1's live allocations only"
else bad "refusal message on device 1" "$WORK/err"; fi

# the refusal message describes the moment of the refusal: what was live
# then (600000 bytes, freed at once after the refusal), not what is live
# when the message is written (700000 bytes allocated after it; it said
# "none now: ... has been freed since", or listed the later allocation)
rguarded GPUMEM_LIMIT=1M "$T/regress" refuse_then
msg=$(sed -n '/^gpumemguard: the biggest live allocations on device 0:$/,/^$/p' "$WORK/err")
if has "refuse_then: 2; guard 700000" "$WORK/out" && has "refused cuMemAlloc of 585.9 KiB (600000 bytes) on device 0" "$WORK/err" \
   && grep -q "^585.9 KiB (600000 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:$" <<<"$msg" \
   && grep -q " in held_at_refusal " <<<"$msg" && ! grep -q "700000\| in made_after_refusal \|none" <<<"$msg"; then
    ok "a refusal message lists what was live at the refusal (freed since), not an allocation made after it"
else bad "refusal message: the state at the refusal" "$WORK/err"; fi

# a refused call returns only once its message is written: a program that
# aborts at once (CUDA_CHECK) still says why (the reporter thread wrote it
# after the fact: lost to the abort, or after the program's own line)
( rguarded GPUMEM_LIMIT=1M "$T/regress" refuse_abort ) 2>/dev/null; rc=$?
said=$(grep -n "^gpumemguard: refused cuMemAlloc of 2.0 MiB" "$WORK/err" | head -1 | cut -d: -f1)
stack=$(grep -n " in refused_then_abort " "$WORK/err" | head -1 | cut -d: -f1)
back=$(grep -n "^refuse_abort: the refused call returned 2$" "$WORK/err" | cut -d: -f1)
if [ $rc = 134 ] && [ -n "$said" ] && [ -n "$stack" ] && [ -n "$back" ] && [ "$said" -lt "$stack" ] && [ "$stack" -lt "$back" ] \
   && sed -n "${said},${back}p" "$WORK/err" | grep -q "^gpumemguard: the biggest live allocations on device 0:$"; then
    ok "a refused call returns with its message written: the program aborting at once still has it, whole, before its own line"
else bad "refusal message before the refused call returns (rc $rc; lines: message ${said:-none}, stack ${stack:-none}, program ${back:-none})" "$WORK/err"; fi

# a forked child holds no more pipes than its parent (the reporter once woke
# through a pipe, which a child had to close before making its own; it is a
# semaphore now, and this stays to keep any descriptor from coming back)
rguarded "$T/regress" forkfds
n=$(sed -n 's/^forkfds: parent \([0-9]*\) child \([0-9]*\)$/\1 \2/p' "$WORK/out")
[ -n "$n" ] && [ "${n% *}" = "${n#* }" ] && ok "a forked child holds no pipe of its parent's reporter (${n% *} pipes open in each)" \
    || bad "pipes in a forked child: ${n:-none}" "$WORK/out"

# a report whose file fails at close (a write error NFS or a quota reports
# only then): not renamed into place, the temporary removed, the report on
# stderr
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a report file failing at close" "a close() preloaded beside the guard crashes TSan-built programs (segfault); plain and ASan builds run it"
else
    rm -rf "$WORK/closefail"; mkdir -p "$WORK/closefail"
    timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libfailclose.so" GPUMEM_REPORT="$WORK/closefail/r.txt" "$T/trust" dump_exit \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && [ -z "$(ls "$WORK/closefail")" ] && has "cannot write report to $WORK/closefail/r.txt (Input/output error)" "$WORK/err" \
       && has "gpumemguard report (signal, dump 1)" "$WORK/err" && has "SUMMARY: gpumemguard: 197520 bytes" "$WORK/err"; then
        ok "a report file whose close fails (EIO): no file put in place, no temporary left, the reports on stderr"
    else bad "close failing on the report file (rc $rc): $(ls "$WORK/closefail" | tr '\n' ' ')" "$WORK/err"; fi
fi

# frames name a library as the program loaded it (here through a symlink
# of another name), not by the file it resolves to
ln -sf "$ROOT/$T/libgmgmod2.so" "$WORK/libalias.so"
rguarded "$T/trust" dlclose "$ROOT/$T/libgmgmod1.so" "$WORK/libalias.so"
grep -A2 "(568320 bytes) in 1 allocation" "$WORK/err" | grep -q " in other_inner .*(libalias.so+0x[0-9a-f]*)$" \
    && ok "a library loaded through a symlink is named as loaded (libalias.so), not as the file it points to" \
    || bad "module name through a symlink" "$WORK/err"

# groups of equal bytes and count (one call site on two devices) keep a
# fixed order, device 0 then 1, whichever was made first
rguarded GPUSIM_DEVICES=2 GPUMEM_REPORT_FORMAT=json "$T/regress" ties
has "ties: guard 1048576 1048576" "$WORK/out" \
    && jq -e '[.live[] | [.device, .bytes, .count, .frames[0].function]] == [[0, 1048576, 1, "tie_site"], [1, 1048576, 1, "tie_site"]]' \
       "$WORK/err" >/dev/null 2>&1 \
    && ok "equal groups of one call site on two devices: listed device 0 then device 1, not in the order made" \
    || bad "order of equal groups" "$WORK/err"
