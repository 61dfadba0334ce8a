# threads.sh - stream capture on 8 threads at once
# (tests/capture/threads.c). Sourced by tests/run.sh (its helpers, $T,
# $WORK).
build capture_threads tests/capture/threads.c -L"$B/sim" -l:libcuda.so.1

# 8 threads capture at once (streams of their own, their per-thread default
# streams): 8 MiB in each capture under a 4 MiB limit always goes through,
# uncounted; outside the captures the same streams' allocations count
for mode in capture_threads capture_ptds; do
    tguarded 120 GPUMEM_LIMIT=4M "$T/capture_threads" $mode 200
    if has "capture threads: 8 x 200 rounds, captured refused 0, bad 0; after all ended 8 MiB 2; guard 0 sim 0" "$WORK/out" \
       && has "unknown frees: 0;" "$WORK/err" && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
        ok "stream capture on 8 threads at once ($mode): captured allocations never refused nor counted, the rest counted, none after the last end"
    else bad "stream capture on 8 threads ($mode)" "$WORK/out"; fi
done
