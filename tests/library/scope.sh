# scope.sh - a guard preloaded behind objects that define a driver entry
# point's name first (a program built without PIC that takes the function's
# address; another interposer before it in LD_PRELOAD) guards all the same:
# only a guard loaded outside the global scope (through NVTX's injection
# path, tests/pools.sh) stays out. Sourced by tests/run.sh.
$CC -std=gnu11 -O1 -g -Wall -Wextra -Werror $SAN_FLAGS -shared -fPIC -I"$CUDA_INC" -o "$T/libinterposer.so" \
    tests/library/interposer.c -ldl || exit 1
if [ -z "${GMG_SANITIZER:-}" ]; then
    $CC -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-pic -no-pie -I"$CUDA_INC" -o "$T/fnptr" tests/library/fnptr.c \
        -L"$B/sim" -l:libcuda.so.1 || exit 1
    guarded GPUMEM_LIMIT=1M "$T/fnptr"; rc=$?
    if [ $rc = 0 ] && has "alloc 2" "$WORK/out" && has "refused cuMemAlloc of 2.0 MiB" "$WORK/err" \
       && ! has "loaded without LD_PRELOAD" "$WORK/err"; then
        ok "a program built without PIC that takes cuMemAlloc's address: the preloaded guard still holds the limit (2 MiB of 1 refused)"
    else bad "a non-PIE program taking cuMemAlloc's address (rc $rc)" "$WORK/err"; fi
else
    skip "a non-PIE program taking cuMemAlloc's address" "built without the sanitizer's PIC runtime only"
fi
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "another CUDA interposer before the guard" "TSan's own dlsym answers the interposer's RTLD_NEXT as if the program asked: it skips the guard"
else
    first=${PRELOAD% *}; [ "$first" = "$PRELOAD" ] && first="" # a sanitizer's runtime stays first
    env LD_PRELOAD="$first $ROOT/$T/libinterposer.so ${PRELOAD##* }" GPUMEM_LIMIT=1M "$T/alloc" 0 2097152 >"$WORK/out" 2>"$WORK/err"; rc=$?
    if has "refused cuMemAlloc of 2.0 MiB" "$WORK/err" && ! has "loaded without LD_PRELOAD" "$WORK/err"; then
        ok "another CUDA interposer before the guard in LD_PRELOAD: the guard still holds the limit (2 MiB of 1 refused)"
    else bad "an interposer before the guard (rc $rc)" "$WORK/err"; fi
fi
