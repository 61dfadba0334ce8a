# driver_oom.sh - the driver's own out of memory (no GPUMEM_LIMIT), what was
# live at the peak, and the timeline, against the simulated driver's
# capacity (GPUSIM_MEM, GPUSIM_HOST_MEM). Sourced by run.sh (its helpers,
# $B, $T, $WORK, $PRELOAD).

build driverooms tests/oom/driverooms.c -L"$B/sim" -l:libcuda.so.1
build test_peak tests/unit/test_peak.c src/core/peak.c src/base/bias.c src/base/lock.c -DGMG_PEAK_TEST_HOOKS -Isrc
build test_timeline tests/unit/test_timeline.c src/report/timeline.c src/base/buf.c -DGMG_TIMELINE_TEST_HOOKS -Isrc

# The peak's make-up with moves overtaken between their word and their
# slot (forced, not left to chance), past 65536 peaks, and a restart.
if "$T/test_peak" >"$WORK/out" 2>&1 && "$T/test_peak" bias >>"$WORK/out" 2>&1; then
    ok "what was live at the peak, with a move overtaken by the next peak's, and a reading that waits for a peak's move held half done, up to its bound, the words moved with and without their owner's bias (tests/unit/test_peak.c)"
else bad "what was live at the peak (tests/unit/test_peak.c)" "$WORK/out"; fi
if "$T/test_timeline" >"$WORK/out" 2>&1; then
    ok "the timeline's bound: halved when full, each interval's most kept, the peak and marks (tests/unit/test_timeline.c)"
else bad "the timeline's bound (tests/unit/test_timeline.c)" "$WORK/out"; fi

# Every route asks for more than the 64 MiB device has, twice from one call
# site: each site explained once, at once (before the call returns), the
# program's answers those of the driver alone, the counts everywhere.
env GPUSIM_MEM=64M GPUSIM_HOST_MEM=1G "$T/driverooms" routes >"$WORK/oom_alone" 2>/dev/null
guarded GPUSIM_MEM=64M GPUSIM_HOST_MEM=1G GPUMEM_METRICS="$WORK/oom.prom" "$T/driverooms" routes
oom_miss=""
for oom_api in cuMemAlloc cuMemAllocPitch cuMemAllocManaged cuMemAllocAsync cuMemCreate cuArrayCreate; do
    grep -q "^gpumemguard: the driver refused $oom_api of .* out of memory; this process holds .*, the device has .* free" \
        "$WORK/err" || oom_miss="$oom_miss $oom_api"
done
# a pitch names its rows at the usual pitch (1 MiB + 1 byte wide: 1 MiB + 512), what the driver needed
grep -q "^gpumemguard: the driver refused cuMemAllocPitch of 100.0 GiB (107426611200 bytes) on device 0" "$WORK/err" \
    || oom_miss="$oom_miss cuMemAllocPitch-at-its-pitch"
grep -q "^gpumemguard: the driver refused cuMemHostAlloc of .* in host memory: out of memory; this process holds .* of pinned host memory" \
    "$WORK/err" || oom_miss="$oom_miss cuMemHostAlloc"
# linear, pitch, managed, async, pool, vmm, array, host, and linear from a second site
oom_n=$(grep -c "^gpumemguard: the driver refused " "$WORK/err")
oom_first=$(grep -n -m1 "^gpumemguard: the driver refused cuMemAlloc of 100.0 GiB (107374182400 bytes) on device 0" "$WORK/err" | cut -d: -f1)
oom_ret=$(grep -n -m1 "^ROUTE linear returned" "$WORK/err" | cut -d: -f1)
if [ -z "$oom_miss" ] && [ "$oom_n" = 9 ] && cmp -s "$WORK/oom_alone" "$WORK/out" && ! grep -q "rc 0" "$WORK/out" \
   && [ -n "$oom_first" ] && [ -n "$oom_ret" ] && [ "$oom_first" -lt "$oom_ret" ] \
   && has "==$(grep -m1 -o '^==[0-9]*==' "$WORK/err" | tr -d =)== device 0: the driver refused 15 allocations: out of memory" "$WORK/err" \
   && has "==$(grep -m1 -o '^==[0-9]*==' "$WORK/err" | tr -d =)== pinned host memory: the driver refused 2 allocations: out of memory" "$WORK/err" \
   && grep -q '^gpumem_driver_oom_total{.*device="0".*} 15$' "$WORK/oom.prom" \
   && grep -q '^gpumem_host_driver_oom_total{.*} 2$' "$WORK/oom.prom" \
   && ! grep -Eiq "died|killed|crash|abort|terminat" "$WORK/err"; then
    ok "the driver's out of memory on every route (linear, pitch, managed, async, pool, cuMemCreate, arrays, pinned host): once per call site, before the call returns, answers unchanged, counted in the header and metrics: 15 on device 0, 2 of pinned host memory apart"
else
    bad "the driver's out of memory: missing [$oom_miss], $oom_n messages, first at line $oom_first, linear returned at line $oom_ret; answers: $(tr '\n' ' ' <"$WORK/out")" "$WORK/err"
fi
# the message: the refused call, its stack, the biggest live stacks, in that order
if awk '/^gpumemguard: the driver refused cuMemAlloc of 100.0 GiB/ && !a {a = NR} /^  the refused call:/ && a && !b {b = NR}
        / in oom_linear / && b && !c {c = NR} /^gpumemguard: the biggest live allocations on device 0:/ && c && !d {d = NR}
        END {exit !(a && a < b && b < c && c < d)}' "$WORK/err"; then
    ok "the driver's out of memory: the refused call first, then its own stack, then the biggest live stacks"
else
    bad "the driver's out of memory: message out of order" "$WORK/err"
fi
# with stacks off every call is one site, but each kind of memory is still
# explained: one message per family (the pool's is async's), not one in all
guarded GPUMEM_STACK_DEPTH=0 GPUSIM_MEM=64M GPUSIM_HOST_MEM=1G "$T/driverooms" routes
got=$(grep "^gpumemguard: the driver refused " "$WORK/err" | sed 's/^gpumemguard: the driver refused \([A-Za-z]*\) .*/\1/' | sort | tr '\n' ' ')
if [ "$got" = "cuArrayCreate cuMemAlloc cuMemAllocAsync cuMemAllocManaged cuMemAllocPitch cuMemCreate cuMemHostAlloc " ]; then
    ok "the driver's out of memory with stacks off (GPUMEM_STACK_DEPTH=0): explained once per kind of memory, seven messages"
else bad "the driver's out of memory with stacks off: $got" "$WORK/err"; fi

# one call site refused on device 0, then on device 1: one message, a mark
# on each device's timeline (the quota's refusal and the driver's alike)
for kind in refusal driver_oom; do
    if [ $kind = refusal ]; then lim=1M; else lim=0; fi
    guarded GPUSIM_DEVICES=2 GPUSIM_MEM=64M GPUMEM_LIMIT=$lim GPUMEM_REPORT="$WORK/two.json" GPUMEM_REPORT_FORMAT=json "$T/driverooms" twodev
    if has "twodev: 2 2 2" "$WORK/out" && [ "$(grep -c "refused cuMemAlloc of 100.0 MiB" "$WORK/err")" = 1 ] \
       && jq -e --arg k $kind '[.timeline.events[] | select(.kind == $k) | .device] == [0, 1]
              and ([.devices[] | (if $k == "refusal" then .refused else .driver_oom end)] == [1, 2])' "$WORK/two.json" >/dev/null; then
        ok "a call site's $kind on device 0, then twice on device 1: one message, one mark on each device's timeline"
    else bad "$kind on two devices: $(jq -c '[.timeline.events[]?], [.devices[]? | [.refused, .driver_oom]]' "$WORK/two.json" 2>&1 | head -c 400)" "$WORK/err"; fi
done

# JSON: devices[].driver_oom
guarded GPUSIM_MEM=64M GPUSIM_HOST_MEM=1G GPUMEM_REPORT="$WORK/oom.json" GPUMEM_REPORT_FORMAT=json "$T/driverooms" routes
if jq -e '.devices[0].driver_oom == 15 and .devices[0].refused == 0 and .totals.host_driver_oom == 2
          and ([.timeline.events[] | select(.kind == "driver_oom")] | length) == 8' "$WORK/oom.json" >/dev/null 2>&1; then
    ok "the driver's out of memory in JSON: devices[0].driver_oom 15, totals.host_driver_oom 2 (pinned host memory, no device's), eight marks on device 0's timeline (one per device call site explained)"
else
    bad "the driver's out of memory in JSON: $(jq -c '{d: .devices, e: [.timeline.events[]?.kind]}' "$WORK/oom.json" 2>&1 | head -c 400)"
fi

# What was live at the peak: 3 x 1 MiB (peak_a) and 2 x 2 MiB (peak_b) at
# once; then peak_b freed, 1 MiB (peak_c) made, and an out of memory.
guarded GPUSIM_MEM=64M GPUMEM_REPORT="$WORK/peak.json" GPUMEM_REPORT_FORMAT=json "$T/driverooms" peak
if jq -e '.at_peak | length == 1 and .[0].device == 0 and .[0].bytes == 7340032
          and ([.[0].groups[] | [.frames[0].function, .bytes, .count, .api, .device]]
               == [["peak_b", 4194304, 2, "cuMemAlloc", 0], ["peak_a", 3145728, 3, "cuMemAlloc", 0]])' \
       "$WORK/peak.json" >/dev/null 2>&1 \
   && jq -e '(.live | map(.stack_id) | sort) as $l | .at_peak[0].groups[0] | has("frames") and has("stack_id")' "$WORK/peak.json" >/dev/null 2>&1 \
   && jq -e '.devices[0].peak == 7340032 and .at_peak_since_dump == null
             and ([.timeline.events[] | select(.kind == "peak" and .bytes == 7340032 and .device == 0)] | length) == 1' \
       "$WORK/peak.json" >/dev/null 2>&1; then
    ok "at_peak in JSON: device 0's 7 MiB peak is peak_b's 2 x 2 MiB and peak_a's 3 x 1 MiB, biggest first, groups shaped as live[]; the peak marked on the timeline"
else
    bad "at_peak in JSON: $(jq -c '[.at_peak[] | {bytes, g: [.groups[] | [.frames[0].function, .bytes, .count]]}]' "$WORK/peak.json" 2>&1 | head -c 400)"
fi
guarded GPUSIM_MEM=64M "$T/driverooms" peak
if awk '/^Live at the peak of device 0 \(7340032 bytes\)/ {s = 1; next} s && /^4.0 MiB \(4194304 bytes\) in 2 allocations \(cuMemAlloc, device 0\)/ {b = 1}
        s && /^3.0 MiB \(3145728 bytes\) in 3 allocations \(cuMemAlloc, device 0\)/ && b {a = 1} END {exit !(s && a && b)}' "$WORK/err" \
   && awk '/^gpumemguard: the driver refused cuMemAlloc/ {a = NR} /^gpumemguard: the biggest live/ && a {b = NR}
           /^gpumemguard: live at the peak of device 0 \(7340032 bytes\), biggest first:/ && b {c = NR} / in peak_b / && c && !d {d = NR}
           END {exit !(a < b && b < c && c < d)}' "$WORK/err"; then
    ok "at the peak in text: the section lists peak_b then peak_a, and the out-of-memory message ends with what was live at the peak"
else
    bad "at the peak in text" "$WORK/err"
fi

# A dump shows the peak since the previous dump, and every report the run's.
rm -f "$WORK"/win.*.json
guarded GPUSIM_MEM=64M GPUMEM_REPORT="$WORK/win.%n.json" GPUMEM_REPORT_FORMAT=json "$T/driverooms" window
win_sum() { jq -c "[$1[]? | [.bytes, [.groups[] | [.frames[0].function, .bytes]]]]" "$2" 2>&1; }
if [ "$(win_sum .at_peak "$WORK/win.1.json")" = '[[5242880,[["win_big",5242880]]]]' ] \
   && [ "$(win_sum .at_peak_since_dump "$WORK/win.1.json")" = '[[5242880,[["win_big",5242880]]]]' ] \
   && [ "$(win_sum .at_peak "$WORK/win.2.json")" = '[[5242880,[["win_big",5242880]]]]' ] \
   && [ "$(win_sum .at_peak_since_dump "$WORK/win.2.json")" = '[[2097152,[["win_mid",2097152]]]]' ] \
   && [ "$(win_sum .at_peak "$WORK/win.3.json")" = '[[5242880,[["win_big",5242880]]]]' ] \
   && jq -e '.at_peak_since_dump == null and ([.timeline.events[] | select(.kind == "dump")] | length) == 2' "$WORK/win.3.json" >/dev/null 2>&1; then
    ok "a dump shows the peak since the previous dump (5 MiB of win_big, then 2 MiB of win_mid), every report the run's (win_big); dumps marked on the timeline"
else
    bad "peaks across dumps: $(for f in 1 2 3; do echo "$f: $(win_sum .at_peak "$WORK/win.$f.json") since $(win_sum .at_peak_since_dump "$WORK/win.$f.json")"; done)"
fi

# Two equal peaks, the second after a dump: the run's peak is the first, in
# the out-of-memory message as in every report.
rm -f "$WORK"/tie.*.json
guarded GPUSIM_MEM=64M GPUMEM_REPORT="$WORK/tie.%n.json" GPUMEM_REPORT_FORMAT=json "$T/driverooms" tie
if has "tie: oom rc 2" "$WORK/out" \
   && [ "$(win_sum .at_peak "$WORK/tie.1.json")" = '[[5242880,[["win_big",5242880]]]]' ] \
   && [ "$(win_sum .at_peak "$WORK/tie.2.json")" = '[[5242880,[["win_big",5242880]]]]' ] \
   && awk '/^gpumemguard: live at the peak of device 0 \(5242880 bytes\)/ {s = 1; next} s && / in win_big / {b = 1} s && / in win_tie / {t = 1}
           END {exit !(s && b && !t)}' "$WORK/err"; then
    ok "two equal peaks, the second after a dump: the message and both reports name the first (win_big)"
else
    bad "two equal peaks: reports $(win_sum .at_peak "$WORK/tie.1.json") $(win_sum .at_peak "$WORK/tie.2.json")" "$WORK/err"
fi

# A storm with a known true peak: 8 threads in pairs, each pair on a site
# and a size of its own, K blocks each, freed and made again at random, all
# at once; never more than K held, so the peak is every block at once.
# Then all 8 on one site, whose totals are split by CPU from its first move
# (GMG_STRIPE_AFTER=0; by default once threads have waited on them): a free
# lands on another CPU's part than its allocation did (GMG_CPU_SLOTS=64:
# each use takes another of 64 parts, whatever the CPUs here). The first
# thread's 64 blocks stay live at exit.
storm_check() { # depth want sizes [live]: the peak and its make-up exact, and what is live at exit ([count, bytes] per group)
    jq -e --argjson want "${2:-0}" --argjson depth "$1" --argjson sizes "$3" --argjson live "${4:-[]}" '.at_peak[0] as $p
           | $p.bytes == $want and ([$p.groups[].bytes] | add) == $want and [.live[] | [.count, .bytes]] == $live
           and all($p.groups[]; if $depth > 0 then .bytes % .count == 0 else true end)
           and (if $depth > 0 then ([$p.groups[] | {s: (.bytes / .count), c: .count}] | group_by(.s)
                | map({s: .[0].s, c: (map(.c) | add)})) == $sizes
                else ($p.groups | length) == 1 and $p.groups[0].count == 512 end)' "$WORK/storm.json" >/dev/null 2>&1
}
oom_pairs='[{"s": 4096, "c": 128}, {"s": 8192, "c": 128}, {"s": 12288, "c": 128}, {"s": 16384, "c": 128}]'
for oom_case in 32 0 split; do
    oom_ok=1
    for oom_i in 1 2 3; do
        if [ $oom_case = split ]; then
            rm -f "$WORK/storm.prom"
            guarded GPUSIM_THREAD_RANGES=1 GPUSIM_MEM=1G GPUMEM_STACK_DEPTH=32 GPUMEM_REPORT="$WORK/storm.json" \
                GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/storm.prom" STORM_ONE_SITE=1 GMG_STRIPE_AFTER=0 \
                GMG_STACK_STATS=1 GMG_CPU_SLOTS=64 "$T/driverooms" storm
            # the live totals' sum (metrics read them; the JSON's live[] comes from the table)
            grep -q "stacks: .*; [1-9][0-9]* call sites' totals split by CPU" "$WORK/err" \
                && grep -q '^gpumem_site_bytes{device="0",.*rank="1",site="storm_alloc [^"]*"} 262144$' "$WORK/storm.prom" \
                && storm_check 32 "$(sed -n 's/^storm peak //p' "$WORK/out")" '[{"s": 4096, "c": 512}]' '[[64, 262144]]' || { oom_ok=0; break; }
        else
            guarded GPUSIM_THREAD_RANGES=1 GPUSIM_MEM=1G GPUMEM_STACK_DEPTH=$oom_case GPUMEM_REPORT="$WORK/storm.json" \
                GPUMEM_REPORT_FORMAT=json "$T/driverooms" storm
            storm_check $oom_case "$(sed -n 's/^storm peak //p' "$WORK/out")" "$oom_pairs" || { oom_ok=0; break; }
        fi
    done
    oom_what="stacks $([ $oom_case = 0 ] && echo off || echo on)"
    [ $oom_case = split ] && oom_what="all on one call site, its totals split by CPU"
    if [ $oom_ok = 1 ]; then
        ok "at the peak under a storm of 8 threads ($oom_what): exactly the known peak and its make-up, and what is live at exit, three runs"
    else
        bad "at the peak under a storm ($oom_what): want $(sed -n 's/^storm peak //p' "$WORK/out"), got $(jq -c '[.at_peak[0] | [.bytes, [.groups[] | [.bytes, .count]]], (.live | length)]' "$WORK/storm.json" 2>&1 | head -c 300) $(grep -m1 'stacks:' "$WORK/err")"
    fi
done

# The same storm with one thread alone for half its rounds first: the
# table's shards and the device's word are its own (base/bias.h) until the
# other 7 come, and they take them from it while it is at work.
for oom_case in 0 32; do
    oom_ok=1
    for oom_i in 1 2 3; do
        guarded GPUSIM_THREAD_RANGES=1 GPUSIM_MEM=1G GPUMEM_STACK_DEPTH=$oom_case GPUMEM_REPORT="$WORK/storm.json" \
            GPUMEM_REPORT_FORMAT=json STORM_LATE=1 "$T/driverooms" storm
        storm_check $oom_case "$(sed -n 's/^storm peak //p' "$WORK/out")" "$oom_pairs" || { oom_ok=0; break; }
    done
    if [ $oom_ok = 1 ]; then
        ok "at the peak under a storm whose 7 other threads come while the first is at work, alone until then (stacks $([ $oom_case = 0 ] && echo off || echo on)): exactly the known peak and its make-up, three runs"
    else
        bad "at the peak, a storm joining one thread at work (stacks $oom_case): want $(sed -n 's/^storm peak //p' "$WORK/out"), got $(jq -c '[.at_peak[0] | [.bytes, [.groups[] | [.bytes, .count]]], (.live | length)]' "$WORK/storm.json" 2>&1 | head -c 300)" "$WORK/err"
    fi
done

# The split totals read while they move: 2 threads each holding 64 blocks
# at one call site make one more and free it, again and again, and every
# move lands on another of 64 parts (GMG_CPU_SLOTS=64: each use takes the
# next slot, as threads moving between CPUs would); meanwhile 30 driver
# OOMs, each message naming that site's live blocks, read at one moment:
# 128 to 130, never a count it did not have.
guarded GPUSIM_THREAD_RANGES=1 GPUSIM_MEM=1G GPUMEM_STACK_DEPTH=32 GMG_CPU_SLOTS=64 GMG_STRIPE_AFTER=0 \
    STORM_ONE_SITE=1 STORM_THREADS=2 STORM_OOMS=30 "$T/driverooms" storm
oom_counts=$(grep -A1 "^gpumemguard: the biggest live allocations on device 0:" "$WORK/err" \
             | sed -n 's/^[0-9.]* KiB ([0-9]* bytes) in \([0-9]*\) allocations (cuMemAlloc, device 0).*/\1/p')
if [ "$(grep -c "^gpumemguard: the driver refused cuMemAlloc" "$WORK/err")" = 30 ] && [ "$(printf '%s\n' $oom_counts | wc -l)" = 30 ] \
   && printf '%s\n' $oom_counts | awk '$1 < 128 || $1 > 130 {bad = 1} END {exit bad}'; then
    ok "a call site's totals split by CPU, read by 30 out-of-memory messages while 2 threads move them: each count one the site had (128-130)"
else
    bad "a call site's totals read while they move: counts $(printf '%s ' $oom_counts | head -c 300)" "$WORK/err"
fi

# The default: a call site's totals split once threads have waited on them
# (GMG_STRIPE_AFTER=1 here: at the first wait), 8 threads on one site; a
# wait is likely, not certain, on a machine of few cores, and less so on a
# loaded one (the threads then seldom run at once): ten tries, 0.1 s each.
# On one CPU threads wait only when one is preempted inside a few
# instructions: not asked there.
oom_ok=0
[ "$(nproc)" -lt 2 ] && oom_ok=skip
for oom_i in 1 2 3 4 5 6 7 8 9 10; do
    [ $oom_ok = skip ] && break
    guarded GPUSIM_THREAD_RANGES=1 GPUSIM_MEM=1G GPUMEM_STACK_DEPTH=32 GPUMEM_REPORT="$WORK/storm.json" \
        GPUMEM_REPORT_FORMAT=json STORM_ONE_SITE=1 GMG_STRIPE_AFTER=1 GMG_STACK_STATS=1 "$T/driverooms" storm
    if grep -q "stacks: .*; [1-9][0-9]* call sites' totals split by CPU" "$WORK/err" \
       && storm_check 32 "$(sed -n 's/^storm peak //p' "$WORK/out")" '[{"s": 4096, "c": 512}]' '[[64, 262144]]'; then oom_ok=1; break; fi
done
if [ $oom_ok = skip ]; then
    skip "a call site's totals split by CPU once its threads wait on them" "one CPU here"
elif [ $oom_ok = 1 ]; then
    ok "a call site's totals split by CPU once its threads wait on them, exact after it"
else
    bad "a call site's totals split by CPU once its threads wait on them: $(grep -m1 'stacks:' "$WORK/err")"
fi

# The timeline: samples of in-use bytes since start, at most the bound.
if jq -e --argjson now "$(date +%s%3N)" '.timeline as $t | ($t.start_unix_ms | . > $now - 600000 and . <= $now)
          and $t.interval_ms >= 10 and $t.group == null and ($t.devices[0].samples | length) >= 1
          and ($t.devices[0].samples | length) <= 2048 and all($t.devices[0].samples[]; length == 2)
          and ([$t.devices[0].samples[][1]] | max) <= 7340032' "$WORK/peak.json" >/dev/null 2>&1; then
    ok "the timeline in JSON: its start, interval and samples, none above the peak"
else
    bad "the timeline in JSON: $(jq -c '.timeline | {start_unix_ms, interval_ms, n: (.devices[0].samples | length)}' "$WORK/peak.json" 2>&1 | head -c 300)"
fi

# A Python client (cuda-bindings): its out of memory names its Python call site.
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "the driver's out of memory from Python" "not under $GMG_SANITIZER"
elif [ ! -x "$B/venv/bin/python" ] || ! "$B/venv/bin/python" -c "import cuda.bindings" 2>/dev/null; then
    skip "the driver's out of memory from Python" "cuda-bindings not installed in $B/venv"
else
    oom_py=tests/python/bindings_oom.py
    oom_line() { grep -n "# SITE:$1\$" "$oom_py" | cut -d: -f1; }
    guarded GPUSIM_MEM=64M GPUMEM_REPORT="$WORK/py_oom.json" GPUMEM_REPORT_FORMAT=json "$B/venv/bin/python" "$oom_py"
    if has "bindings_oom ok" "$WORK/out" \
       && awk -v tb="$(oom_line too_big)" '/^gpumemguard: the driver refused cuMemAlloc of 100.0 GiB/ {a = 1}
              a && /^  the refused call:/ {b = 1} b && index($0, "line " tb ", in too_big") {c = 1} END {exit !c}' "$WORK/err" \
       && jq -e --arg act "$(oom_line activations)" '.devices[0].driver_oom == 1 and .at_peak[0].bytes == 10485760
              and .at_peak[0].groups[0].bytes == 6291456 and .at_peak[0].groups[0].count == 3
              and any(.at_peak[0].groups[0].frames[]; .lang == "python" and .function == "activations" and .line == ($act | tonumber))' \
              "$WORK/py_oom.json" >/dev/null 2>&1; then
        ok "the driver's out of memory from Python (cuda-bindings): the message names too_big's line; at the peak, activations' three buffers by their Python line"
    else
        bad "the driver's out of memory from Python" "$WORK/err"
    fi
fi

# A dump to stderr whose reader is slow, and the driver's out of memory
# while it is written: the refused call's own first line does not land
# inside the dump (JSON: every report on stderr parses), the whole message
# follows it.
env LD_PRELOAD="$PRELOAD" GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json "$T/driverooms" slowdump \
    >"$WORK/out" 2> >(sleep 4; cat >"$WORK/slow.err")
for _ in $(seq 100); do [ -s "$WORK/slow.err" ] && ! pgrep -f "sleep 4$" >/dev/null && break; sleep 0.1; done
sleep 0.5
if has "slowdump: oom rc 2" "$WORK/out" && python3 - "$WORK/slow.err" <<'PY'
import json, sys
s = open(sys.argv[1], encoding="utf-8", errors="replace").read()
dec, i, docs = json.JSONDecoder(), 0, 0
while True:
    i = s.find('{"schema"', i)
    if i < 0:
        break
    last, end = dec.raw_decode(s[i:])   # raises on a report cut by another write
    i += end
    docs += 1
assert docs == 2, docs               # the dump and the exit report
assert "the driver refused cuMemAlloc of 100.0 GiB" in s
# marked when it happened (well before the dump's slow reader let its message out, 4 s on)
marks = [e["t_ms"] for e in last["timeline"]["events"] if e["kind"] == "driver_oom"]
assert len(marks) == 1 and marks[0] < 3000, marks
PY
then
    ok "the driver's out of memory while a dump is written to a slow stderr: nothing lands inside the dump (both JSON reports parse), the message follows; its timeline mark has the moment it happened"
else bad "the driver's out of memory during a slow dump to stderr" "$WORK/slow.err"; fi

# Pinned host memory's out of memory is explained by pinned host memory:
# what this process pins (900 MiB) and its biggest groups, not the device's
guarded GPUSIM_MEM=64M GPUSIM_HOST_MEM=150M GPUMEM_REPORT=none "$T/driverooms" hostoom
if has "hostoom: 2" "$WORK/out" \
   && has "gpumemguard: the driver refused cuMemHostAlloc of 200.0 MiB (209715200 bytes) in host memory: out of memory; this process holds 900.0 MiB (943718400 bytes) of pinned host memory" "$WORK/err" \
   && has "the biggest live allocations of pinned host memory:" "$WORK/err" \
   && grep -A3 "the biggest live allocations of pinned host memory" "$WORK/err" | grep -q " in pin_big " \
   && ! grep -A12 "the driver refused cuMemHostAlloc" "$WORK/err" | grep -q " in dev_small "; then
    ok "the driver's out of memory for pinned host memory: what this process pins (900 MiB) and its biggest groups, not the device's"
else bad "pinned host memory's out of memory explained by the device" "$WORK/err"; fi
