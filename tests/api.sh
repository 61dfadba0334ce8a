# api.sh - the public API's calls for test harnesses, from C
# (tests/api/windows.c): the peak window, marks and what was allocated since
# one (bytes, count, the stacks as text), the size parser. Sourced by run.sh
# (uses its helpers and $B, $T, $WORK, $PRELOAD).

build windows tests/api/windows.c -L"$B/sim" -l:libcuda.so.1
for api_mode in api fork; do
    tguarded 60 GPUSIM_DEVICES=2 "$T/windows" "$api_mode"; api_rc=$? # (fork: a child that hangs fails the case)
    if [ $api_rc = 0 ] && has "windows done" "$WORK/out" && ! has "FAIL" "$WORK/out" \
       && [ "$(grep -c '^ok ' "$WORK/out")" = "$([ $api_mode = api ] && echo 24 || echo 1)" ]; then
        case $api_mode in
        api) ok "public API from C: a resettable peak window (base, peak, growth, any device, dumps inside it), marks and the live allocations since one (bytes, count, grouped stacks as text, snprintf-style), what was live at the window's peak as text, sizes parsed as GPUMEM_LIMIT, bad input refused" ;;
        fork) ok "public API from C: a parent's mark means nothing in a forked child, which marks its own" ;;
        esac
    else
        bad "public API from C ($api_mode, rc $api_rc)" "$WORK/out"
    fi
done

# the window's peak read while another thread resets it, and a third owns
# the device's peak word: never below what stays live
build reset_reads tests/api/reset_reads.c -L"$B/sim" -l:libcuda.so.1
tguarded 60 GPUMEM_REPORT=none "$T/reset_reads" 2; api_rc=$?
if [ $api_rc = 0 ] && has "none below the live 1 MiB" "$WORK/out"; then
    ok "public API from C: the window's peak read while another thread resets it every 200 us and a third allocates alone: never below the 1 MiB held ($(grep -o '^reset reads: [0-9]* readings' "$WORK/out"))"
else
    bad "public API from C: the window's peak read during resets (rc $api_rc)" "$WORK/out"
fi

# a second copy of the library, opened by path, answers with the first's
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "public API from C through a second copy" "two TSan-built copies of one library crash TSan's runtime at exit"
else
    mkdir -p "$WORK/apicopy"; cp "$B/libgpumemguard.so" "$WORK/apicopy/libgpumemguard.so"
    guarded "$T/windows" copy "$WORK/apicopy/libgpumemguard.so"; api_rc=$?
    if [ $api_rc = 0 ] && has "ok a second copy answers with the first's marks and window" "$WORK/out" \
       && ! has "FAIL" "$WORK/out"; then
        ok "public API from C through a second copy of the library: the first copy's marks, allocations and window"
    else
        bad "public API from C through a second copy (rc $api_rc)" "$WORK/out"
    fi
fi

# the allocations since a mark without the caching pools' segments (what the
# pytest plugin's limit_gpu_leaks counts): a pool: line names the pool
build since_pools tests/api/since_pools.c -L"$B/sim" -l:libcuda.so.1
printf 'pool:my_pool_grow\n' >"$WORK/since_pools.supp"
guarded GPUMEM_SUPPRESSIONS="$WORK/since_pools.supp" "$T/since_pools"
if has "since: all 0 6294456 3; no pools 0 3000 1; bad flag -1; text leak -" "$WORK/out"; then
    ok "gpumemguard_since with GPUMEMGUARD_SINCE_NO_POOLS: a pool's 6 MiB grown since the mark left out, the 3000-byte leak beside it kept (text too); flags 0 counts both; an unknown flag refused"
else bad "gpumemguard_since without pools" "$WORK/out"; fi
guarded GPUMEM_POOLS=off GPUMEM_SUPPRESSIONS="$WORK/since_pools.supp" "$T/since_pools"
if has "since: all 0 6294456 3; no pools 0 6294456 3; bad flag -1; text leak pool" "$WORK/out"; then
    ok "gpumemguard_since under GPUMEM_POOLS=off: no segment is a pool's, every allocation counts"
else bad "gpumemguard_since without pools, GPUMEM_POOLS=off" "$WORK/out"; fi
