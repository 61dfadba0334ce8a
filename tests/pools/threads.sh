# threads.sh - pools of two devices made, used and destroyed on 8 threads
# at once (tests/pools/threads.c). Sourced by tests/run.sh (its helpers, $T,
# $WORK).
build pool_threads tests/pools/threads.c -L"$B/sim" -l:libcuda.so.1

# pools of two devices made, used and destroyed on 8 threads at once, all
# under device 0's context: each allocation counts on its pool's device
tguarded 120 GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:64M,1:4M "$T/pool_threads" 300
has "pool threads: 8 x 300 rounds, refused 0; device 0 guard 0 sim 0; device 1 guard 0 sim 0" "$WORK/out" \
    && ok "pools of two devices made and destroyed on 8 threads at once: each allocation counted on its pool's device, nothing refused" \
    || bad "pools on 8 threads" "$WORK/out"
