# lists.sh - what a refusal message lists: the refused device's biggest
# live allocations that hold its quota, as they were at the refusal; not
# memory that does not count against it (tests/refusals/lists.c). Sourced
# by tests/run.sh (its helpers, $T, $WORK).
build refusal_lists tests/refusals/lists.c -L"$B/sim" -l:libcuda.so.1

# a refusal on device 1 lists device 1's biggest live allocations, not
# device 0's (which holds more)
tguarded 60 GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M "$T/refusal_lists" refuse_dev1
msg=$(sed -n '/^gpumemguard: the biggest live allocations on device 1:$/,/^$/p' "$WORK/err")
if has "refuse_dev1: 2; guard 524288 262144" "$WORK/out" && has "refused cuMemAlloc of 2.0 MiB (2097152 bytes) on device 1" "$WORK/err" \
   && grep -q "^256.0 KiB (262144 bytes) in 1 allocation (cuMemAlloc, device 1) allocated from:$" <<<"$msg" && grep -q " in dev1_site " <<<"$msg" \
   && ! grep -q "device 0)\| in dev0_site " <<<"$msg"; then
    ok "a refusal on device 1 shows device 1's live allocations only"
else bad "refusal message on device 1" "$WORK/err"; fi

# the refusal message describes the moment of the refusal: what was live
# then (600000 bytes, freed at once after the refusal), not what is live
# when the message is written (700000 bytes allocated after it; it said
# "none now: ... has been freed since", or listed the later allocation)
tguarded 60 GPUMEM_LIMIT=1M "$T/refusal_lists" refuse_then
msg=$(sed -n '/^gpumemguard: the biggest live allocations on device 0:$/,/^$/p' "$WORK/err")
if has "refuse_then: 2; guard 700000" "$WORK/out" && has "refused cuMemAlloc of 585.9 KiB (600000 bytes) on device 0" "$WORK/err" \
   && grep -q "^585.9 KiB (600000 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:$" <<<"$msg" \
   && grep -q " in held_at_refusal " <<<"$msg" && ! grep -q "700000\| in made_after_refusal \|none" <<<"$msg"; then
    ok "a refusal message lists what was live at the refusal (freed since), not an allocation made after it"
else bad "refusal message: the state at the refusal" "$WORK/err"; fi

# a refusal's message names what holds the device's quota: not host memory
# from cuMemCreate (three 64 MiB handles), not a sparse array (0 bytes)
tguarded 120 GPUMEM_LIMIT=4M GPUMEM_REPORT="$WORK/lists.txt" "$T/refusal_lists" refusal_lists
if has "refusal lists: 1 byte more 2; guard 4194304 sim 4194304" "$WORK/out" \
   && [ "$(grep -A1 "the biggest live allocations on device 0:" "$WORK/err" | tail -1)" = "4.0 MiB (4194304 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" ] \
   && [ "$(before_peak "$WORK/err" | grep -c "allocated from:$")" = 1 ] \
   && grep -A1 -F "64.0 MiB (67108864 bytes) in 1 allocation (cuMemCreate, device 0) allocated from:" "$WORK/lists.txt" | grep -q " in leak_host_handle " \
   && has "SUMMARY: gpumemguard: 205520896 bytes in 5 allocations still live at exit" "$WORK/lists.txt"; then
    ok "a refusal lists the device memory that holds the quota, not cuMemCreate handles in host memory nor sparse arrays; the exit report lists them all"
else bad "what a refusal lists" "$WORK/err"; fi

# a refusal message lists what holds the quota: memory that does not count
# against it (pinned host memory here) is left out, so that it can never
# crowd the counted stacks out of the few the message shows
guarded GPUMEM_LIMIT=2M "$T/refusal_lists" hostrefuse
msg=$(sed -n '/^gpumemguard: the biggest live allocations on device 0:/,/^==/p' "$WORK/err")
if has "hostrefuse: 0 0 0 0, then 2" "$WORK/out" && grep -q "^1.0 MiB (1048576 bytes) in 1 allocation (cuMemAlloc, device 0)" <<<"$msg" \
   && ! grep -q "cuMemHostAlloc" <<<"$msg"; then
    ok "a refusal message lists the stacks that count against the quota, not pinned host memory that is bigger"
else bad "refusal message: uncounted host memory listed instead of the counted stacks" "$WORK/err"; fi

# the biggest live allocations, biggest first, whatever order they were made in
tguarded 60 GPUMEM_LIMIT=16M "$T/refusal_lists" order
got=$(sed -n '/^gpumemguard: the biggest live allocations on device 0:$/,/^gpumemguard: live at the peak/p' "$WORK/err" \
      | grep -A1 "bytes) in 1 allocation" | grep -o "(1[0-9]* bytes)\| in sized_[0-9]* " | tr -d '()' | tr '\n' ' ')
if has "order: 2" "$WORK/out" \
   && [ "$got" = "1310720 bytes  in sized_20  1245184 bytes  in sized_19  1179648 bytes  in sized_18  " ]; then
    ok "a refusal lists the biggest of 20 call sites made in a shuffled order, biggest first"
else bad "refusal message order: '$got'" "$WORK/err"; fi
# ... and says how much the other 17 hold (153 x 64 KiB), under what is live
# and under what was live at the peak (the same allocations here)
more="  (and 9.6 MiB (10027008 bytes) more at other call sites; the report lists them all)"
if [ "$(grep -cxF -- "$more" "$WORK/err")" = 2 ] \
   && [ "$(sed -n '/^gpumemguard: the biggest live allocations on device 0:$/,/^gpumemguard: live at the peak/p' "$WORK/err" | grep -cxF -- "$more")" = 1 ]; then
    ok "a refusal message cut to its 3 biggest call sites says how much the rest hold, live and at the peak"
else bad "refusal message: the rest of a cut list" "$WORK/err"; fi
