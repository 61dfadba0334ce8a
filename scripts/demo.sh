#!/usr/bin/env bash
# demo.sh BUILD_DIR - the main job on a machine without a GPU: a small CUDA
# driver program that leaks, runs under the guard against the simulated
# driver with a quota, and the guard reports what leaked and from where.
set -eu
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
mkdir -p "$B/demo"
cc -std=gnu11 -O1 -g -I"$CUDA_INC" -o "$B/demo/leaky" scripts/demo_leaky.c -L"$B/sim" -l:libcuda.so.1
LIB="$ROOT/$B/libgpumemguard.so"
if [ -e /dev/nvidia0 ] && ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
    echo "== a GPU is present: running against the real driver"
    DRIVER_PATH=""
else
    echo "== no GPU: running against the simulated driver (tests/sim), 1 GiB device"
    DRIVER_PATH="$ROOT/$B/sim"
fi
# the leaking line, as the report will name it
LEAK_LINE=$(grep -n 'cuMemAlloc_v2(&activations' scripts/demo_leaky.c | cut -d: -f1)
cat <<EOF
== What to look for below (the program runs three times: under the command, by hand, then with no quota):
   1. "gpumemguard: refused cuMemAlloc of 200.0 MiB (209715200 bytes) on device 0: GPUMEM_LIMIT is 256.0 MiB ..."
      The quota refused the program's 200 MiB batch buffer (big_batch, the refused call's own stack follows);
      the program got CUDA_ERROR_OUT_OF_MEMORY, as from a full GPU, and the guard named the biggest live
      allocations at that moment.
   2. The exit report: what is still allocated, grouped by call site, biggest first. train_step leaked
      5 x 16 MiB (scripts/demo_leaky.c:$LEAK_LINE); load_model's 64 MiB of weights were never freed either.
   3. The last line, SUMMARY: the bytes still live at exit.
   4. Then the same loop with no quota, asking the 1 GiB device for 2 GiB: "gpumemguard: the driver refused
      cuMemAlloc of 2.0 GiB ..." is the driver's own out of memory, explained the same way, ending with what
      was live at the device's peak (train_step's 1 MiB scratch buffer too, freed since); the exit report's
      "Live at the peak of device 0" section says the same.
EOF
export LD_LIBRARY_PATH="$DRIVER_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUSIM_MEM=1G
echo
echo "== 1. the command, as the README leads with it: gpumemguard --limit 256M -- ./leaky"
echo "   $B/gpumemguard --limit 256M -- $B/demo/leaky"
echo
"$B/gpumemguard" --limit 256M -- "$B/demo/leaky"
echo
echo "== 2. the same by hand: the library preloaded, the limit in the environment"
echo "   LD_PRELOAD=$LIB GPUMEM_LIMIT=256M $B/demo/leaky"
echo
env LD_PRELOAD="$LIB" GPUMEM_LIMIT=256M "$B/demo/leaky"
echo
echo "== 3. the driver's own out of memory, no quota: the same loop asks the 1 GiB device for 2 GiB"
echo "   LD_PRELOAD=$LIB $B/demo/leaky oom"
echo
env LD_PRELOAD="$LIB" "$B/demo/leaky" oom
