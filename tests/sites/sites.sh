# sites/sites.sh - one call site, one group: a loop built at -O2 and
# unrolled into four call addresses on one source line is one group in
# every format, gets one refusal message, and suppressions and growth
# treat it as one; one site refused on two devices, a library unloaded in
# between (tests/sites/unload_marks.c), is marked on both timelines.
# Sourced by run.sh (its helpers, $B, $T, $WORK, $PRELOAD).
$CC -std=gnu11 -O2 -g -Wall -Wextra -Werror $SAN_FLAGS -I"$CUDA_INC" -o "$T/unrolled" tests/sites/unrolled.c \
    -L"$B/sim" -l:libcuda.so.1 || exit 1
UNR_LINE=$(grep -n UNROLLED_LINE tests/sites/unrolled.c | cut -d: -f1)
unr_calls=$(objdump -d "$T/unrolled" 2>/dev/null | grep -c 'call.*<leak_scratch>')

# without file:line (a TSan build's frames have none) four call addresses
# read as four frames (module+offset): the case needs the line
guarded "$T/unrolled"
if [ "${unr_calls:-0}" -lt 2 ]; then
    skip "one call site, one group" "the compiler did not unroll the loop ($unr_calls calls)"
elif ! grep -q " in main tests/sites/unrolled.c:" "$WORK/err"; then
    skip "one call site, one group" "frames have no file:line in this build"
else
    guarded "$T/unrolled"
    n=$(before_peak "$WORK/err" | grep -c 'allocated from:$')
    if [ "$n" = 1 ] && has "40.0 MiB (41943040 bytes) in 4 allocations (cuMemAlloc, device 0) allocated from:" "$WORK/err" \
       && grep -q " in main tests/sites/unrolled.c:$UNR_LINE " "$WORK/err"; then
        ok "one call site, one group: a loop unrolled at -O2 into $unr_calls call addresses is one text group of 4 allocations"
    else
        bad "one call site, one group: $n groups for $unr_calls call addresses" "$WORK/err"
    fi

    guarded GPUMEM_REPORT_FORMAT=json "$T/unrolled"
    if jq -e '(.live | length) == 1 and .live[0].count == 4 and .live[0].bytes == 41943040' "$WORK/err" >/dev/null 2>&1; then
        ok "one call site, one group: JSON has one live group, count 4"
    else
        bad "one call site, one group: JSON" "$WORK/err"
    fi

    guarded GPUMEM_REPORT_FORMAT=folded "$T/unrolled"
    if [ "$(grep -c 'leak_scratch' "$WORK/err")" = 1 ] && grep -q ' 41943040$' "$WORK/err"; then
        ok "one call site, one group: folded stacks have one line of 41943040 bytes"
    else
        bad "one call site, one group: folded" "$WORK/err"
    fi

    # under a 25 MiB limit the third and fourth calls are refused at two
    # stacks of the one site: one message
    # (and one mark on the timeline, as the message; the driver's own out
    # of memory alike, every call refused by a 16 MiB device)
    guarded GPUMEM_LIMIT=25M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/unr-limit.json" "$T/unrolled"
    marks=$(jq -c '[.timeline.events[] | select(.kind == "refusal")] | length' "$WORK/unr-limit.json" 2>/dev/null)
    guarded GPUSIM_MEM=16M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/unr-oom.json" "$T/unrolled" 20
    oom_msgs=$(grep -c '^gpumemguard: the driver refused ' "$WORK/err")
    oom_marks=$(jq -c '[.timeline.events[] | select(.kind == "driver_oom")] | length' "$WORK/unr-oom.json" 2>/dev/null)
    guarded GPUMEM_LIMIT=25M "$T/unrolled"
    if has "refused 2" "$WORK/out" && [ "$(grep -c '^gpumemguard: refused ' "$WORK/err")" = 1 ] \
       && has "refused: 2;" "$WORK/err" && [ "$marks" = 1 ] && [ "$oom_msgs" = 1 ] && [ "$oom_marks" = 1 ]; then
        ok "one call site, one refusal message: two refusals at two call addresses of one unrolled line (one timeline mark; the driver's out of memory, one message and one mark)"
    else
        bad "one call site, one refusal message ($(grep -c '^gpumemguard: refused ' "$WORK/err") messages, $marks marks; driver: $oom_msgs messages, $oom_marks marks)" "$WORK/err"
    fi

    # the site's second refusal (another call address) made while the report
    # thread writes a dump held for 4 s: the refused call, tired of waiting,
    # writes a first line promising the rest; the thread, finding the site
    # explained, says where its message is (the promise was left unkept)
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "a refusal's promise kept at an explained site" "a write() preloaded beside the guard crashes TSan-built programs; plain and ASan builds run it"
    else
        build libslowwrite.so -shared -fPIC tests/refusals/slowwrite.c
        rm -f "$WORK/held"
        timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowwrite.so" SLOWWRITE_SECONDS=4 SLOWWRITE_MATCH='"trigger":"signal"' \
            SLOWWRITE_MARK="$WORK/held" UNROLLED_WAIT="$WORK/held" GPUMEM_LIMIT=1M GPUMEM_REPORT_FORMAT=json \
            GPUMEM_REPORT="$WORK/unr-dump.json" "$T/unrolled" 10 dump >"$WORK/out" 2>"$WORK/err"
        whole=$(grep -c '^  the refused call:' "$WORK/err"); promised=$(grep -c 'the report thread is busy' "$WORK/err")
        kept=$(grep -c "this call site's stack and the biggest live allocations were in its first message, earlier" "$WORK/err")
        if has "refused 4" "$WORK/out" && [ "$whole" = 1 ] && [ "$promised" -ge 1 ] && [ "$kept" = "$promised" ]; then
            ok "a refusal at an explained site's other call address, its first line written past the wait: a line says its message came earlier ($promised)"
        else bad "a refusal's promise at an explained site: $whole messages, $promised promised, $kept kept" "$WORK/err"; fi
    fi

    printf 'leak:leak_scratch\n' >"$WORK/unr.supp"
    guarded GPUMEM_SUPPRESSIONS="$WORK/unr.supp" GPUMEM_EXITCODE=23 "$T/unrolled"; rc=$?
    if [ $rc = 0 ] && grep -Eq '^ +4 +41943040 leak_scratch$' "$WORK/err"; then
        ok "one call site, one group: a suppression takes the whole site (4 allocations, 41943040 bytes)"
    else
        bad "one call site: suppression (rc $rc)" "$WORK/err"
    fi
fi

# one call site refused on device 0, then on device 1 after the program
# unloaded a library (so the depot made its stack anew, another id): one
# message, and a mark on each device's timeline (the second was lost when
# the message went by site and the mark with it); the driver's own out of
# memory alike
build unload_marks tests/sites/unload_marks.c -L"$B/sim" -l:libcuda.so.1
printf 'int unload_me(void) { return 1; }\n' | $CC -shared -fPIC -x c -o "$T/libunloadme.so" - || exit 1
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/um-limit.json" "$T/unload_marks" "$ROOT/$T/libunloadme.so"
um_msgs=$(grep -c '^gpumemguard: refused ' "$WORK/err")
um_marks=$(jq -c '[.timeline.events[] | select(.kind == "refusal") | .device]' "$WORK/um-limit.json" 2>/dev/null)
guarded GPUSIM_DEVICES=2 GPUSIM_MEM=4M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/um-oom.json" "$T/unload_marks" "$ROOT/$T/libunloadme.so"
um_oom_msgs=$(grep -c '^gpumemguard: the driver refused ' "$WORK/err")
um_oom_marks=$(jq -c '[.timeline.events[] | select(.kind == "driver_oom") | .device]' "$WORK/um-oom.json" 2>/dev/null)
if has "device 1, 8 MiB: 2" "$WORK/out" && [ "$um_msgs" = 1 ] && [ "$um_marks" = "[0,1]" ] && [ "$um_oom_msgs" = 1 ] \
   && [ "$um_oom_marks" = "[0,1]" ]; then
    ok "one call site refused on two devices with a library unloaded in between: one message, a mark on each device (the driver's out of memory alike)"
else
    bad "one site on two devices across an unload: $um_msgs messages, marks $um_marks; driver: $um_oom_msgs messages, marks $um_oom_marks" "$WORK/err"
fi

# a child forked after its parent's refusal, refused at the same call
# site on the same device: its own timeline (empty at the fork) marks it
guarded GPUMEM_LIMIT=1M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/umf.json" "$T/unload_marks" fork
umf_child=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$WORK/out")
umf_parent=$(jq -c '[.timeline.events[] | select(.kind == "refusal") | .device]' "$WORK/umf.json" 2>/dev/null)
umf_marks=$(jq -c '[.timeline.events[] | select(.kind == "refusal") | .device]' "$WORK/umf.$umf_child.json" 2>/dev/null)
if has "child: 2" "$WORK/out" && [ "$umf_parent" = "[0]" ] && [ "$umf_marks" = "[0]" ]; then
    ok "a forked child refused at its parent's call site: its own timeline marks it (the parent's too)"
else bad "a forked child's mark of its parent's call site: parent $umf_parent, child $umf_marks" "$WORK/err"; fi

# marks in the order they were made: with the report thread held after the
# site's first message (device 0), the site refused on device 1 (a mark
# forwarded), then again there from a stack made anew after an unload
# (queued to be explained, reached first by the held thread): device 1's
# mark is the first refusal there, its 9 MiB (it was the 10 MiB)
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "marks in the order made, with the report thread held" "a write() preloaded beside the guard crashes TSan-built programs, as close() does; plain and ASan builds run it"
else
    build libslowwrite.so -shared -fPIC tests/refusals/slowwrite.c
    timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowwrite.so" SLOWWRITE_SECONDS=8 GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M \
        GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/umo.json" "$T/unload_marks" order "$ROOT/$T/libunloadme.so" \
        >"$WORK/out" 2>"$WORK/err"
    umo=$(jq -c '[.timeline.events[] | select(.kind == "refusal") | [.device, .bytes]]' "$WORK/umo.json" 2>/dev/null)
    if has "device 1, 10 MiB: 2" "$WORK/out" && [ "$umo" = "[[0,8388608],[1,9437184]]" ]; then
        ok "marks in the order made: a site's first refusal on a device is its mark there, though a later one was reached first"
    else bad "a site's mark on device 1, with the report thread held: $umo" "$WORK/err"; fi
fi
