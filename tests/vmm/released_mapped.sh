# released_mapped.sh - VMM handles released while mapped (as CUDA's
# samples do) count until their last mapping goes: under a limit, and for
# one cuMemUnmap over two mappings (tests/vmm/released_mapped.c). Sourced by
# tests/run.sh (its helpers, $B, $T, $WORK).
# (its program is built by tests/run.sh: other scripts run it too)

# cuMemCreate -> cuMemMap -> cuMemRelease: the memory counts until unmapped
guarded GPUMEM_LIMIT=64M "$T/released_mapped" vmm_bypass
if has "create 2: 2" "$WORK/out" && has "while mapped: alloc 60MiB 2, guard 67108864, sim 67108864" "$WORK/out" \
   && has "after unmap: alloc 60MiB 0, guard 62914560, sim 62914560, sim peak 67108864" "$WORK/out"; then
    ok "VMM handle released while mapped keeps counting until unmapped: driver never above the 64 MiB limit"
else bad "VMM release while mapped" "$WORK/out"; fi

# one cuMemUnmap over two mappings (handles released while mapped): both go,
# with their memory; a linear allocation and another mapping stay
tguarded 60 GPUMEM_REPORT_FORMAT=json "$T/released_mapped" unmap_range
if has "unmap_range: mapped guard 7340032 sim 7340032; unmapped guard 3145728 sim 3145728" "$WORK/out" \
   && jq -e '([.live[] | {api, bytes}] | sort_by(.bytes)) == [{"api":"cuMemAlloc","bytes":1048576},{"api":"cuMemCreate","bytes":2097152}]
             and ([.live[] | select(.api == "cuMemAlloc")][0].frames[0].function == "linear_stays")
             and ([.address_ranges[] | {api, bytes}] | sort_by(.api, .bytes))
                 == [{"api":"cuMemAddressReserve","bytes":2097152},{"api":"cuMemAddressReserve","bytes":8388608},{"api":"cuMemMap","bytes":2097152}]' \
      "$WORK/err" >/dev/null 2>&1; then
    ok "one cuMemUnmap over two mappings of released handles frees both; other records untouched"
else bad "unmap over several mappings" "$WORK/err"; fi
