# manylibs.sh - frames in 24 libraries, a leak from each: every frame named
# with its library, the symbolizer keeping a file of each open at once
# (tests/symbols/manylibs.c, manylib.c). Sourced by tests/run.sh (its
# helpers, $ROOT, $T, $WORK).
build manylibs tests/symbols/manylibs.c -L"$B/sim" -l:libcuda.so.1
for i in $(seq 0 23); do
    $CC -std=gnu11 -O1 -g $SAN_FLAGS -fPIC -shared -I"$CUDA_INC" -DSIZE="$(( (i + 1) * 4096 ))" \
        -o "$T/libgmgmany$i.so" tests/symbols/manylib.c -L"$B/sim" -l:libcuda.so.1 || exit 1
done

guarded "$T/manylibs" "$ROOT/$T" 24
named=0
for i in $(seq 0 23); do
    grep -A1 -F "($(( (i + 1) * 4096 )) bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" "$WORK/err" \
        | grep -q " in many_leak .*(libgmgmany$i.so+0x[0-9a-f]*)$" && named=$((named + 1))
done
if has "manylibs: 24 leaks" "$WORK/out" && [ "$named" = 24 ]; then
    ok "leaks from 24 libraries: each frame named in its own library (the symbolizer holds a file of each)"
else bad "leaks from 24 libraries: $named of 24 named" "$WORK/err"; fi
