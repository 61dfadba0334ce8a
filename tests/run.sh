#!/usr/bin/env bash
# run.sh BUILD_DIR - builds the test programs and runs every test against the
# simulated driver with the real libgpumemguard.so preloaded into real
# processes. Ends with "N passed, M failed". GMG_FAIL_FAST=1 stops at the
# first FAIL line instead, with status 1 (make mutate runs it so).
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
T=$B/tests
mkdir -p "$T"
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
CC=${CC:-cc}
SAN_FLAGS=""
case "${GMG_SANITIZER:-}" in
    asan) SAN_FLAGS="-fsanitize=address,undefined"; PRELOAD="$($CC -print-file-name=libasan.so) $ROOT/$B/libgpumemguard.so";
          export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 ;;
    tsan) CC=clang; SAN_FLAGS="-fsanitize=thread"; PRELOAD="$ROOT/$B/libgpumemguard.so";
          # die_after_fork=0: a forked child of a threaded process may start
          # threads (the guard restarts its reporter there), which TSan allows
          # only with this flag
          # suppressions: libunwind's own caches (tests/tsan.supp says why)
          # atexit_sleep_ms=100: TSan's runtime sleeps this long at exit
          # while another thread lives (the reporter's, in every guarded
          # process), to let it race with the exit; its 1000 made most of
          # the suite's time a second's sleep per process; 100 still gives
          # the reporter thread time to run during the exit.
          export TSAN_OPTIONS="report_signal_unsafe=0 halt_on_error=1 symbolize=0 die_after_fork=0 atexit_sleep_ms=100 suppressions=$ROOT/tests/tsan.supp"
          SAN_FLAGS="$SAN_FLAGS -gdwarf-4" ;; # clang 14 DWARF 5 line tables: no file:line from libdw 0.188
    *) PRELOAD="$ROOT/$B/libgpumemguard.so" ;;
esac
export LD_LIBRARY_PATH="$ROOT/$B/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

build() { # name sources... extra flags
    local out=$1; shift
    $CC -std=gnu11 -O1 -g -Wall -Wextra -Werror $SAN_FLAGS -I"$CUDA_INC" -o "$T/$out" "$@" -ldl -lpthread || exit 1
}
build apitest tests/integration/apitest.c tests/integration/api.c -L"$B/sim" -l:libcuda.so.1
build replay tests/integration/replay.c
build test_limit tests/unit/test_limit.c src/base/limit_parse.c -Isrc
build test_lock tests/unit/test_lock.c src/base/lock.c -Isrc
build test_bias tests/unit/test_bias.c src/base/bias.c src/base/lock.c -Isrc -DGMG_BIAS_TEST_HOOKS
build test_resident tests/unit/test_resident.c src/base/resident.c src/base/fd.c -Isrc -Wl,--wrap=pread
build test_track tests/unit/test_track.c src/core/track.c src/core/peak.c src/core/record.c src/base/lock.c src/base/bias.c src/base/log.c -Isrc -DGMG_TRACK_TEST_HOOKS
build test_livetotals tests/unit/test_livetotals.c src/core/livetotals.c src/core/peak.c src/base/bias.c src/base/lock.c src/base/cpuslot.c -Isrc
build test_quota tests/unit/test_quota.c src/core/quota.c src/core/counts.c src/base/cpuslot.c src/base/config.c src/base/suppress.c src/base/limit_parse.c \
    src/base/log.c src/base/signame.c -Isrc
build test_quota_peak tests/unit/test_quota_peak.c src/core/quota.c src/core/counts.c src/base/cpuslot.c src/base/config.c src/base/suppress.c \
    src/base/limit_parse.c src/base/log.c src/base/signame.c -Isrc -DGMG_QUOTA_TEST_HOOKS
build test_quota_counts tests/unit/test_quota_counts.c src/core/quota.c src/core/counts.c src/base/cpuslot.c src/base/config.c src/base/suppress.c \
    src/base/limit_parse.c src/base/log.c src/base/signame.c -Isrc
build test_walkgate tests/unit/test_walkgate.c src/core/walkgate.c -Isrc
build test_group_fork tests/unit/test_group_fork.c src/base/fd.c src/base/log.c src/base/config.c src/base/suppress.c \
    src/base/limit_parse.c src/base/buf.c src/base/signame.c -Isrc
build test_symbolize tests/unit/test_symbolize.c src/report/symbolize.c src/base/fd.c src/base/exe.c src/base/buildid.c src/base/resident.c src/base/dlclose.c -Isrc -rdynamic -ldw -lelf -liberty -Wl,--wrap=calloc -Wl,--wrap=fcntl
build test_signame tests/unit/test_signame.c src/base/signame.c -Isrc
build test_refusal_sites tests/unit/test_refusal_sites.c src/hooks/refusal.c -Isrc
build test_utf8 tests/unit/test_utf8.c src/base/buf.c -Isrc
build test_pcmap tests/unit/test_pcmap.c src/report/pcmap.c -Isrc
build test_metrics tests/unit/test_metrics.c src/cluster/metrics.c src/base/fd.c src/base/buf.c src/base/exe.c src/base/config.c src/base/suppress.c \
    src/base/limit_parse.c src/base/log.c src/base/signame.c -Isrc -Wl,--wrap=realloc
build test_template tests/suppressions/test_template.c src/base/suppress.c -Isrc
build test_suppress tests/unit/test_suppress.c src/base/config.c src/base/suppress.c src/base/limit_parse.c \
    src/base/log.c src/base/signame.c -Isrc
build sigtest tests/integration/sigtest.c -L"$B/sim" -l:libcuda.so.1
# make stress's program (scripts/stress.sh builds it too): built here so that
# a change to a file it includes that breaks it fails make test as well
build trust tests/integration/trust.c -L"$B/sim" -l:libcuda.so.1
build mangled tests/integration/mangled.c -L"$B/sim" -l:libcuda.so.1
build threadquota tests/integration/threadquota.c -L"$B/sim" -l:libcuda.so.1
build grouptest tests/integration/grouptest.c -Isrc -L"$B/sim" -l:libcuda.so.1
build holdfast tests/group/holdfast.c -L"$B/sim" -l:libcuda.so.1
build libgmgmod1.so -shared -fPIC tests/integration/module.c -L"$B/sim" -l:libcuda.so.1
build libgmgmod2.so -shared -fPIC -DOTHER tests/integration/module.c -L"$B/sim" -l:libcuda.so.1
# programs that more than one script runs (a program only its own script
# runs is built by that script)
for shared in nulls:tests/nulls/info.c dumps:tests/dumps/dumps.c alloc:tests/integration/alloc.c \
            untracked:tests/oom/untracked.c per_device:tests/devices/per_device.c fork_report:tests/fork/report.c \
            unloaded:tests/symbols/unloaded.c released_mapped:tests/vmm/released_mapped.c group_order:tests/reports/order.c; do
    build "${shared%%:*}" "${shared#*:}" -L"$B/sim" -l:libcuda.so.1
done
unset shared
CXX=$([ "$CC" = clang ] && echo clang++ || echo g++)
HAVE_NVCC=0
if command -v nvcc >/dev/null 2>&1 && [ -z "${GMG_SANITIZER:-}" ]; then
    if [ ! -x "$T/cudart_static" ] || [ tests/integration/cudart_app.cu -nt "$T/cudart_static" ]; then
        nvcc -o "$T/cudart_static" tests/integration/cudart_app.cu && \
        nvcc -cudart shared -o "$T/cudart_shared" tests/integration/cudart_app.cu && HAVE_NVCC=1
    else
        HAVE_NVCC=1
    fi
fi

PASS=0; FAIL=0; SKIP=0
# GMG_TIMES=FILE: each result's seconds since the one before, and its line
# (what makes the run slow: sort -rn FILE | head)
_t=$EPOCHREALTIME
took() { [ -n "${GMG_TIMES:-}" ] || return 0; local now=$EPOCHREALTIME
         awk -v a="$_t" -v b="$now" -v l="$1" 'BEGIN { printf "%.2f\t%s\n", b - a, l }' >>"$GMG_TIMES"; _t=$now; }
ok()   { PASS=$((PASS + 1)); echo "ok   $1"; took "ok   $1"; }
# GMG_FAIL_FAST=1 (make mutate): stop at the first failure, status 1
bad()  { FAIL=$((FAIL + 1)); echo "FAIL $1"; took "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/     | /' "$2" | head -40
         if [ "${GMG_FAIL_FAST:-0}" = 1 ]; then echo "GMG_FAIL_FAST: stopped at the first failure"; exit 1; fi; }
skip() { SKIP=$((SKIP + 1)); echo "skip $1 ($2)"; took "skip $1"; }

# guarded CMD...: run with the guard; stdout in $WORK/out, stderr in $WORK/err
guarded() { env LD_PRELOAD="$PRELOAD" GPUSIM_STATS="$WORK/stats" "$@" >"$WORK/out" 2>"$WORK/err"; }
has()  { grep -qF -- "$1" "$2"; }
# before_peak FILE: a report or message up to what was live at the peak
# (which lists allocations freed since): the live part, for checks of it
before_peak() { sed '/^Live at the peak of device \|^gpumemguard: live at the peak of device /,$d' "$1"; }
# tguarded SECONDS CMD...: as guarded, killed after SECONDS (a case that
# hangs, as a mutant may make it, fails instead of stopping the run)
tguarded() { local s=$1; shift; timeout "$s" env LD_PRELOAD="$PRELOAD" GPUSIM_STATS="$WORK/stats" "$@" >"$WORK/out" 2>"$WORK/err"; }
# leak NAME BYTES API: the report names the function with exact bytes
leak() { grep -A1 -F -- "($2 bytes) in 1 allocation ($3, device 0) allocated from:" "$WORK/err" | grep -q " in $1 "; }

ROUTES="direct dlopen default gpa gpa2 gpa2_ptsz gpa_self"

# GMG_ONLY="tests/a.sh tests/b.sh": only those of the scripts below, in
# their order here, and none of the cases written in this file (make
# mutate's first look at a mutant: the scripts of its file's area)
if [ -n "${GMG_ONLY:-}" ]; then
    for f in $(sed -n 's|^\. \(tests/[^ ]*\.sh\)$|\1|p' tests/run.sh); do
        case " $GMG_ONLY " in *" $f "*) . "$f" ;; esac
    done
    echo
    echo "$PASS passed, $FAIL failed${SKIP:+, $SKIP skipped}"
    [ "$FAIL" -eq 0 ]
    exit
fi

# ---------------------------------------------------------------- families
for r in $ROUTES; do
    guarded "$T/apitest" "$r" families
    miss=""
    for spec in leak_linear:1048576:cuMemAlloc leak_legacy:12288:cuMemAlloc leak_pitch:102400:cuMemAllocPitch \
                leak_managed:2097152:cuMemAllocManaged leak_async:3145728:cuMemAllocAsync \
                leak_async_ptsz:3670016:cuMemAllocAsync leak_pool:4194304:cuMemAllocAsync \
                leak_vmm:6291456:cuMemCreate leak_vmm:8388608:cuMemAddressReserve leak_vmm:6291456:cuMemMap \
                leak_array:524288:cuArrayCreate leak_array3d:262144:cuArrayCreate \
                leak_mipmap:5376:cuMipmappedArrayCreate leak_host:65536:cuMemHostAlloc \
                leak_hostalloc:69632:cuMemHostAlloc leak_register:73728:cuMemHostRegister \
                leak_ipc:524800:cuIpcOpenMemHandle leak_graph:1114112:cuGraphAddMemAllocNode \
                leak_graph_node:1179648:cuGraphAddMemAllocNode; do
        IFS=: read -r fn bytes api <<<"$spec"
        leak "$fn" "$bytes" "$api" || miss="$miss $fn/$api"
    done
    if [ -z "$miss" ] && has "SUMMARY: gpumemguard: 24381184 bytes in 17 allocations still live at exit" "$WORK/err" \
       && ! before_peak "$WORK/err" | grep -q "freed_everything" && ! has "FAIL" "$WORK/out" && has "sim live 21353728 guard live 21353728" "$WORK/out"; then
        ok "families via $r: every family's leak by function and exact bytes (graph memory nodes too), freed ones absent, counts match the driver"
    else
        bad "families via $r:$miss" "$WORK/err"
    fi
done

# stream capture: cuMemAllocAsync while capturing makes a graph's node
for r in $ROUTES; do
    guarded GPUMEM_LIMIT=4M "$T/apitest" "$r" capture
    if has "capture: while capturing guard 0 sim 0" "$WORK/out" \
       && has "capture: after it 3 MiB 0, 2 MiB more 2; guard 3145728 sim 3145728" "$WORK/out" \
       && grep -A3 "8.0 MiB (8388608 bytes) in 1 allocation (cuGraphAddMemAllocNode, device 0)" "$WORK/err" | grep -q leak_captured \
       && has "unknown frees: 0;" "$WORK/err" && has "SUMMARY: gpumemguard: 8388608 bytes in 1 allocation still live at exit" "$WORK/err"; then
        ok "stream capture via $r: captured cuMemAllocAsync (8 MiB under a 4 MiB limit) is a graph's node, reported, never counted; after the capture, counted again"
    else
        bad "stream capture via $r" "$WORK/out"; grep -v "    #" "$WORK/err" | sed 's/^/     | /' | head -20
    fi
done

# two threads end one capture at once (the driver refuses one): the count of
# captures under way drops by one, so another stream's capture still makes
# graph nodes (8 MiB under 4 MiB goes through, uncounted)
for r in $ROUTES; do
    guarded GPUMEM_LIMIT=4M GPUSIM_END_CAPTURE_DELAY_US=100000 "$T/apitest" "$r" capturerace
    if has "capturerace: ends that succeeded 1; 8 MiB on the other capture 0; guard 0" "$WORK/out"; then
        ok "stream capture via $r: an end refused for a capture another thread ended counts no capture ended; the other capture's allocations stay uncounted"
    else
        bad "capture ended twice at once via $r" "$WORK/out"
    fi
done

# the per-thread default stream captures too; the _ptsz calls name it NULL
for r in $ROUTES; do
    guarded GPUMEM_LIMIT=4M "$T/apitest" "$r" captureptds; rc=$?
    if [ $rc = 0 ] && has "captureptds: while capturing guard 0 sim 0" "$WORK/out" \
       && has "captureptds: after it 3 MiB 0; guard 3145728 sim 3145728" "$WORK/out" \
       && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
        ok "stream capture via $r on the per-thread default stream (NULL in _ptsz calls): a graph's node, never counted"
    else
        bad "per-thread stream capture via $r (exit $rc)" "$WORK/out"; grep -v "    #" "$WORK/err" | sed 's/^/     | /' | head -10
    fi
done

# VMM handle references: NCCL's free (retain, release, unmap, release) and
# imported handles, counted as the driver counts them, no release unknown
for r in $ROUTES; do
    guarded GPUMEM_METRICS="$WORK/vmmrefs.prom" "$T/apitest" "$r" vmmrefs
    if has "retained and released once: guard 2097152 sim 2097152" "$WORK/out" \
       && has "unmapped, a reference left: guard 2097152 sim 2097152" "$WORK/out" \
       && has "released again: guard 0 sim 0" "$WORK/out" && has "done: guard 0 sim 0" "$WORK/out" \
       && has "unknown frees: 0;" "$WORK/err" \
       && has "2.0 MiB (2097152 bytes) in 1 allocation (cuIpcOpenMemHandle, device 0)" "$WORK/err" \
       && has "SUMMARY: gpumemguard: 2097152 bytes in 1 allocation still live at exit" "$WORK/err" \
       && grep -q '^gpumem_site_bytes{.*rank="1",site="vmmrefs [^"]*"} 2097152$' "$WORK/vmmrefs.prom"; then
        ok "VMM references via $r: a retained handle lives until its last release (NCCL's free), an imported one is IPC (sized by its mappings, in the metrics' sites too), no unknown free"
    else
        bad "VMM references via $r" "$WORK/out"; sed 's/^/     | /' "$WORK/err" | grep -v "    #" | head -20
    fi
done

# a pool's allocation exported and imported (cuMemPoolImportPointer), as
# another process does: imported memory, reported and never counted; its
# frees (cuMemFreeAsync, cuMemFree) are of a pointer the guard knows
for r in $ROUTES; do
    guarded "$T/apitest" "$r" poolimport
    if has "poolimport: null out 1" "$WORK/out" && has "poolimport: imported 3: guard 3145728 sim 3145728" "$WORK/out" \
       && has "poolimport: freed: guard 0 sim 0" "$WORK/out" && has "unknown frees: 0" "$WORK/err" \
       && grep -A1 -F "3.0 MiB (3145728 bytes) in 1 allocation (cuMemPoolImportPointer, device 0) allocated from:" "$WORK/err" | grep -q "in import_leak "; then
        ok "cuMemPoolImportPointer via $r: reported as imported memory (3 MiB leak named import_leak), never counted, its frees known"
    else
        bad "cuMemPoolImportPointer via $r" "$WORK/out"; sed 's/^/     | /' "$WORK/err" | grep -v "    #[1-9]" | head -20
    fi
done

# an import that gives back a handle the process holds (its own export): one
# reference more, the handle still counted until its last release
for r in direct gpa2; do
    guarded GPUSIM_IMPORT_SAME=1 "$T/apitest" "$r" importsame
    if has "importsame: same handle 1: guard 2097152 sim 2097152" "$WORK/out" \
       && has "importsame: one released: guard 2097152 sim 2097152" "$WORK/out" \
       && has "importsame: unmapped: guard 2097152 sim 2097152" "$WORK/out" \
       && has "importsame: done: guard 0 sim 0" "$WORK/out" && ! has "unknown frees: 1" "$WORK/err"; then
        ok "VMM import of a handle already held via $r: one reference more, still counted until its last release"
    else
        bad "VMM import of a handle already held via $r" "$WORK/out"; sed 's/^/     | /' "$WORK/err" | grep -v "    #" | head -20
    fi
done

# CUDA 13's pools by location: the host's default pool counts against no
# device, device 1's against device 1 while device 0 is current
for r in $ROUTES; do
    guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:4M,1:4M "$T/apitest" "$r" poolat
    if has "poolat: host 0, device 1 0 0; device 0 guard 0, device 1 guard 3145728 sim 3145728" "$WORK/out" \
       && ! has "refused" "$WORK/err"; then
        ok "pools by location via $r (cuMemGetDefaultMemPool, cuMemGetMemPool): the host's counts against no device, device 1's against device 1"
    else
        bad "pools by location via $r" "$WORK/out" "$WORK/err"
    fi
done

# a pool's allocations count against the pool's device, not the current one
for r in $ROUTES; do
    guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:64M,1:4M "$T/apitest" "$r" pooldev
    if has "pooldev: device 0 guard 0 sim 0; device 1 guard 3670016 sim 3670016" "$WORK/out" \
       && has "pooldev: over device 1's limit 2, device 0 0" "$WORK/out" && has "after the frees device 1 guard 0 sim 0" "$WORK/out" \
       && has "pooldev: host pool 0; device 0 guard 0, device 1 guard 3670016" "$WORK/out" \
       && has "pooldev: over device 0's limit 2" "$WORK/out" \
       && has "pooldev: the 3000th pool: device 0 guard 0, device 1 guard 1048576" "$WORK/out" \
       && grep -A1 "the biggest live allocations on device 0:" "$WORK/err" | grep -qF "(none)" \
       && has "refused cuMemAllocAsync of 1.0 MiB (1048576 bytes) on device 1" "$WORK/err"; then
        ok "pools via $r: device 1's default, current and created pools count against device 1 (its limit refuses) while device 0 is current; a host pool's against none"
    else
        bad "pools via $r" "$WORK/out" "$WORK/err"
    fi
done

# ------------------------------------------------------------------- replay
if guarded "$T/replay" tests/data/cudart-13.0-getprocaddress.txt && has "0 wrong" "$WORK/out" \
   && has " 48 wrapped" "$WORK/out"; then
    ok "replay of the CUDA 13.0 runtime's 439 lookups: memory entry points wrapped with the driver's ABI, the rest untouched"
else
    bad "replay" "$WORK/out"
fi

# a driver whose lookup table does not point at its exports: the ABI must come
# from (name, version, flags) alone
if guarded GPUSIM_PROC_DISTINCT=1 "$T/replay" tests/data/cudart-13.0-getprocaddress.txt && has "0 wrong" "$WORK/out" \
   && has " 48 wrapped" "$WORK/out"; then
    guarded GPUSIM_PROC_DISTINCT=1 "$T/apitest" gpa2 families
    has "sim live 21353728 guard live 21353728" "$WORK/out" \
        && ok "lookups answered with pointers other than the exports: wrapped by version, counts match the driver" \
        || bad "distinct lookup pointers: families" "$WORK/out"
else
    bad "distinct lookup pointers: replay" "$WORK/out"
fi

# ---------------------------------------------------------- real runtimes
if [ "$HAVE_NVCC" = 1 ]; then
    for v in static shared; do
        guarded GPUMEM_LOG=debug LD_LIBRARY_PATH="$LD_LIBRARY_PATH:${CUDA_HOME:-/usr/local/cuda}/lib64" "$T/cudart_$v"
        miss=""
        for want in "hook cuGetProcAddress_v2 via dlsym" "hook cuMemAlloc_v2 via cuGetProcAddress_v2 (asked cuMemAlloc, version 3020" \
                    "hook cuMemFree_v2 via cuGetProcAddress_v2" "hook cuMemAllocAsync_ptsz via cuGetProcAddress_v2 (asked cuMemAllocAsync, version 11020, flags 2)" \
                    "hook cuMemAllocAsync via cuGetProcAddress_v2 (asked cuMemAllocAsync, version 11020, flags 0)" \
                    "hook cuDevicePrimaryCtxReset via cuGetProcAddress_v2 (asked cuDevicePrimaryCtxReset, version 7000" \
                    "hook cuMemGetInfo_v2 via" "hook cuArrayCreate_v2 via" "hook cuMemHostAlloc via"; do
            has "$want" "$WORK/err" || miss="$miss [$want]"
        done
        if [ -z "$miss" ]; then ok "nvcc-built program ($v cudart): its cuGetProcAddress lookups reach the guard's wrappers"
        else bad "nvcc $v:$miss" "$WORK/err"; fi
    done
else
    skip "nvcc-built programs" "no nvcc"
fi

# ------------------------------------------------------------------- limits
for r in $ROUTES; do
    guarded GPUMEM_LIMIT=4194304 "$T/apitest" "$r" limit 4194304
    if has "LIMIT OK" "$WORK/out" && has "refused cuMemAlloc of 1 byte on device 0: GPUMEM_LIMIT is 4.0 MiB (4194304 bytes), 4.0 MiB (4194304 bytes) in use" "$WORK/err"; then
        ok "limit via $r: every counted family reaches the limit exactly and is refused one byte over; free makes room"
    else
        bad "limit via $r" "$WORK/out"
    fi
done
guarded GPUMEM_LIMIT=4M "$T/apitest" direct limit 4194304 && has "LIMIT OK" "$WORK/out" \
    && ok "GPUMEM_LIMIT=4M is 4194304 bytes" || bad "GPUMEM_LIMIT=4M" "$WORK/out"
guarded GPUSIM_MEM=16M GPUMEM_LIMIT=25% "$T/apitest" direct limit 4194304 && has "LIMIT OK" "$WORK/out" \
    && ok "GPUMEM_LIMIT=25% of a 16 MiB device is 4 MiB" || bad "GPUMEM_LIMIT=25%" "$WORK/out"
guarded GPUMEM_LIMIT=1:1M "$T/apitest" direct limit 4194304
has "LIMIT FAIL" "$WORK/out" && has "cuMemAlloc_v2: exact 0 over 0" "$WORK/out" \
    && ok "per-device limit 1:1M leaves device 0 unlimited" || bad "per-device limits" "$WORK/out"

guarded GPUMEM_LIMIT=16M "$T/apitest" direct hammer
refusals=$(sed -n 's/.*refusals \([0-9]*\).*/\1/p' "$WORK/out"); peak=$(sed -n 's/.*sim peak \([0-9]*\).*/\1/p' "$WORK/out")
if [ -n "$refusals" ] && [ "$refusals" -gt 0 ] && [ -n "$peak" ] && [ "$peak" -le 16777216 ]; then
    ok "8 threads hammering near a 16 MiB limit: driver peak $peak <= limit, $refusals refusals"
else
    bad "hammer: refusals=$refusals peak=$peak" "$WORK/out"
fi

guarded GPUMEM_LIMIT=8M "$T/apitest" direct info
if has "free 8388608 total 8388608 devtotal 8388608" "$WORK/out" && has "after 1MiB: free 7340032 total 8388608" "$WORK/out" \
   && has "null total: 1" "$WORK/out"; then
    ok "cuMemGetInfo / cuDeviceTotalMem show the capped device"
else bad "info under a limit" "$WORK/out"; fi
guarded "$T/apitest" direct info
has "free 8589934592 total 8589934592 devtotal 8589934592" "$WORK/out" \
    && ok "cuMemGetInfo unchanged without a limit" || bad "info without a limit" "$WORK/out"

# in a subshell whose stderr is dropped: the shell's own "Aborted" line is expected, not news
( guarded GPUMEM_LIMIT=4M GPUMEM_ON_LIMIT=abort GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/abort" \
    "$T/apitest" direct limit 4194304 ) 2>/dev/null; rc=$?
if [ $rc -eq 134 ] && has "aborting: GPUMEM_ON_LIMIT=abort" "$WORK/err" && has "SUMMARY: gpumemguard:" "$WORK/abort.txt" \
   && { ! command -v jq >/dev/null 2>&1 || jq -e '[.timeline.events[].kind] | index("refusal") != null' "$WORK/abort.json" >/dev/null; }; then
    ok "GPUMEM_ON_LIMIT=abort aborts with a report, its timeline marking the refusal"
else bad "abort on limit (rc $rc)" "$WORK/err"; fi
guarded GPUMEM_LIMIT=4M GPUMEM_ON_LIMIT=warn "$T/apitest" direct limit 4194304
has "over the limit" "$WORK/err" && has "cuMemAlloc_v2: exact 0 over 0" "$WORK/out" \
    && ok "GPUMEM_ON_LIMIT=warn allows and logs" || bad "warn on limit" "$WORK/err"

# ------------------------------------------------------------ config errors
# (a FIFO of our own stands for a special file: a guard that took /dev/null
# as its metrics file would replace it, when run as root, by its rename)
mkfifo "$WORK/fifo.prom"
for spec in "GPUMEM_LIMIT=1gb" "GPUMEM_LIMIT=1.5g" "GPUMEM_LIMIT=-1" "GPUMEM_LIMIT=0:1G,0:2G" "GPUMEM_LIMIT=" \
            "GPUMEM_ON_LIMIT=explode" "GPUMEM_REPORT_FORMAT=xml" "GPUMEM_SIGNAL=KILL" "GPUMEM_STACK_DEPTH=-3" \
            "GPUMEM_LOG=loud" "GPUMEM_REPORT=" "GPUMEM_SUPPRESSIONS=$WORK" \
            "GPUMEM_METRICS=$WORK/m%q.prom" "GPUMEM_METRICS=$WORK/m%" "GPUMEM_POOLS=on" "GPUMEM_POOLS="; do
    var=${spec%%=*}; val=${spec#*=}; shown=${spec//$WORK/\$WORK}
    guarded "$spec" "$T/apitest" direct info; rc=$?
    if [ $rc -ne 0 ] && has "$var='$val' is not valid" "$WORK/err" && has "Accepted:" "$WORK/err" && ! has "free " "$WORK/out"; then
        ok "bad $shown stops the process at start-up, naming variable, value and accepted forms"
    else bad "bad $shown (rc $rc)" "$WORK/err"; fi
done

# GPUMEM_SIGNAL: a name and its number get one answer (base/signame.c); a
# signal taken is armed (no value taken and then silently never armed); one
# refused stops the process at start-up, for the same reason either way
sigmiss=""
for v in PROF VTALRM XCPU IO STKFLT CONT TSTP URG WINCH PWR ALRM HUP RTMIN RTMIN+2 RTMAX RTMAX-1; do
    n=$(kill -l "$v")
    for w in "$v" "SIG$v" "$n"; do
        guarded GPUMEM_LOG=debug GPUMEM_SIGNAL="$w" "$T/apitest" direct info; rc=$?
        [ $rc = 0 ] && has "debug: dump signal $n armed" "$WORK/err" || sigmiss="$sigmiss [$w taken: rc $rc, not armed]"
    done
done
for v in KILL STOP SEGV BUS FPE ILL TRAP SYS ABRT PIPE XFSZ CHLD TTIN TTOU 32 33 0 65 RTMIN+31 RTMAX-31; do
    case $v in [A-Z]*[A-Z]) n=$(kill -l "$v");; *) n=$v;; esac   # a name's number; numbers and RT forms as they are
    why=""
    for w in "$v" "$n"; do
        guarded GPUMEM_SIGNAL="$w" "$T/apitest" direct info; rc=$?
        this=$(sed -n "s/.*GPUMEM_SIGNAL='$w' is not valid: \(.*\)\. Accepted: .*/\1/p" "$WORK/err")
        if [ $rc != 2 ] || [ -z "$this" ] || has "free " "$WORK/out"; then sigmiss="$sigmiss [$w: rc $rc]"
        elif [ -n "$why" ] && [ "$why" != "$this" ]; then sigmiss="$sigmiss [$v and $n: two reasons]"; fi
        why=$this
    done
done
[ -z "$sigmiss" ] && ok "GPUMEM_SIGNAL: names and numbers alike (PROF and 27, RTMAX and 64, ...): taken ones are armed; KILL, STOP, 32, 33, the fault, abort, pipe, child and terminal signals stop the process at start-up, for one reason" \
    || bad "GPUMEM_SIGNAL names and numbers:$sigmiss" "$WORK/err"

# ------------------------------------------------------- teardown, threads
guarded "$T/apitest" direct reset
if has "guard live 131072 sim live 131072" "$WORK/out" && leak leak_after_reset 131072 cuMemAlloc \
   && has "Reclaimed by context teardown" "$WORK/err" \
   && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q "leak_before_reset" \
   && has "SUMMARY: gpumemguard: 131072 bytes in 1 allocation still live at exit, 5242880 bytes in 1 allocation reclaimed" "$WORK/err"; then
    ok "cuDevicePrimaryCtxReset: released memory is listed as reclaimed, not live"
else bad "primary context reset" "$WORK/err"; fi
guarded "$T/apitest" direct ctxdestroy
has "guard live 0 sim live 0" "$WORK/out" && has "Reclaimed by context teardown" "$WORK/err" \
    && grep -A3 "384.0 KiB (393216 bytes) in 1 allocation (cuMemAlloc" "$WORK/err" | grep -q leak_in_created_ctx \
    && grep -A3 "1.1 MiB (1114112 bytes) in 1 allocation (cuGraphAddMemAllocNode" "$WORK/err" | grep -q leak_graph \
    && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit, 1507328 bytes in 2 allocations reclaimed" "$WORK/err" \
    && ok "cuCtxDestroy: the context's memory (a graph memory node's too) stops counting and is listed as reclaimed" || bad "ctx destroy" "$WORK/err"

guarded "$T/apitest" direct threads
if has "sim live 0 " "$WORK/out" && has "guard live 0 " "$WORK/out" && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations" "$WORK/err"; then
    ok "8 threads x 20000 random alloc/free: no byte lost or counted twice"
else bad "threads" "$WORK/out"; fi

# (a forked child that hangs at its exit fails this case, not the run)
tguarded 60 "$T/apitest" direct fork; rc=$?
parent_reports=$(grep -c "SUMMARY" "$WORK/err")
if [ $rc = 0 ] && [ "$parent_reports" = 2 ] && grep -B0 -A0 "1111552 bytes in 1 allocation still live" "$WORK/err" >/dev/null \
   && has "2222080 bytes in 1 allocation still live" "$WORK/err" \
   && ! grep -q "3333632" "$WORK/err"; then
    ok "fork: parent and child each report only their own allocations"
else bad "fork (exit $rc$([ $rc = 124 ] && echo ', timed out'))" "$WORK/err"; fi

# the same calls without the guard: every return code must be the driver's own
env "$T/apitest" direct nulls >"$WORK/out0" 2>/dev/null
guarded GPUMEM_LIMIT=8M "$T/apitest" direct nulls; rc=$?
if [ $rc -eq 0 ] && has "nulls survived" "$WORK/out" && cmp -s "$WORK/out0" "$WORK/out" && grep -q "^[0-9 ]*$" "$WORK/out" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
    ok "NULL output pointers and refused graph memory nodes (under a limit too) get exactly the driver's return codes, no record, no crash"
else bad "nulls: guarded and unguarded return codes differ" "$WORK/out"; fi
# graph allocations freed in another graph: the driver's answers (cuda.h), the
# same through the guard, and nothing left behind
env "$T/apitest" direct graphs >"$WORK/out0" 2>/dev/null
guarded "$T/apitest" direct graphs
if has "graphs: free nodes x 0 1, y 0 1, z 0; cuMemFree z 0, y 1; after b x 0; after a y 1" "$WORK/out0" \
   && cmp -s "$WORK/out0" "$WORK/out" && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
    ok "graph allocations freed in another graph: the driver's return codes (a destroyed graph ends its free node, not the allocation), the same through the guard"
else bad "graphs freed in another graph" "$WORK/out0"; fi
guarded "$T/apitest" direct unknownfree
has "unknown frees: 1" "$WORK/err" && ok "a free of an unknown pointer is passed to the driver and counted" || bad "unknown free" "$WORK/err"
guarded "$T/apitest" direct nocontext; rc=$?
[ $rc -eq 0 ] && has "no context: 201" "$WORK/out" && ok "no current context: the driver's error passes through" || bad "no context" "$WORK/out"

guarded GPUMEM_STACK_DEPTH=0 "$T/apitest" direct families
has "no stack: GPUMEM_STACK_DEPTH=0" "$WORK/err" && has "SUMMARY: gpumemguard: 24381184 bytes" "$WORK/err" \
    && ok "GPUMEM_STACK_DEPTH=0 turns stacks off, tracking stays" || bad "stack depth 0" "$WORK/err"

# ------------------------------------------------------------------ parser
if "$T/test_limit" >"$WORK/out" 2>&1; then ok "$(tail -1 "$WORK/out")"; else bad "limit parser table" "$WORK/out"; fi
if "$T/test_lock" >"$WORK/out" 2>&1; then ok "$(tail -1 "$WORK/out")"; else bad "the table's lock (base/lock.h)" "$WORK/out"; fi
if "$T/test_bias" >"$WORK/out" 2>&1; then ok "owner-biased exclusion, its owner and a revoker never inside at once: $(tail -1 "$WORK/out")"; else bad "owner-biased exclusion (base/bias.h)" "$WORK/out"; fi
if "$T/test_resident" >"$WORK/out" 2>&1; then
    ok "pages a mapping holds as its file's given back, a page it wrote kept with what was written: $(tail -1 "$WORK/out")"
else bad "giving back a file's pages (tests/unit/test_resident.c)" "$WORK/out"; fi
if "$T/test_track" >"$WORK/out" 2>&1; then
    ok "frees step by step (in flight, marked, racing, torn down, reused, spares; no memory for tables or contexts): $(tail -1 "$WORK/out")"
else bad "the table's frees (tests/unit/test_track.c)" "$WORK/out"; fi
if "$T/test_livetotals" >"$WORK/out" 2>&1; then
    ok "a call site's totals split by CPU, read while one thread allocates on one part and another frees on another: every reading one the call site had, and the peak's make-up (tests/unit/test_livetotals.c)"
else bad "a call site's totals read while they move (tests/unit/test_livetotals.c)" "$WORK/out"; fi
if "$T/test_quota" >"$WORK/out" 2>&1; then
    ok "the quota counter and its credits (per CPU): a thread's pairs write no shared line; used, peaks and refusals exact while credit is held elsewhere, and read at one moment while threads move it; threads sharing a limit never refused within it: $(tail -1 "$WORK/out")"
else bad "the quota's credits (tests/unit/test_quota.c)" "$WORK/out"; fi
if timeout 60 "$T/test_quota_peak" >"$WORK/out" 2>&1; then
    ok "a peak made while another CPU's credit is spent is not missed (threads ordered at the quota's test hook): $(tail -1 "$WORK/out")"
else bad "the peak and credit spent from another CPU's slot (tests/unit/test_quota_peak.c)" "$WORK/out"; fi
if timeout 120 "$T/test_quota_counts" >"$WORK/out" 2>&1; then
    ok "allocation and free counts kept per thread: 8 threads, then 8 more taking their blocks over, and a count from a late thread-exit destructor: none lost, none gone with its thread: $(tail -1 "$WORK/out")"
else bad "the allocation and free counts, kept per thread (tests/unit/test_quota_counts.c)" "$WORK/out"; fi
# the same through the library, with frees on other threads: against the
# simulated driver's default and its per-thread ranges (the benchmark's)
for m in 0 1; do
    if guarded GPUMEM_LIMIT=16M GPUSIM_THREAD_RANGES=$m "$T/threadquota" && has "threadquota: ok" "$WORK/out"; then
        ok "4 threads sharing GPUMEM_LIMIT, freeing each other's allocations (GPUSIM_THREAD_RANGES=$m): none refused within its share, live bytes and cuMemGetInfo exact while they hold credit and after they exit"
    else bad "threads sharing a limit (tests/integration/threadquota.c, GPUSIM_THREAD_RANGES=$m)" "$WORK/out"; fi
done
if "$T/test_symbolize" >"$WORK/out" 2>&1; then
    ok "a frame named without a symbolizer, or without memory for a name or an unloaded library's file: named or counted, no crash; C++ names by the process's own C++ runtime when it has one: $(tail -1 "$WORK/out")"
else bad "naming frames (tests/unit/test_symbolize.c)" "$WORK/out"; fi
if "$T/test_signame" >"$WORK/out" 2>&1; then
    ok "GPUMEM_SIGNAL's grammar, shared with the command: every name as its number, every signal taken can be armed: $(tail -1 "$WORK/out")"
else bad "the GPUMEM_SIGNAL grammar (tests/unit/test_signame.c)" "$WORK/out"; fi
if "$T/test_refusal_sites" >"$WORK/out" 2>&1; then
    ok "call sites explained once: a site whose refusal or out of memory was dropped (too many at once) is explained at its next one, however often, and drops never fill the set: $(tail -1 "$WORK/out")"
else bad "the set of explained call sites (tests/unit/test_refusal_sites.c)" "$WORK/out"; fi
if timeout 60 "$T/test_pcmap" >"$WORK/out" 2>&1; then
    ok "the report's map of code addresses: $(tail -1 "$WORK/out") (tests/unit/test_pcmap.c)"
else bad "the report's map of code addresses (tests/unit/test_pcmap.c)" "$WORK/out"; fi
if "$T/test_utf8" >"$WORK/out" 2>&1; then
    ok "strings in JSON: well-formed UTF-8 kept, each byte of an overlong form, a surrogate, a code point above U+10FFFF or a cut sequence written as U+FFFD: $(tail -1 "$WORK/out")"
else bad "UTF-8 in JSON strings (tests/unit/test_utf8.c)" "$WORK/out"; fi
if "$T/test_suppress" >"$WORK/out" 2>&1; then
    ok "the suppressions file: valid, not valid (stops), out of memory while read (goes on without): $(tail -1 "$WORK/out")"
else bad "reading GPUMEM_SUPPRESSIONS (tests/unit/test_suppress.c)" "$WORK/out"; fi
# the metrics file out of memory for its call sites: how many it left out,
# a gauge of its own (promtool accepts the file), said once on stderr
"$T/test_metrics" "$WORK/tm.prom" >"$WORK/out" 2>&1
promok=1
if command -v promtool >/dev/null 2>&1; then
    for f in 1 2; do promtool check metrics <"$WORK/tm.prom.$f" >>"$WORK/out" 2>&1 || promok=0; done
fi
if [ $promok = 1 ] && grep -q "^metrics: [0-9]* checks, 0 failed$" "$WORK/out" \
   && [ "$(grep -c "out of memory for the metrics file's call sites" "$WORK/out")" = 1 ]; then
    ok "the metrics file's call sites out of memory: gpumem_sites_dropped says how many were left out (0 once memory is back), said once$(command -v promtool >/dev/null && echo ', promtool accepts it'): $(grep '^metrics:' "$WORK/out")"
else bad "the metrics file out of memory for its call sites (tests/unit/test_metrics.c)" "$WORK/out"; fi
if timeout 60 "$T/test_walkgate" >"$WORK/out" 2>&1; then
    ok "stack walks and fork: a fork waits for a walk, a walk during a fork is skipped (no stall), two forks at once, a stuck walker leaves the child without native stacks: $(tail -1 "$WORK/out")"
else bad "stack walks and fork (tests/unit/test_walkgate.c)" "$WORK/out"; fi
if timeout 60 "$T/test_group_fork" >"$WORK/out" 2>&1; then
    ok "group: a fork() child made while its parent moved what it counted waiting for the segment frees at once (tests/unit/test_group_fork.c)"
else bad "group: a fork child's free after a fork during the move" "$WORK/out"; fi

# a few seconds of libFuzzer on the parser (clang), from the seed corpus
if [ -z "${GMG_SANITIZER:-}" ] && command -v clang >/dev/null 2>&1 && \
   clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -o "$T/fuzz_limit" tests/unit/fuzz_limit.c src/base/limit_parse.c 2>"$WORK/err"; then
    mkdir -p "$WORK/corpus" && cp tests/unit/fuzz_corpus/* "$WORK/corpus/"
    if "$T/fuzz_limit" -max_total_time=5 "$WORK/corpus" >"$WORK/out" 2>&1; then
        ok "fuzzing the GPUMEM_LIMIT parser: $(grep -o 'Done [0-9]* runs' "$WORK/out"), no crash, invariants hold"
    else bad "fuzz_limit" "$WORK/out"; fi
else
    skip "fuzz target" "no clang with libFuzzer"
fi

# ----------------------------------------------------------------- reports
. tests/reports.sh

# ----------------------- one behaviour a script, in a directory for its area
# what is counted, and against which device: the quota to the byte, every
# family, races, the driver's failures and NULL outputs, context teardown
. tests/quota/huge.sh
. tests/quota/managed.sh
. tests/quota/boundary.sh
. tests/pitch/granted.sh
. tests/arrays/formats.sh
. tests/arrays/sparse.sh
. tests/arrays/mipmaps.sh
. tests/legacy/entry_points.sh
. tests/vmm/released_mapped.sh
. tests/vmm/create.sh
. tests/vmm/races.sh
. tests/graphs/races.sh
. tests/capture/threads.sh
. tests/capture/errors.sh
. tests/pools/threads.sh
. tests/devices/per_device.sh
. tests/races/frees.sh
. tests/failures/injected.sh
. tests/nulls/info.sh
. tests/nulls/over_limit.sh
. tests/nulls/newer_hooks.sh
. tests/teardown/during_free.sh
. tests/teardown/primary.sh
. tests/teardown/host_memory.sh
. tests/lifecycle/main_exits.sh
. tests/sim/selftest.sh
# the guard out of memory
. tests/oom/untracked.sh
. tests/oom/failed_peak.sh
. tests/oom/marks.sh
. tests/oom/in_use.sh
# refusals and reports
. tests/refusals/per_site.sh
. tests/refusals/lists.sh
. tests/refusals/timing.sh
. tests/refusals/fork_dropped.sh
. tests/reports/order.sh
. tests/reports/fragmentation.sh
. tests/reports/sizes.sh
. tests/reports/names.sh
. tests/reports/address_ranges.sh
. tests/dumps/before_exit.sh
. tests/dumps/concurrent.sh
. tests/dumps/lost.sh
. tests/dumps/exit_in_dump.sh
. tests/dumps/growth.sh
. tests/paths/unwritable.sh
. tests/paths/files.sh
. tests/symbols/unloaded.sh
. tests/symbols/demangle.sh
. tests/symbols/manylibs.sh
. tests/symbols/debugfile.sh
. tests/symbols/warmpages.sh
# signals, forks, descriptors, the library in the process
. tests/signals/storm.sh
. tests/signals/flags.sh
. tests/signals/early.sh
. tests/signals/term_in_exit.sh
. tests/signals/installers.sh
. tests/signals/fork.sh
. tests/signals/late_cuda.sh
. tests/fork/report.sh
. tests/fork/pipes.sh
. tests/fork/no_handlers.sh
. tests/descriptors/reused.sh
. tests/library/exports.sh
. tests/library/copies.sh
. tests/library/othercu.sh
. tests/library/scope.sh
# settings, the exit status, the API, the command, the man page
. tests/settings/stack_depth.sh
. tests/settings/percent.sh
. tests/settings/secure.sh
. tests/exitcode/buffered_stdout.sh
. tests/exitcode/closing.sh
. tests/api/devices.sh
. tests/cli/dump.sh
. tests/docs/accepted_values.sh

# ------------------------------------------------------ CI mode
. tests/cimode.sh
. tests/suppressions/anchors.sh
. tests/settings/edges.sh
. tests/pools.sh

# ------------------------------------------ the fast stack walk against libunwind
. tests/unwind/unwind.sh

# ------------------------------------------------- Python frames
. tests/python.sh
. tests/python/names.sh
. tests/pydeep/pydeep.sh
. tests/pyclients.sh
. tests/oom/driver_oom.sh

# -------------------------------------------------- the command
. tests/cli.sh
. tests/cli/signals.sh
. tests/signals/dump_restart.sh
. tests/metrics/counts.sh
. tests/metrics/interval.sh
. tests/metrics/endings.sh
. tests/metrics/labels.sh

# ---------------------------------------- group quota, deployment
. tests/group.sh
. tests/group/holds.sh
. tests/group/budget.sh
. tests/paths/quiet.sh
. tests/messages/long_line.sh
. tests/deploy.sh

# ------------------------------------------- gpumemguard top, the status page
. tests/top.sh
. tests/top/driver_oom.sh
. tests/top/watched.sh

# ------------------------- the public API for test harnesses, from C
. tests/api.sh

# ------------------------------- the wheel and the pytest plugin, from PyPI
. tests/wheel.sh

# ------------------------------------------- one call site, one group
. tests/sites/sites.sh
. tests/everyday/everyday.sh

# ------------------------------------- a report before a fatal signal
. tests/fatal/fatal.sh

# ------------------------------------------------ the docs are for users
. tests/docs/users.sh

# ------------------------------------ pictures: the HTML page, view
. tests/pictures.sh

echo
echo "$PASS passed, $FAIL failed${SKIP:+, $SKIP skipped}"
[ "$FAIL" -eq 0 ]
