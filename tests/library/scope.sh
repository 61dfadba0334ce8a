# scope.sh - a guard preloaded behind objects that define a driver entry
# point's name first (a program built without PIC that takes the function's
# address; another interposer before it in LD_PRELOAD) guards all the same:
# only a guard loaded outside the global scope (through NVTX's injection
# path, tests/pools.sh) stays out; the driver itself before the guard is
# said. Sourced by tests/run.sh.
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
# the driver itself named before the guard in LD_PRELOAD: the program's own
# driver calls go straight to it; said, once
first=${PRELOAD% *}; [ "$first" = "$PRELOAD" ] && first=""
env LD_PRELOAD="$first $ROOT/$B/sim/libcuda.so.1 ${PRELOAD##* }" GPUMEM_LIMIT=1M "$T/alloc" 0 2097152 >"$WORK/out" 2>"$WORK/err"
if [ "$(grep -c "libcuda.so.1 comes before the guard in this process's libraries" "$WORK/err")" = 1 ] \
   && has "are not guarded; name the guard first" "$WORK/err"; then
    ok "the driver named before the guard in LD_PRELOAD: said once (the program's own driver calls are not guarded)"
else bad "the driver before the guard in LD_PRELOAD" "$WORK/err"; fi
