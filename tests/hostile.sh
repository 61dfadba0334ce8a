# hostile.sh - adversarial cases of the newer hooks (graph memory nodes,
# stream capture, memory pools, VMM handle references, arrays): races
# between threads, injected driver errors, NULL outputs, the quota at its
# boundary. Sourced by run.sh (uses its helpers and $B, $T, $WORK).

build hostile tests/integration/hostile.c -L"$B/sim" -l:libcuda.so.1
hguarded() { timeout 120 env LD_PRELOAD="$PRELOAD" GPUSIM_STATS="$WORK/stats" "$@" >"$WORK/out" 2>"$WORK/err"; }

# a VMM handle released on one thread while another unmaps it, released on
# two threads at once, or retained and released while its own reference goes
hguarded "$T/hostile" vmm_races 300
has "vmm races: 300 rounds, 0 wrong; guard 0 sim 0" "$WORK/out" \
    && ok "VMM handle references raced (release || unmap, release || release, retain+release || release): the count follows the driver's every round" \
    || bad "VMM handle races" "$WORK/out"

# a graph allocation freed by free nodes of two graphs, or a free node and
# cuMemFree, at once: nothing left, nothing counted
hguarded "$T/hostile" graph_races 200
has "graph races: 200 rounds; guard 0 sim 0" "$WORK/out" && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" \
    && ok "a graph allocation freed by two free nodes, or a free node and cuMemFree, on two threads at once: nothing left listed" \
    || bad "graph free races" "$WORK/out"

# 8 threads capture at once (streams of their own, their per-thread default
# streams): 8 MiB in each capture under a 4 MiB limit always goes through,
# uncounted; outside the captures the same streams' allocations count
for mode in capture_threads capture_ptds; do
    hguarded GPUMEM_LIMIT=4M "$T/hostile" $mode 200
    if has "capture threads: 8 x 200 rounds, captured refused 0, bad 0; after all ended 8 MiB 2; guard 0 sim 0" "$WORK/out" \
       && has "unknown frees: 0;" "$WORK/err" && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
        ok "stream capture on 8 threads at once ($mode): captured allocations never refused nor counted, the rest counted, none after the last end"
    else bad "stream capture on 8 threads ($mode)" "$WORK/out"; fi
done

# the driver's refusals of capture calls leave the capture count alone
env "$T/hostile" capture_errors >"$WORK/out0" 2>/dev/null
hguarded GPUMEM_LIMIT=4M "$T/hostile" capture_errors
if has "capture errors: again 401 legacy 900 null graph 1 never 401 never legacy 401; captured 8 MiB 0, after 8 MiB 2; guard 0 sim 0" "$WORK/out" \
   && [ "$(sed 's/; captured.*//' "$WORK/out0")" = "$(sed 's/; captured.*//' "$WORK/out")" ]; then
    ok "refused capture calls (a second begin, a NULL graph, no capture, the legacy stream): the driver's codes; the capture still counted as one"
else bad "capture error paths" "$WORK/out"; fi

# pools of two devices made, used and destroyed on 8 threads at once, all
# under device 0's context: each allocation counts on its pool's device
hguarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:64M,1:4M "$T/hostile" pool_threads 300
has "pool threads: 8 x 300 rounds, refused 0; device 0 guard 0 sim 0; device 1 guard 0 sim 0" "$WORK/out" \
    && ok "pools of two devices made and destroyed on 8 threads at once: each allocation counted on its pool's device, nothing refused" \
    || bad "pools on 8 threads" "$WORK/out"

# the limit to the byte, family by family, on the pool's or handle's device
hguarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:8M,1:8M GPUMEM_STACK_DEPTH=0 "$T/hostile" boundary
has "boundary: 0 2 0 2 2 0 0 0 0 2 0 0 2; device 0 guard 0 sim 0; device 1 guard 0 sim 0" "$WORK/out" \
    && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" \
    && ok "GPUMEM_LIMIT to the byte: another device's pool, cuMemCreate (released while mapped), arrays, mipmaps; a graph node over it; all back to 0" \
    || bad "the limit to the byte" "$WORK/out"

# injected driver failures of allocations and frees
hguarded GPUSIM_FAIL=cuMemCreate:2,cuArrayCreate_v2:1,cuMemAllocAsync:2,cuMemRelease:1,cuMemFreeAsync:1 "$T/hostile" injected
has "injected: create 0 2 array 2 0 async 0 2 (guard 3407872 sim 3407872); release 999 0 freeasync 999 0; guard 0 sim 0" "$WORK/out" \
    && ok "failed cuMemCreate, cuArrayCreate, cuMemAllocAsync keep no quota; a failed cuMemRelease and cuMemFreeAsync keep it counted" \
    || bad "injected driver failures" "$WORK/out"

# sparse and deferred-mapping arrays hold no memory
hguarded GPUMEM_LIMIT=4M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/arrays.json" "$T/hostile" arrays
has "arrays: deferred 0 dense 2; guard 0 sim 0" "$WORK/out" \
    && jq -e '[.live[] | select(.api == "cuArrayCreate")] | length == 1 and .[0].bytes == 0 and .[0].frames[0].function == "leak_sparse"' \
          "$WORK/arrays.json" >/dev/null 2>&1 \
    && ok "a 256 MiB sparse array under a 4 MiB limit: allowed, listed at 0 bytes; the dense one refused" \
    || bad "sparse arrays" "$WORK/out"

# layered and cubemap mipmapped arrays: every level has every layer
hguarded GPUMEM_LIMIT=46924 "$T/hostile" mipmap_layered
if has "mipmap layered: 0 0 0, 1 byte more 2; guard 46924 sim 46924" "$WORK/out" \
   && has "mipmap layered: destroyed; guard 0 sim 0" "$WORK/out"; then
    ok "layered and cubemap mipmapped arrays: each level counts all layers (46924 bytes, the limit's every byte; one more refused)"
else bad "layered mipmapped arrays" "$WORK/out"; fi

# a mipmapped array's level count, clamped as the driver clamps it: 0
# levels are 1 (never free), 100 levels of a 64x64 array are 7
hguarded GPUMEM_LIMIT=9557 "$T/hostile" mipmap_levels
if has "mipmap levels: 0 0, 1 byte more 2; guard 9557 sim 9557" "$WORK/out" \
   && has "mipmap levels: destroyed; guard 0 sim 0" "$WORK/out"; then
    ok "mipmapped arrays of 0 and 100 levels count the 1 and 7 levels the driver makes (9557 bytes, the limit's every byte; one more refused)"
else bad "mipmap level counts" "$WORK/out"; fi

# NULL outputs and invalid handles: the driver's codes, nothing recorded
env "$T/hostile" nulls2 >"$WORK/out0" 2>/dev/null
hguarded GPUMEM_LIMIT=1M "$T/hostile" nulls2; rc=$?
if [ $rc = 0 ] && grep -q "^[0-9 ]*$" "$WORK/out0" && cmp -s "$WORK/out0" "$WORK/out" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
    ok "NULL outputs and invalid handles of pools, VMM references, mipmaps, captures and graph nodes: the driver's codes, nothing kept"
else bad "NULL outputs of the newer hooks: guarded '$(cat "$WORK/out")', driver '$(cat "$WORK/out0")'" "$WORK/err"; fi

# a refusal's message names what holds the device's quota: not host memory
# from cuMemCreate (three 64 MiB handles), not a sparse array (0 bytes)
hguarded GPUMEM_LIMIT=4M GPUMEM_REPORT="$WORK/lists.txt" "$T/hostile" refusal_lists
if has "refusal lists: 1 byte more 2; guard 4194304 sim 4194304" "$WORK/out" \
   && [ "$(grep -A1 "the biggest live allocations on device 0:" "$WORK/err" | tail -1)" = "4.0 MiB (4194304 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" ] \
   && [ "$(before_peak "$WORK/err" | grep -c "allocated from:$")" = 1 ] \
   && grep -A1 -F "64.0 MiB (67108864 bytes) in 1 allocation (cuMemCreate, device 0) allocated from:" "$WORK/lists.txt" | grep -q " in leak_host_handle " \
   && has "SUMMARY: gpumemguard: 205520896 bytes in 5 allocations still live at exit" "$WORK/lists.txt"; then
    ok "a refusal lists the device memory that holds the quota, not cuMemCreate handles in host memory nor sparse arrays; the exit report lists them all"
else bad "what a refusal lists" "$WORK/err"; fi
