# othercu.sh - dlsym of a driver entry point's name on a library that is
# not the driver (tests/library/othercu.c, mockcu.c): that library's
# function is what the program gets, whether it asks before or after its
# first CUDA call, and the driver's own entry point stays the driver's.
# Sourced by tests/run.sh (its helpers, $B, $T, $WORK).
$CC -std=gnu11 -O1 -g -Wall -Wextra -Werror $SAN_FLAGS -shared -fPIC -o "$T/libmockcu.so" tests/library/mockcu.c || exit 1
build othercu tests/library/othercu.c
for mode in early late; do
    guarded "$T/othercu" "$T/libmockcu.so" $mode; rc=$?
    if [ $rc = 0 ] && has "othercu $mode: mock 0xdead0000 1; driver ok sim 1048576 guard 1048576" "$WORK/out"; then
        ok "dlsym of cuMemAlloc_v2 on another library's handle ($mode): that library's function, untouched; the driver's stays the driver's"
    else bad "dlsym on another library ($mode, rc $rc)" "$WORK/out"; fi
done
