# huge.sh - requests no device can hold (SIZE_MAX and near it, of every
# kind) leave the counters exact, with no limit, under a limit and under
# GPUMEM_ON_LIMIT=warn, which never refuses them (tests/quota/huge.c).
# Sourced by tests/run.sh (its helpers, $T, $WORK).
build huge tests/quota/huge.c -L"$B/sim" -l:libcuda.so.1

# failed huge requests leave the counters exact, with no limit and under warn
for cfg in "" "GPUMEM_LIMIT=8M GPUMEM_ON_LIMIT=warn"; do
    guarded $cfg "$T/huge"
    if has "huge: 2 2 2 2; guard 1048576;" "$WORK/out" && has "then 1MiB more: guard 2097152" "$WORK/out" \
       && has "in use 2.0 MiB (2097152 bytes), peak 2.0 MiB (2097152 bytes)" "$WORK/err"; then
        ok "failed SIZE_MAX-sized alloc, pitch, array, managed leave the counters exact (${cfg:-no limit})"
    else bad "huge requests (${cfg:-no limit})" "$WORK/out"; fi
done

# GPUMEM_ON_LIMIT=warn never refuses, not even a request no device can hold:
# the driver answers (out of memory) and nothing is counted as refused
tguarded 60 GPUMEM_LIMIT=8M GPUMEM_ON_LIMIT=warn "$T/huge"
if has "huge: 2 2 2 2; guard 1048576;" "$WORK/out" && has "device 0: limit 8.0 MiB (8388608 bytes), in use 2.0 MiB (2097152 bytes), peak 2.0 MiB (2097152 bytes), refused 0" "$WORK/err" \
   && has "refused: 0;" "$WORK/err" && ! has "gpumemguard: refused" "$WORK/err"; then
    ok "GPUMEM_ON_LIMIT=warn: SIZE_MAX-sized requests go to the driver, none refused by the guard"
else bad "warn with huge requests" "$WORK/err"; fi
