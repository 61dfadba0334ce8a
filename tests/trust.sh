# trust.sh - regression tests for the hostile cases of issue 9, sourced by
# run.sh (uses its helpers). Each would fail on the guard before the fix.

# 1. cuMemCreate -> cuMemMap -> cuMemRelease: the memory counts until unmapped
guarded GPUMEM_LIMIT=64M "$T/trust" vmm_bypass
if has "create 2: 2" "$WORK/out" && has "while mapped: alloc 60MiB 2, guard 67108864, sim 67108864" "$WORK/out" \
   && has "after unmap: alloc 60MiB 0, guard 62914560, sim 62914560, sim peak 67108864" "$WORK/out"; then
    ok "VMM handle released while mapped keeps counting until unmapped: driver never above the 64 MiB limit"
else bad "VMM release while mapped" "$WORK/out"; fi

# 2. a failed cuMemCreate at location -1 leaks no quota
guarded GPUMEM_LIMIT=8M "$T/trust" vmm_badloc
has "failed creates 40; then alloc of the whole limit: 0; guard 8388608" "$WORK/out" \
    && ok "40 failed cuMemCreate at location -1 keep no quota" || bad "cuMemCreate location -1" "$WORK/out"

# 3. failed huge requests leave the counters exact, with no limit and under warn
for cfg in "" "GPUMEM_LIMIT=8M GPUMEM_ON_LIMIT=warn"; do
    guarded $cfg "$T/trust" huge
    if has "huge: 2 2 2 2; guard 1048576;" "$WORK/out" && has "then 1MiB more: guard 2097152" "$WORK/out"; then
        ok "failed SIZE_MAX-sized alloc, pitch, array, managed leave the counters exact (${cfg:-no limit})"
    else bad "huge requests (${cfg:-no limit})" "$WORK/out"; fi
done

# 9. two threads freeing one pointer; equal legacy pointers on two devices
guarded GPUSIM_FREE_DELAY_US=20 "$T/trust" double_free 1500
has "double free: 1500 rounds, 0 phantoms, guard 0, sim 0" "$WORK/out" \
    && ok "two threads freeing one pointer at once, 1500 rounds: no phantom record, no double release" \
    || bad "concurrent double free" "$WORK/out"
guarded GPUSIM_DEVICES=2 "$T/trust" legacy2dev
if has "legacy pointers equal; dev0 1048576 dev1 2097152" "$WORK/out" \
   && has "after freeing dev1's: dev0 1048576 dev1 0" "$WORK/out" && has "after freeing dev0's: dev0 0 dev1 0" "$WORK/out"; then
    ok "equal legacy 32-bit pointers on two devices are two records, each freed on its own device"
else bad "legacy pointers on two devices" "$WORK/out"; fi

# 10. NULL outputs under a limit get the driver's CUDA_ERROR_INVALID_VALUE
guarded GPUMEM_LIMIT=8M "$T/trust" nulls
has "nulls: 1 1 1 1 1 1" "$WORK/out" && ok "cuMemGetInfo/cuDeviceTotalMem with NULL outputs under a limit: CUDA_ERROR_INVALID_VALUE" \
    || bad "NULL outputs under a limit" "$WORK/out"

# 11. the simulated driver: sizes that overflow fail; fork while inside it
"$T/trust" sim_sizes >"$WORK/out" 2>&1
has "sim sizes: 2 2 2" "$WORK/out" && ok "simulated driver: SIZE_MAX alloc, pitch and array sizes that wrap fail (out of memory)" \
    || bad "simulated driver sizes" "$WORK/out"
timeout 120 "$T/trust" sim_fork 60 >"$WORK/out" 2>&1
has "forks 60, children fine 60" "$WORK/out" && ok "simulated driver: 60 forks while two threads are inside it, every child works" \
    || bad "simulated driver fork" "$WORK/out"

# 4. handlers re-installed from 3 threads while signals arrive: no crash, every
#    handler called in its own form
if [ "${GMG_SANITIZER:-}" = tsan ]; then TS=(env TSAN_OPTIONS="$TSAN_OPTIONS die_after_fork=0"); else TS=(env); fi
timeout 120 "${TS[@]}" LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/trust" sigstorm 2000 >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "sigstorm: 2000 signals, handlers ran 2000, bad 0" "$WORK/out"; then
    ok "2000 dump signals while 3 threads re-install SIGUSR1 handlers (plain and SA_SIGINFO): each called as installed"
else bad "signal storm with re-installed handlers (rc $rc)" "$WORK/out"; fi

# 5. the program's sa_flags (no SA_RESTART: EINTR), sa_mask and SA_RESETHAND stand
timeout 60 "${TS[@]}" LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/trust" sigsem >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "read interrupted: yes" "$WORK/out" && has "sa_mask kept: yes" "$WORK/out" \
   && has "resethand: calls 1, now SIG_DFL" "$WORK/out" && has "flags read back: same" "$WORK/out"; then
    ok "the program's SIGUSR1 sa_flags (EINTR without SA_RESTART), sa_mask and SA_RESETHAND behave as without the guard"
else bad "signal semantics (rc $rc)" "$WORK/out"; fi
