#!/usr/bin/env bash
# tests/gpu/run.sh - the GPU validation suite. On a machine with an NVIDIA
# GPU: builds what it needs, runs every case, prints a table (case,
# expected, seen, pass/fail/info) and exits non-zero on any failure. Fits one
# device-tool command (< 10 minutes); installs nothing outside $OUT. See
# README.md here.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-$(mktemp -d)}
G=$OUT/gpu; mkdir -p "$G"
# shared libraries that travel with the command (tests/gpu/README.md)
[ -d build/gpu-libs ] && export LD_LIBRARY_PATH="$ROOT/build/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
LIB=$ROOT/build/libgpumemguard.so
[ -f "$LIB" ] || { echo "build/libgpumemguard.so missing: build it first (make) and carry build/"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$G/gpu.txt"
nvcc --version | tail -1 | tee -a "$G/gpu.txt"
python3 - <<'PY' 2>&1 | tee -a "$G/gpu.txt"
import importlib.metadata as md, platform
print("python", platform.python_version(), end="")
for d in ("torch", "jax", "jaxlib", "cupy-cuda13x", "cupy-cuda12x", "numba-cuda", "numba", "nvidia-nccl-cu13", "nvidia-nccl-cu12", "pytest"):
    try:
        print(f"; {d} {md.version(d)}", end="")
    except md.PackageNotFoundError:
        pass
print()
PY

nvcc -g -o "$G/leaky_static" tests/gpu/leaky.cu || exit 2
nvcc -g -cudart shared -o "$G/leaky_shared" tests/gpu/leaky.cu || exit 2
nvcc -O2 -o "$G/allocbench" tests/gpu/allocbench.cu -lcuda || exit 2
nvcc -O1 -o "$G/ptrscan" tests/gpu/ptrscan.cu -lcuda || exit 2
cc -std=gnu11 -O1 -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$G/probe" tests/gpu/probe.c -L"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" -lcuda -ldl || exit 2
# the real driver's answers to what the simulated driver models (docs/gpu-validation.md), without the guard
timeout 120 "$G/probe" >"$G/probe.txt" 2>&1
# which entry points the guard handed out, and by which route, to each client
LD_PRELOAD="$LIB" GPUMEM_LOG=debug timeout 60 "$G/leaky_static" leaks >/dev/null 2>"$G/debug.static.txt"
LD_PRELOAD="$LIB" GPUMEM_LOG=debug timeout 60 "$G/leaky_shared" leaks >/dev/null 2>"$G/debug.shared.txt"

ROWS=(); FAILS=0
row() { # case expected seen verdict (pass, FAIL, or info: a measurement, not checked)
    ROWS+=("$1|$2|${3//$'\n'/ }|$4"); [ "$4" = pass ] || [ "$4" = info ] || FAILS=$((FAILS + 1))
}
check() { # case expected seen condition...
    local c=$1 e=$2 s=$3; shift 3
    if "$@"; then row "$c" "$e" "$s" pass; else row "$c" "$e" "$s" FAIL; fi
}
g() { env LD_PRELOAD="$LIB" "$@"; }
LIMIT=$((256 << 20))

for v in static shared; do
    B=$G/leaky_$v
    g timeout 60 "$B" leaks >"$G/$v.leaks.out" 2>"$G/$v.leaks.err"
    seen=$(grep SUMMARY "$G/$v.leaks.err" | head -1)
    check "1 $v leaks" "5242880 bytes in 3 allocations; leak_one_mib, leak_two_mib with file:line" "$seen" \
        bash -c "grep -q 'SUMMARY: gpumemguard: 5242880 bytes in 3 allocations' '$G/$v.leaks.err' && grep -qE 'in leak_one_mib\(\) [^ ]*leaky.cu:[0-9]+' '$G/$v.leaks.err' && grep -qE 'in leak_two_mib\(\) [^ ]*leaky.cu:[0-9]+' '$G/$v.leaks.err' && grep -q '(4194304 bytes) in 2 allocations' '$G/$v.leaks.err'"
    # at exit the driver has shut down: the device's free memory comes from NVML
    seen=$(grep -m1 "device free at report time" "$G/$v.leaks.err")
    check "1 $v exit report device free" "a figure from NVML" "${seen:-none}" grep -qE "device free at report time: .* \([0-9]+ bytes\) of .* \([0-9]+ bytes\) \(NVML\)" "$G/$v.leaks.err"
    g GPUMEM_LIMIT=$LIMIT timeout 60 "$B" limit $LIMIT >"$G/$v.limit.out" 2>"$G/$v.limit.err"
    seen=$(cat "$G/$v.limit.out")
    check "1 $v limit" "cudaErrorMemoryAllocation twice" "$seen" grep -q "cudaMalloc cudaErrorMemoryAllocation cudaMallocAsync cudaErrorMemoryAllocation" "$G/$v.limit.out"
    g GPUMEM_LIMIT=$LIMIT timeout 60 "$B" info >"$G/$v.info.out" 2>&1
    seen=$(grep free "$G/$v.info.out")
    check "1 $v cudaMemGetInfo" "total $LIMIT" "$seen" grep -q "total $LIMIT\$" "$G/$v.info.out"
    g timeout 60 "$B" reset >"$G/$v.reset.out" 2>"$G/$v.reset.err"
    seen=$(grep SUMMARY "$G/$v.reset.err" | head -1)
    check "1 $v cudaDeviceReset" "0 live, 1048576 reclaimed" "$seen" grep -q "0 bytes in 0 allocations still live at exit, 1048576 bytes in 1 allocation reclaimed" "$G/$v.reset.err"
    # pinned host memory goes with the context (probe.txt): reclaimed at the reset, not live at exit
    g timeout 60 "$B" host >"$G/$v.host.out" 2>"$G/$v.host.err"
    seen="$(cat "$G/$v.host.out"); $(grep SUMMARY "$G/$v.host.err" | head -1)"
    check "1 $v pinned host memory, reset" "free refused; 1048576 reclaimed, 0 live" "$seen" \
        bash -c "grep -q 'host free after reset cudaErrorInvalidValue' '$G/$v.host.out' && grep -q 'SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit, 1048576 bytes in 1 allocation reclaimed' '$G/$v.host.err' && grep -A8 '1.0 MiB (1048576 bytes) in 1 allocation (cuMemHostAlloc' '$G/$v.host.err' | grep -q pinned_mib"
    g timeout 60 "$B" signal >"$G/$v.sig.out" 2>"$G/$v.sig.err"
    seen="$(grep -c 'report (signal' "$G/$v.sig.err") signal dumps, $(cat "$G/$v.sig.out")"
    check "1 $v SIGUSR1" "a signal dump, still running" "$seen" bash -c "grep -q 'report (signal' '$G/$v.sig.err' && grep -q 'still running' '$G/$v.sig.out'"
    # graph memory nodes: reported, not counted; freed in the graph or by cudaFree: gone
    g GPUMEM_LIMIT=$((1 << 20)) timeout 60 "$B" graph >"$G/$v.graph.out" 2>"$G/$v.graph.err"
    seen="$(cat "$G/$v.graph.out"); $(grep SUMMARY "$G/$v.graph.err" | head -1)"
    check "1 $v graph memory nodes" "4 x cudaSuccess under a 1 MiB limit; 3145728 bytes in 1 allocation, leak_graph_node" "$seen" \
        bash -c "grep -q 'graph cudaSuccess cudaSuccess cudaSuccess cudaSuccess' '$G/$v.graph.out' && grep -q 'SUMMARY: gpumemguard: 3145728 bytes in 1 allocation' '$G/$v.graph.err' && grep -A3 '3.0 MiB (3145728 bytes) in 1 allocation (cuGraphAddMemAllocNode' '$G/$v.graph.err' | grep -q leak_graph_node"
    # the reporter thread has no context: the device's free memory comes from NVML
    seen=$(grep -m1 "device free at report time" "$G/$v.sig.err")
    check "1 $v SIGUSR1 device free" "a figure from NVML, near nvidia-smi's" "${seen:-none}" grep -qE "device free at report time: .* \([0-9]+ bytes\) of .* \([0-9]+ bytes\) \(NVML\)" "$G/$v.sig.err"
done

# 2: NVIDIA's own tool on the same program
if command -v compute-sanitizer >/dev/null; then
    timeout 180 compute-sanitizer --leak-check full "$G/leaky_static" leaks >"$G/cs.out" 2>&1
    cs=$(grep -oE 'LEAK SUMMARY: [0-9]+ bytes leaked in [0-9]+ allocations' "$G/cs.out" | head -1)
    ours=$(grep SUMMARY "$G/static.leaks.err" | grep -oE '[0-9]+ bytes in [0-9]+ allocations' | head -1)
    # and the same call sites, function and line
    cs_sites=$(grep -oE 'leak_[a-z_]+\(\) in leaky.cu:[0-9]+' "$G/cs.out" | sed -E 's/ in leaky.cu:/:/' | sort -u | tr '\n' ' ')
    our_sites=$(grep -oE 'in leak_[a-z_]+\(\) [^ ]*leaky.cu:[0-9]+' "$G/static.leaks.err" | sed -E 's/^in //; s/ [^ ]*leaky.cu:/:/' | sort -u | tr '\n' ' ')
    check "2 compute-sanitizer" "${ours:-?}; ${our_sites:-no sites}" "${cs:-none}; ${cs_sites:-no sites}" bash -c "[ -n '$cs' ] && [ '$(echo "$cs" | grep -oE '[0-9]+' | tr '\n' ' ')' = '$(echo "$ours" | grep -oE '[0-9]+' | tr '\n' ' ')' ] && [ -n '$cs_sites' ] && [ '$cs_sites' = '$our_sites' ]"
else
    row "2 compute-sanitizer" "same leaks" "compute-sanitizer missing" FAIL
fi

# 3: PyTorch
P=tests/gpu/cases.py
g GPUMEM_LIMIT=$LIMIT timeout 120 python3 $P torch_oom $LIMIT >"$G/t1.out" 2>"$G/t1.err"; rc=$?
check "3 torch OOM" "torch.OutOfMemoryError, rc 0" "$(cat "$G/t1.out") rc $rc" bash -c "[ $rc = 0 ] && grep -q OutOfMemoryError '$G/t1.out'"
g GPUMEM_LIMIT=$LIMIT timeout 120 python3 $P torch_meminfo >"$G/t2.out" 2>&1
check "3 torch mem_get_info" "total $LIMIT" "$(cat "$G/t2.out")" grep -q "total $LIMIT\$" "$G/t2.out"
g GPUMEM_LIMIT=$LIMIT PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 120 python3 $P torch_oom $LIMIT >"$G/t3.out" 2>"$G/t3.err"; rc=$?
check "3 torch OOM, expandable (VMM)" "torch.OutOfMemoryError, rc 0" "$(cat "$G/t3.out") rc $rc" bash -c "[ $rc = 0 ] && grep -q OutOfMemoryError '$G/t3.out'"
g PYTORCH_NO_CUDA_MEMORY_CACHING=1 GPUMEM_REPORT="$G/torch_leak.%n" GPUMEM_REPORT_FORMAT=json timeout 120 python3 $P torch_leak >"$G/t4.out" 2>&1
# jc: one run of jsoncheck.py gives what was seen (its output) and the verdict (its status, in $jr)
jc() { python3 tests/gpu/jsoncheck.py "$@" 2>&1; }
seen=$(jc group 5242880 1 torch_leak "$G/torch_leak.1"); jr=$?
check "3 torch tensor leak" "5242880 bytes in 1, Python frame torch_leak" "$seen" test $jr = 0
g PYTORCH_NO_CUDA_MEMORY_CACHING=1 GPUMEM_REPORT="$G/torch_list.%n" GPUMEM_REPORT_FORMAT=json timeout 120 python3 $P torch_list_leak >"$G/t5.out" 2>&1
seen=$(jc group 10485760 10 keep_activations "$G/torch_list.1"); jr=$?
check "3 torch leak in a list" "10485760 bytes in 10, Python frame keep_activations" "$seen" test $jr = 0
g GPUMEM_REPORT="$G/torch_steady.%n" GPUMEM_REPORT_FORMAT=json timeout 180 python3 $P torch_steady >"$G/t6.out" 2>&1
seen=$(jc same "$G/torch_steady.1" "$G/torch_steady.2"); jr=$?
check "3 torch training steps leak nothing" "live bytes after step 5 = after step 30" "$seen" test $jr = 0
g PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True GPUMEM_REPORT="$G/torch_vmm.%n" GPUMEM_REPORT_FORMAT=json timeout 120 python3 $P torch_vmm >"$G/t7.out" 2>&1
seen=$(jc api "$G/torch_vmm.1" cuMemCreate 104857600); jr=$?
check "3 torch expandable (VMM) tracked" "cuMemCreate groups >= 100 MiB live" "$seen" test $jr = 0
g GPUMEM_LOG=debug timeout 120 python3 $P torch_meminfo >/dev/null 2>"$G/debug.torch.txt"

# 4: JAX preallocates from the capped device
g GPUMEM_LIMIT=$((1 << 30)) timeout 180 python3 $P jax_prealloc >"$G/j.out" 2>"$G/j.err"; rc=$?
lim=$(grep -oE 'bytes_limit [0-9]+' "$G/j.out" | grep -oE '[0-9]+')
check "4 jax preallocation" "completes, bytes_limit <= 1 GiB" "$(cat "$G/j.out") rc $rc" bash -c "[ $rc = 0 ] && grep -q 'jax: ok' '$G/j.out' && [ '${lim:-0}' -le $((1 << 30)) ] && [ '${lim:-0}' -gt 0 ]"

g XLA_PYTHON_CLIENT_PREALLOCATE=false GPUMEM_LIMIT=$((1 << 30)) GPUMEM_REPORT="$G/jax.%n" GPUMEM_REPORT_FORMAT=json timeout 180 python3 $P jax_prealloc >"$G/j2.out" 2>"$G/j2.err"; rc=$?
peak=$(jc peak "$G/jax.1" $((1 << 30))); jr=$?
check "4 jax, no preallocation" "completes, peak counted, <= 1 GiB" "$(cat "$G/j2.out") rc $rc; $peak" \
    bash -c "[ $rc = 0 ] && [ $jr = 0 ] && grep -q 'jax: ok' '$G/j2.out'"

# 4: numba-cuda
g GPUMEM_LIMIT=$LIMIT GPUMEM_REPORT="$G/numba.%n" GPUMEM_REPORT_FORMAT=json timeout 120 python3 $P numba_oom $LIMIT >"$G/n.out" 2>"$G/n.err"
grp=$(jc group 3145728 1 numba_oom "$G"/numba.*); jr=$?
check "4 numba-cuda" "out of memory past the limit; 3145728 bytes in 1, numba_oom" "$(tr '\n' ' ' <"$G/n.out"); $grp" \
    bash -c "[ $jr = 0 ] && grep -qi 'numba: refused.*out.of.memory' '$G/n.out'"

# 5: CuPy
g GPUMEM_LIMIT=$LIMIT timeout 120 python3 $P cupy_oom $LIMIT >"$G/c.out" 2>"$G/c.err"
check "5 cupy OOM + memGetInfo" "OutOfMemoryError, total $LIMIT" "$(tr '\n' ' ' <"$G/c.out")" bash -c "grep -q 'cupy: OutOfMemoryError' '$G/c.out' && grep -q 'total $LIMIT\$' '$G/c.out'"

# 6: overhead on the real driver
"$G/allocbench" >"$G/b.plain" 2>&1
g GPUMEM_REPORT=/dev/null "$G/allocbench" >"$G/b.guard" 2>&1
g GPUMEM_REPORT=/dev/null GPUMEM_STACK_DEPTH=0 "$G/allocbench" >"$G/b.guard0" 2>&1
command -v compute-sanitizer >/dev/null && timeout 240 compute-sanitizer "$G/allocbench" >"$G/b.cs" 2>&1
timeout 180 python3 $P torch_step_time >"$G/s.plain" 2>&1
g GPUMEM_REPORT=/dev/null timeout 180 python3 $P torch_step_time >"$G/s.guard" 2>&1
for f in b.plain b.guard b.guard0 b.cs s.plain s.guard; do echo "== $f"; cat "$G/$f" 2>/dev/null; done | tee "$G/overhead.txt"
check "6 overhead measured" "three sizes, both runs" "see overhead.txt" bash -c "[ \$(grep -c median '$G/b.plain') = 3 ] && [ \$(grep -c median '$G/b.guard') = 3 ] && grep -q step '$G/s.guard'"

# 7: the driver's own out of memory, no quota
oom_msg() { sed -n '/^gpumemguard: the driver refused/,/^gpumemguard: the biggest/p' "$1"; }
export -f oom_msg
for v in static shared; do
    g timeout 60 "$G/leaky_$v" oom >"$G/$v.oom.out" 2>"$G/$v.oom.err"
    seen="$(cat "$G/$v.oom.out"); $(grep -m1 'the driver refused' "$G/$v.oom.err" | cut -c1-120)"
    check "7 $v cudaMalloc past the device" "cudaErrorMemoryAllocation; the message names oom_past_device leaky.cu:N" "$seen" \
        bash -c "grep -q 'oom cudaErrorMemoryAllocation' '$G/$v.oom.out' && grep -q '^gpumemguard: the driver refused cuMemAlloc of .*out of memory; this process holds 64.0 MiB' '$G/$v.oom.err' && oom_msg '$G/$v.oom.err' | grep -qE 'in oom_past_device\(.*leaky.cu:[0-9]+'"
done
fill_line=$(grep -n 'SITE: fill_device' $P | cut -d: -f1)
g GPUMEM_REPORT="$G/fill.%n" GPUMEM_REPORT_FORMAT=text,json timeout 180 python3 $P fill_device >"$G/fill.out" 2>"$G/fill.err"; rc=$?
oom_msg "$G/fill.err" >"$G/fill.msg"
check "7 torch fills the device, no quota" "torch.OutOfMemoryError; a message naming fill_device cases.py:$fill_line" \
    "$(cat "$G/fill.out") rc $rc; $(grep -c '^gpumemguard: the driver refused' "$G/fill.err") message(s); $(grep -m1 'fill_device' "$G/fill.msg")" \
    bash -c "[ $rc = 0 ] && grep -q 'OutOfMemoryError' '$G/fill.out' && grep -q 'cases.py\", line $fill_line, in fill_device' '$G/fill.msg'"
seen=$(jc oompeak "$G/fill.1.json" fill_device $((64 << 30))); jr=$?
check "7 torch: the peak's make-up" "driver_oom > 0; at the peak >= 64 GiB under fill_device" "$seen" test $jr = 0
check "7 torch: text peak section" "Live at the peak of device 0 ..., fill_device" "$(grep -m1 -A3 '^Live at the peak of device 0' "$G/fill.1.txt" 2>/dev/null | tr '\n' ' ' | cut -c1-200)" \
    bash -c "grep -A6 '^Live at the peak of device 0' '$G/fill.1.txt' | grep -q 'line $fill_line, in fill_device'"

# 8: pools. The command, from the build tree, as a user runs it.
CMD=$ROOT/build/gpumemguard
SNAPSHOT="$G/torch_snap.pickle" timeout 180 "$CMD" --error-exitcode 23 --report "$G/train.%n" --format text,json,html,memviz \
    -- python3 $P torch_train >"$G/train.out" 2>"$G/train.err"; rc=$?
check "8 torch training, caching allocator" "exit 0 under --error-exitcode 23; Retained by pool PyTorch" \
    "rc $rc; $(grep -m1 SUMMARY "$G/train.2.txt" 2>/dev/null)" \
    bash -c "[ $rc = 0 ] && grep -q 'Retained by pool PyTorch' '$G/train.2.txt'"
seen=$(jc pool "$G/train.2.json" PyTorch 1 noleak); jr=$?
check "8 torch: segments retained, no leak" "pool PyTorch, no leak" "$seen" test $jr = 0
seen=$(jc owners "$G/train.1.json" PyTorch); jr=$?
check "8 torch: owners" "PyTorch" "$seen" test $jr = 0
seen=$(jc pool "$G/train.2.json" cuBLAS 1); jr=$?
check "8 torch: cuBLAS apart" "cuBLAS handles' own memory retained by pool cuBLAS at exit" "$seen" test $jr = 0
leak_line=$(grep -n 'SITE: leak_tensor' $P | cut -d: -f1)
timeout 180 "$CMD" --tensors --error-exitcode 23 --report "$G/tleak.%n" --format text,json -- python3 $P torch_train_leak >"$G/tleak.out" 2>"$G/tleak.err"; rc=$?
seen=$(jc leakline "$G/tleak.1.json" 5242880 leak_tensor "$leak_line"); jr=$?
check "8 torch --tensors, a tensor leak" "exit 23; 5 MiB leak at leak_tensor cases.py:$leak_line" "rc $rc; $seen" bash -c "[ $rc = 23 ] && [ $jr = 0 ]"
timeout 180 "$CMD" --tensors --error-exitcode 23 --report "$G/ttens.%n" --format text,json -- python3 $P torch_train >"$G/ttens.out" 2>"$G/ttens.err"; rc=$?
check "8 torch --tensors, no leak" "exit 0" "rc $rc; $(jc pool "$G/ttens.1.json" PyTorch 0)" test $rc = 0
timeout 180 "$CMD" --error-exitcode 23 --report "$G/jaxpool.%n" --format text,json -- python3 $P jax_pool >"$G/jaxpool.out" 2>"$G/jaxpool.err"; rc=$?
seen=$(jc pool "$G/jaxpool.1.json" XLA $((32 << 30))); jr=$?
check "8 jax, default preallocation" "exit 0; >= 32 GiB retained by pool XLA at a dump" "rc $rc; $(cat "$G/jaxpool.out"); $seen" bash -c "[ $rc = 0 ] && [ $jr = 0 ]"
timeout 180 "$CMD" --error-exitcode 23 --report "$G/cupool.%n" --format text,json -- python3 $P cupy_pool >"$G/cupool.out" 2>"$G/cupool.err"; rc=$?
seen=$(jc pool "$G/cupool.1.json" CuPy $((96 << 20))); jr=$?
check "8 cupy memory pool" "exit 0; >= 96 MiB retained by pool CuPy at a dump" "rc $rc; $(cat "$G/cupool.out"); $seen" bash -c "[ $rc = 0 ] && [ $jr = 0 ]"
timeout 120 "$CMD" --error-exitcode 23 --report "$G/nccl.%n" --format text,json -- python3 $P torch_nccl >"$G/nccl.out" 2>"$G/nccl.err"; rc=$?
if grep -q 'nccl: unavailable' "$G/nccl.out"; then
    row "8 NCCL one-rank communicator" "NCCL apart from PyTorch" "NCCL not available" info
else
    seen=$(jc owners "$G/nccl.1.json" NCCL PyTorch); jr=$?
    check "8 NCCL one-rank communicator" "owners NCCL and PyTorch apart; exit 0" "rc $rc; $(cat "$G/nccl.out"); $seen" bash -c "[ $jr = 0 ] && [ $rc = 0 ]"
fi

# 9: pictures of the training run: the page comes back to be loaded in Chromium; memviz against PyTorch's own snapshot
seen=$(jc memviz "$G/train.1.pickle" "$G/torch_snap.pickle"); jr=$?
check "9 memviz = torch.cuda.memory._snapshot()" "every PyTorch segment, same address and size" "$seen" test $jr = 0
timeout 120 python3 $P memviz_open "$G/train.1.pickle" >"$G/mv.out" 2>&1
check "9 memviz opened by torch.cuda._memory_viz" "segsum, segment_plot, trace_plot read it" "$(cat "$G/mv.out")" \
    bash -c "grep -q 'segsum [0-9]* chars' '$G/mv.out' && ! grep -q FAILED '$G/mv.out'"
check "9 html page of the run written" "train.2.html, loaded in Chromium elsewhere" "$(ls -l "$G/train.2.html" 2>&1 | awk '{print $5, $NF}')" test -s "$G/train.2.html"

# 10: the wheel into this machine's Python, the plugin over PyTorch tests
WHL=$(ls dist/gpumemguard-*.whl 2>/dev/null | head -1)
SITE=$G/site
if [ -n "$WHL" ]; then
    if python3 -m pip install -q --no-index --no-deps --target "$SITE" "$WHL" >"$G/pip.log" 2>&1; then how=pip
    else how=unzip; python3 - "$WHL" "$SITE" >>"$G/pip.log" 2>&1 <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2])
for i in z.infolist():
    mode = (i.external_attr >> 16) & 0o777
    if mode:
        os.chmod(os.path.join(sys.argv[2], i.filename), mode)
PY
    fi
    if ! python3 -c 'import pytest' 2>/dev/null; then
        python3 -m pip install -q --no-index --find-links build/gpu-wheels --target "$SITE" pytest >>"$G/pip.log" 2>&1 || \
            for w in build/gpu-wheels/*.whl; do python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$SITE"; done
    fi
    for mode in caching tensors; do
        env=(); want="test_over_budget"
        [ $mode = tensors ] && env=(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) && want="test_leaks test_over_budget"
        (cd "$G" && env "${env[@]}" PYTHONPATH="$SITE" timeout 180 python3 -m pytest -p no:cacheprovider --gpumem -rA -q \
            "$ROOT/tests/gpu/torch_gpumem_tests.py") >"$G/pytest.$mode.out" 2>&1; rc=$?
        failed=$(grep -oE '^FAILED [^ ]*::test_[a-z_]+' "$G/pytest.$mode.out" | sed 's/.*:://' | sort | tr '\n' ' ' | sed 's/ $//')
        check "10 pytest --gpumem, $mode ($how)" "failed: $want" "rc $rc; failed: ${failed:-none}; $(tail -1 "$G/pytest.$mode.out")" test "$failed" = "$want"
    done
else
    row "10 pytest --gpumem" "the wheel installed" "no dist/*.whl carried" FAIL
fi

# 11: a measurement: copies of device pointers in the process's own memory
for v in runtime driver; do
    timeout 120 "$G/ptrscan" $v 256 >"$G/ptrscan.$v.txt" 2>&1
    row "11 pointer copies, $v" "measured: where copies stay" "$(tr '\n' ' ' <"$G/ptrscan.$v.txt")" info
done

# 12: the stream-ordered pair (every tensor under --tensors) on the real driver
"$G/allocbench" async >"$G/ba.plain" 2>&1
g GPUMEM_REPORT=/dev/null "$G/allocbench" async >"$G/ba.guard" 2>&1
g GPUMEM_REPORT=/dev/null GPUMEM_STACK_DEPTH=0 "$G/allocbench" async >"$G/ba.guard0" 2>&1
"$G/allocbench" ctx >"$G/ba.ctx" 2>&1
for f in ba.plain ba.guard ba.guard0 ba.ctx; do echo "== $f"; cat "$G/$f"; done | tee -a "$G/overhead.txt"
check "12 async pair measured" "three sizes, three runs" "see overhead.txt" bash -c "[ \$(cat '$G/ba.plain' '$G/ba.guard' '$G/ba.guard0' | grep -c 'median') = 9 ] && ! grep -q failed '$G/ba.guard'"

# 13: the fast stack walker against libunwind on real programs and the libraries they load (libcudart
# static and shared, libtorch and its autograd threads, XLA, CuPy, numba): every capture walked both
# ways (GMG_UNWIND_CHECK=1) to the guard's deepest stacks; any difference is printed with both walks
uw() { # NAME CMD...
    local n=$1; shift
    g GMG_UNWIND_CHECK=1 GPUMEM_STACK_DEPTH=256 GPUMEM_REPORT=/dev/null timeout 300 "$@" >"$G/uw.$n.out" 2>"$G/uw.$n.err"
    local s; s=$(sed -n 's/.*unwind check: \([0-9]* walks compared.*\)/\1/p' "$G/uw.$n.err" | tail -1)
    check "13 fast stacks, $n" "walks compared, 0 differ" "${s:-no summary}; $(grep -c 'differs from libunwind' "$G/uw.$n.err") printed" \
        bash -c "grep -qE 'unwind check: [1-9][0-9]* walks compared, 0 differ' '$G/uw.$n.err' && ! grep -q 'differs from libunwind' '$G/uw.$n.err'"
}
uw nvcc_static "$G/leaky_static" leaks
uw nvcc_shared "$G/leaky_shared" leaks
uw torch_caching python3 $P torch_steady
uw torch_every_tensor env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 $P torch_steady
uw jax python3 $P jax_pool
uw cupy python3 $P cupy_pool
uw numba env GPUMEM_LIMIT=$LIMIT python3 $P numba_oom $LIMIT

# 14: measurements on this machine's CPUs against the simulated driver: a pair from C (1 thread, 0 live,
# stacks off and 32 of 48 frames) and through ctypes from this machine's CPython (10 and 50 Python frames)
if [ -f build/sim/libcuda.so.1 ]; then
    SIM="$ROOT/build/sim"
    cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$G/bench" tests/bench/bench.c \
        -L"$SIM" -l:libcuda.so.1 -lpthread -ldl -Wl,-rpath,"$SIM"
    best() { sort -g | head -1; }
    sb() { for _ in 1 2 3 4 5; do env LD_LIBRARY_PATH="$SIM:${LD_LIBRARY_PATH:-}" GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1 GPUMEM_SIGNAL=none \
        GPUMEM_REPORT=/dev/null "$@" "$G/bench" pairs 100000 0 1 48 | awk '{ printf "%.1f\n", $1 - $4 }'; done | best; }
    c0=$(sb LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0); c32=$(sb LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32)
    row "14 C pair added, 1 thread, 0 live" "measured (ns): stacks off / 32 of 48 frames" "$c0 / $c32" info
    py() { for _ in 1 2 3; do env LD_LIBRARY_PATH="$SIM:${LD_LIBRARY_PATH:-}" GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1 GPUMEM_SIGNAL=none \
        GPUMEM_REPORT=/dev/null "$@" python3 tests/bench/pybench.py $d 10000 | cut -d' ' -f1; done | best; }
    for d in 10 50; do
        u=$(py); o=$(py LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUMEM_PYTHON=off); a=$(py LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUMEM_PYTHON=auto)
        row "14 Python $(python3 -c 'import platform; print(platform.python_version())'), $d frames" \
            "measured (ns): unguarded / off / auto / added" "$u / $o / $a / $(awk "BEGIN { print $a - $u }")" info
    done
fi

printf "\n%-34s | %-45s | %-60s | %s\n" case expected seen result
for r in "${ROWS[@]}"; do IFS='|' read -r c e s v <<<"$r"; printf "%-34s | %-45s | %-60.60s | %s\n" "$c" "$e" "$s" "$v"; done
printf "%s\n" "${ROWS[@]}" >"$G/rows.txt"
echo
echo "$(( ${#ROWS[@]} - FAILS )) passed, $FAILS failed"
[ "$FAILS" = 0 ]
