# info.sh - NULL outputs of cuMemGetInfo and cuDeviceTotalMem under a
# limit get the driver's CUDA_ERROR_INVALID_VALUE; frees of 0 are no-ops
# (tests/nulls/info.c, which other tests run as a program that touches CUDA
# and does little else). Sourced by tests/run.sh (its helpers, $T, $WORK).
# (its program is built by tests/run.sh: other scripts run it too)

# NULL outputs under a limit get the driver's CUDA_ERROR_INVALID_VALUE
guarded GPUMEM_LIMIT=8M "$T/nulls"
has "nulls: 1 1 1 1 1 1" "$WORK/out" && ! grep -q "unknown frees: [1-9]" "$WORK/err" \
    && ok "cuMemGetInfo/cuDeviceTotalMem with NULL outputs under a limit: CUDA_ERROR_INVALID_VALUE; frees of 0 are no-ops" \
    || bad "NULL outputs under a limit" "$WORK/out"
