# edges.sh - settings and queries at their edges (tests/settings/edges.c),
# each a case a one-character change in the guard would break. Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build edges tests/settings/edges.c -L"$B/sim" -l:libcuda.so.1

guarded GPUMEM_EXITCODE=256 "$T/edges" alloc 512; rc=$?
[ $rc = 2 ] && has "GPUMEM_EXITCODE='256' is not valid" "$WORK/err" \
    && ok "GPUMEM_EXITCODE=256 is refused at start-up (a status is 0-255)" || bad "GPUMEM_EXITCODE=256 (rc $rc)" "$WORK/err"
guarded GPUMEM_EXITCODE=255 "$T/edges" alloc 512; rc=$?
[ $rc = 255 ] && ok "GPUMEM_EXITCODE=255 is taken: a run that leaks 512 bytes exits 255" || bad "GPUMEM_EXITCODE=255 (rc $rc)" "$WORK/err"

# a percentage of less than one byte is a limit of one byte, never "no limit"
guarded GPUMEM_LIMIT=0.00000000001% "$T/edges" alloc 512
has "alloc 512: rc 2 limit 1" "$WORK/out" \
    && ok "GPUMEM_LIMIT=0.00000000001% (under one byte of an 8 GiB device) holds the device to 1 byte: 512 bytes refused" \
    || bad "a percentage under one byte" "$WORK/out"

# a limit above the device's memory: the device's own size is answered
guarded GPUMEM_LIMIT=100G "$T/edges" totalmem
has "totalmem: 8589934592 meminfo total 8589934592 sim 8589934592" "$WORK/out" \
    && ok "GPUMEM_LIMIT above the device's memory: cuDeviceTotalMem and cuMemGetInfo say the device's 8 GiB" \
    || bad "cuDeviceTotalMem under a limit above the device" "$WORK/out"
guarded GPUMEM_LIMIT=1G "$T/edges" totalmem
has "totalmem: 1073741824 meminfo total 1073741824 sim 8589934592" "$WORK/out" \
    && ok "GPUMEM_LIMIT below the device's memory: cuDeviceTotalMem and cuMemGetInfo say the limit" \
    || bad "cuDeviceTotalMem under a limit below the device" "$WORK/out"

# GPUMEM_COUNT_MANAGED=0: managed memory is not what the refusal blames
guarded GPUMEM_LIMIT=4M GPUMEM_COUNT_MANAGED=0 "$T/edges" managed
sed '/gpumemguard report (exit/,$d' "$WORK/err" >"$WORK/refusal"
if has "managed: 3 MiB linear rc 0, 2 MiB more rc 2, guard 3145728" "$WORK/out" \
   && grep -q "(cuMemAlloc, device 0) allocated from:" "$WORK/refusal" && ! grep -q "cuMemAllocManaged" "$WORK/refusal" \
   && grep -q "(cuMemAllocManaged, device 0) allocated from:" "$WORK/err"; then
    ok "GPUMEM_COUNT_MANAGED=0: 3 MiB managed leaves a 4 MiB limit to linear memory; the refusal's list names what counts (not the managed memory), the exit report lists both"
else bad "GPUMEM_COUNT_MANAGED=0 in the refusal message" "$WORK/err"; fi

# a context destroyed with managed, pitched, stream-ordered and array memory
# in it: all of it stops counting, and the limit is exact to the byte after
guarded GPUMEM_LIMIT=8M "$T/edges" teardown
if has "teardown: before guard 5242880 sim 5242880" "$WORK/out" && has "teardown: after guard 0 sim 0" "$WORK/out" \
   && has "teardown: 8 MiB rc 0, 1 byte more rc 2, guard 8388608" "$WORK/out" \
   && has "teardown: freed, guard 0; 8 MiB + 1 rc 2" "$WORK/out"; then
    ok "cuCtxDestroy with managed, pitched, stream-ordered and array memory: all reclaimed (guard and driver agree), then 8 MiB of an 8 MiB limit and not one byte more"
else bad "teardown of every family under a limit" "$WORK/out"; fi

# a layered mipmapped array: layers do not shrink with the levels
guarded "$T/edges" mipmap
has "mipmap: guard 5376 sim 5376" "$WORK/out" \
    && ok "a layered mipmapped array (4x4, 64 layers, 3 levels): 5376 bytes, as the driver counts" \
    || bad "a layered mipmapped array with more layers than width and height" "$WORK/out"

# a per-device limit naming a device the process does not see limits
# nothing: said once, naming the device and how many there are
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:1G,5:1G "$T/alloc" 1 4096; rc=$?
n=$(grep -c "GPUMEM_LIMIT names device 5, but this process sees 2 devices (0-1): no limit applies to it" "$WORK/err")
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:1G,1:1G "$T/alloc" 1 4096; rc2=$?
if [ $rc = 0 ] && [ "$n" = 1 ] && [ $rc2 = 0 ] && ! has "GPUMEM_LIMIT names device" "$WORK/err"; then
    ok "GPUMEM_LIMIT=0:1G,5:1G on 2 devices: said once that device 5 is not seen (no limit there); 0:1G,1:1G: nothing said"
else bad "a limit for a device not seen (rc $rc $rc2, said $n times)" "$WORK/err"; fi
