# untracked.sh - the guard out of memory for its records
# (tests/oom/untracked.c; aligned_alloc failed by tests/oom/nomem.c
# preloaded before the guard, realloc by tests/integration/oomshim.c after
# it): the program lives on, told once; what the guard could not track stays
# counted, its reports say so, GPUMEM_EXITCODE still finds a leak. Sourced
# by tests/run.sh (its helpers, $T, $WORK, $PRELOAD).
# (its program is built by tests/run.sh: other scripts run it too)
build libgmgnomem.so -shared -fPIC tests/oom/nomem.c

# the guard out of memory for its table: the program lives on, told once;
# what it could not track stays counted, and the exit report says how much
# (uthash's default, exit(-1) inside the shard lock, hung the exit report).
# 0 and 200 calls: some shards' tables are never made; 600: every shard's
# table is made (two calls each), then no bucket array can double (200,000
# allocations: about 780 a shard, where 20,000 never needed a doubling),
# and every allocation is still tracked, on longer chains.
for ok in 0 200 600; do
    nallocs=$([ $ok = 600 ] && echo 200000 || echo 20000)
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "the guard out of memory for its table" "TSan's runtime, linked into the program, has its own aligned_alloc, found before any preloaded one"
        continue
    fi
    # first of all, ahead of ASan's runtime too (which has its own aligned_alloc)
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" \
        GMGTEST_ALIGNED_OK=$ok "$T/untracked" nomem $nallocs >"$WORK/out" 2>"$WORK/err"; rc=$?
    untracked=$(sed -n 's/^nomem: untracked \([0-9]*\) bytes$/\1/p' "$WORK/out")
    said=$(grep -c "out of memory for the guard's records" "$WORK/err")
    if [ $ok = 600 ]; then
        if [ $rc = 0 ] && has "nomem: 200000 allocs, 200000 frees; guard 102400000 while held; after the frees sim 0, guard 0" "$WORK/out" \
           && [ "$untracked" = 0 ] && [ "$said" = 0 ] && ! grep -q "incomplete" "$WORK/err"; then
            ok "the guard's buckets cannot double (aligned_alloc fails after $ok calls): all 200,000 allocations tracked on longer chains, exact, the report whole (e5acd81: 95,737 untracked)"
        else bad "buckets that cannot double (aligned_alloc fails after $ok calls; exit $rc)" "$WORK/out" "$WORK/err"; fi
        continue
    fi
    if [ $rc = 0 ] && has "nomem: 20000 allocs, 20000 frees; guard 10240000 while held; after the frees sim 0, guard the untracked bytes" "$WORK/out" \
       && [ "$said" = 1 ] && [ "${untracked:-0}" -gt 0 ] \
       && has "WARNING: this report is incomplete (the guard ran out of memory or room):" "$WORK/err" \
       && grep -qE "^  [0-9]+ allocations made since start-up could not be tracked: none of them is in this report; the $untracked bytes they counted against the quota stay counted\.$" "$WORK/err"; then
        ok "the guard's tables cannot be made (aligned_alloc fails after $ok calls): 20,000 allocations go on, said once, untracked bytes stay counted, and the exit report says how many ($untracked bytes)"
    else bad "the guard out of memory for its table (aligned_alloc fails after $ok calls; exit $rc)" "$WORK/out" "$WORK/err"; fi
done
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_REPORT_FORMAT=json \
        GPUMEM_METRICS="$WORK/nomem.prom" "$T/untracked" nomem 20000 >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && sed -n '/^{/,$p' "$WORK/err" | jq -e '.incomplete == ["untracked"] and .untracked.allocations == 20001
            and .untracked.counted_bytes == 10240000 and .unlisted.allocations == 0 and .totals.live_allocations == 0' >/dev/null \
       && grep -q '^gpumem_untracked_allocations_total{pid="[0-9]*",exe="untracked",host="[^"]*",pidns="[0-9]*"} 20001$' "$WORK/nomem.prom"; then
        ok "JSON says the report is incomplete: \"incomplete\": [\"untracked\"], 20,000 allocations and an address range untracked, 10240000 bytes of them counted; the metrics file counts them too"
    else bad "JSON of a report the guard's out of memory made incomplete (exit $rc)" "$WORK/out" "$WORK/err"; fi
fi
# GPUMEM_EXITCODE when nothing could be tracked: a leak among untracked
# allocations fails the job (more allocations than frees the guard never
# saw); all of them freed does not
for leak in 0 1; do
    [ "${GMG_SANITIZER:-}" = tsan ] && { skip "GPUMEM_EXITCODE with untracked allocations" "as above"; continue; }
    mode=$([ $leak = 1 ] && echo nomem_leak || echo nomem)
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_EXITCODE=23 \
        "$T/untracked" $mode 50 >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $leak = 1 ] && [ $rc = 23 ] && has "  At least 1 of them were never freed (more than the 49 frees of pointers the guard never saw)" "$WORK/err"; then
        ok "GPUMEM_EXITCODE=23 with every allocation untracked: 50 made, 49 freed, the one leak fails the job"
    elif [ $leak = 0 ] && [ $rc = 0 ] && ! grep -q "never freed" "$WORK/err"; then
        ok "GPUMEM_EXITCODE=23 with every allocation untracked and all freed: the program's own status"
    else bad "GPUMEM_EXITCODE with untracked allocations ($mode; exit $rc)" "$WORK/out" "$WORK/err"; fi
done
# ... and family against family, as for tracked records: reserved ranges
# and mappings the guard could not track are no leaks (a range kept, a
# handle mapped and all undone: the program's own status), and the free of
# a range never stands for an allocation's (one allocation kept: 23)
for leak in 0 1; do
    [ "${GMG_SANITIZER:-}" = tsan ] && { skip "GPUMEM_EXITCODE with untracked ranges" "as above"; continue; }
    rm -f "$WORK"/rg.*
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_EXITCODE=23 \
        GPUMEM_REPORT="$WORK/rg" GPUMEM_REPORT_FORMAT=text,json "$T/untracked" nomem_ranges $leak >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $leak = 0 ] && [ $rc = 0 ] && has "  51 allocations made since start-up could not be tracked" "$WORK/rg.txt" \
       && has "  3 reserved address ranges or mappings could not be tracked: none of them is in this report; they hold no memory of their own and are no leaks." "$WORK/rg.txt" \
       && has "  Untracked, by API: cuMemAlloc 50, cuMemCreate 1, cuMemMap 1, cuMemAddressReserve 2." "$WORK/rg.txt" \
       && ! grep -q "never freed" "$WORK/rg.txt" \
       && jq -e '.untracked == {"allocations": 54, "counted_bytes": 2301952, "never_freed": 0, "ranges": 3,
                 "by_api": {"cuMemAlloc": 50, "cuMemCreate": 1, "cuMemMap": 1, "cuMemAddressReserve": 2}}' "$WORK/rg.json" >/dev/null; then
        ok "GPUMEM_EXITCODE=23 with untracked ranges and mappings, every allocation freed: no leak, the program's own status; the report counts them apart, by API"
    elif [ $leak = 1 ] && [ $rc = 23 ] \
       && has "  At least 1 of them were never freed (more than the 50 frees of pointers the guard never saw, ranges apart)" "$WORK/rg.txt" \
       && jq -e '.untracked.never_freed == 1 and .untracked.ranges == 3' "$WORK/rg.json" >/dev/null; then
        ok "GPUMEM_EXITCODE=23 with untracked ranges and one allocation kept: the freed range does not hide the leak"
    else bad "GPUMEM_EXITCODE with untracked ranges (leak $leak; exit $rc)" "$WORK/rg.txt" "$WORK/err"; fi
done
# ... and a leak reclaimed by a context teardown that the guard could not
# list (out of memory for its list: realloc fails there, the first of the
# guard's reallocs with stacks off) fails the job as a listed one does
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "GPUMEM_EXITCODE with a reclaimed leak not listed" "oomshim.c forwards to glibc's allocator, which a sanitizer's replaces"
else
    build liboomshim.so -shared -fPIC tests/integration/oomshim.c
    for oom in 0 1; do
        shim=$([ $oom = 1 ] && echo "$ROOT/$T/liboomshim.so" || echo "")
        timeout 60 env LD_PRELOAD="$PRELOAD $shim" OOM_FUNCS=r OOM_ONLY=1 OOM_LOG=1 GPUMEM_STACK_DEPTH=0 \
            GPUMEM_EXITCODE=23 "$T/untracked" reclaimed_leak >"$WORK/out" 2>"$WORK/err"; rc=$?
        if [ $oom = 0 ] && [ $rc = 23 ] && has "4096 bytes in 1 allocation reclaimed by context teardown" "$WORK/err"; then
            ok "GPUMEM_EXITCODE=23 with a leak reclaimed by context teardown: the job fails"
        elif [ $oom = 1 ] && [ $rc = 23 ] && [ "$(grep -c '^\[shim\] fail r #1 ' "$WORK/err")" = 1 ] \
           && has "  1 allocation (4096 bytes) reclaimed by context teardown could not be listed" "$WORK/err"; then
            ok "GPUMEM_EXITCODE=23 with a reclaimed leak the guard could not list (out of memory): the job fails all the same"
        else bad "GPUMEM_EXITCODE with a reclaimed leak (out of memory $oom; exit $rc)" "$WORK/err"; fi
    done
fi
# a refusal while nothing could be tracked: the message cannot list what
# holds the bytes, and says so (it said they had been freed)
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_LIMIT=3M \
        "$T/untracked" nomem_refuse >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "nomem_refuse: the fourth refused" "$WORK/out" \
       && has "  (none listed: 3 allocations could not be tracked (the guard ran out of memory), and 3145728 bytes of them stay counted)" "$WORK/err" \
       && ! grep -q "has been freed since" "$WORK/err"; then
        ok "a refusal with every allocation untracked: the message says the guard could not track them, not that they were freed"
    else bad "a refusal message with untracked allocations (exit $rc)" "$WORK/out" "$WORK/err"; fi
fi
# a mapping the guard could not record: its handle's bytes are not given back
# while the driver still holds them (a release while mapped)
for ok in 2 4; do
    [ "${GMG_SANITIZER:-}" = tsan ] && { skip "a mapping the guard could not record" "as above"; continue; }
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=$ok \
        "$T/untracked" nomem_vmm >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "nomem_vmm: guard never below the driver; sim 0 at the end" "$WORK/out" \
       && [ "$(grep -c "out of memory for the guard's records" "$WORK/err")" = 1 ]; then
        ok "a VMM mapping the guard could not record (aligned_alloc fails after $ok calls): never fewer bytes counted than the driver holds"
    else bad "a mapping the guard could not record (aligned_alloc fails after $ok calls; exit $rc)" "$WORK/out"; fi
done
