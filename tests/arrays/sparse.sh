# sparse.sh - sparse and deferred-mapping arrays hold no memory: allowed
# over the limit, counted nowhere, listed at 0 bytes; an ordinary array is
# still refused (tests/arrays/sparse.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build sparse_arrays tests/arrays/sparse.c -L"$B/sim" -l:libcuda.so.1

tguarded 60 GPUMEM_LIMIT=1M "$T/sparse_arrays" sparse
has "sparse 0 deferred 0 mipmapped sparse 0; guard 0 sim 0" "$WORK/out" && has "an ordinary array over the limit: 2" "$WORK/out" \
    && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" \
    && ok "sparse and deferred-mapping arrays (64 MiB under a 1 MiB limit) hold no memory: counted nowhere, freed; an ordinary one still refused" \
    || bad "sparse arrays" "$WORK/out"

# sparse and deferred-mapping arrays hold no memory
tguarded 120 GPUMEM_LIMIT=4M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/arrays.json" "$T/sparse_arrays" arrays
has "arrays: deferred 0 dense 2; guard 0 sim 0" "$WORK/out" \
    && jq -e '[.live[] | select(.api == "cuArrayCreate")] | length == 1 and .[0].bytes == 0 and .[0].frames[0].function == "leak_sparse"' \
          "$WORK/arrays.json" >/dev/null 2>&1 \
    && ok "a 256 MiB sparse array under a 4 MiB limit: allowed, listed at 0 bytes; the dense one refused" \
    || bad "sparse arrays" "$WORK/out"
