# pools.sh - caching pools: built-in patterns of known allocators, pool: lines,
# GPUMEM_POOLS, owners and their summary, each case's exit status under
# GPUMEM_EXITCODE. Sourced by run.sh (uses its helpers).

$CXX -O0 -g $SAN_FLAGS -fPIC -shared -I"$CUDA_INC" -o "$T/libfakepools.so" tests/pools/fakepools.cc \
    -L"$B/sim" -l:libcuda.so.1 || exit 1
mkdir -p "$T/tensorflow" && cp "$T/libfakepools.so" "$T/tensorflow/libfakepools.so"
build poolapp tests/pools/poolapp.c -L"$B/sim" -l:libcuda.so.1
FP="$ROOT/$T/libfakepools.so"
jq_() { python3 "$ROOT/tests/pools/jq.py" "$@"; }

# Each built-in pattern against a stack that has it: retained by its pool,
# not a leak, so GPUMEM_EXITCODE keeps the program's status.
for spec in torch:PyTorch:1048576 torch1:PyTorch:2097152 torch_exp:PyTorch:2162688 torch_native:PyTorch:2228224 tsl:XLA:3145728 \
            tf:TensorFlow:4194304 rmm:RMM:5242880 mxnet:MXNet:6291456 cupy:CuPy:7340032 tfmod:TensorFlow:8388608 \
            cupy_memory:CuPy:7405568 torch_host:PyTorch:1114112 torch_ws:PyTorch:1179648 \
            cublas:cuBLAS:131072 cublaslt:cuBLASLt:196608 cudnn:cuDNN:262144; do
    IFS=: read -r c owner bytes <<<"$spec"
    lib=$FP; fn=$c
    [ "$c" = tfmod ] && { lib="$ROOT/$T/tensorflow/libfakepools.so"; fn=tsl; } # TSL's BFC inside TensorFlow's module
    guarded GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/pool.%p" "$T/poolapp" "$lib" "$fn=$bytes"; rc=$?
    j=$(ls "$WORK"/pool.*.json 2>/dev/null | head -1); t=${j%.json}.txt
    got=$([ -n "$j" ] && jq_ "$j" '[(g["owner"], g.get("pool"), g["bytes"]) for g in r["live"]], r["totals"]["live_bytes"], r["totals"]["retained_bytes"], [(o["owner"], o["retained_bytes"]) for o in r["owners"]]')
    if [ $rc = 0 ] && [ "$got" = "([('$owner', '$owner', $bytes)], 0, $bytes, [('$owner', $bytes)])" ] \
       && grep -q "^Retained by pool $owner (not a leak): .* ($bytes bytes) in 1 allocation$" "$t" \
       && grep -q "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit, $bytes bytes in 1 allocation retained by pools" "$t" \
       && ! grep -q "^Live allocations" "$t"; then
        ok "pool pattern $c: a $owner segment is retained by pool $owner, not a leak (exit 0 under GPUMEM_EXITCODE=23; JSON pool/owner)"
    else bad "pool pattern $c (rc $rc): got '$got'" "${t:-$WORK/err}"; fi
    rm -f "$WORK"/pool.*
done

# A program's own functions whose parameter or template argument types, or
# whose class, carry a pool's name are no pool: their memory is a leak
# (exit 23). RMM's base class, its pool as template argument, is the pool.
guarded GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/look.json" "$T/poolapp" "$FP" \
    app_param=65536 app_template=131072 app_stats=196608 app_class=262144 rmm_base=327680 rmm_fnptr=393216; rc=$?
got=$(jq_ "$WORK/look.json" 'sorted((g["bytes"], g["owner"], g.get("pool", "-")) for g in r["live"]), r["totals"]["live_bytes"]')
want="([(65536, 'program', '-'), (131072, 'program', '-'), (196608, 'program', '-'), (262144, 'program', '-'), (327680, 'RMM', 'RMM'), (393216, 'RMM', 'RMM')], 655360)"
if [ $rc = 23 ] && [ "$got" = "$want" ]; then
    ok "no pool by a parameter's or template argument's type, nor by a class named like a pool: app::upload(rmm::mr::pool_memory_resource<...>&), app::fill<rmm::mr::pool_memory_resource<...>>, SingleDeviceMemoryPoolStats, PinnedMemoryPoolTuner are leaks (23); RMM's stream_ordered_memory_resource<pool_memory_resource<...>> is its pool, and so is a pool function returning a pointer to function"
else bad "pool names in parameters (rc $rc): got $got" "$WORK/look.json"; fi

# Owners that are no pools: their allocations are leaks, labelled (cuBLAS,
# cuBLASLt and cuDNN allocating outside a handle's creation); PyTorch's
# cudaMallocAsync backend hands each tensor to the driver (no segment).
guarded GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/own.json" "$T/poolapp" "$FP" \
    nccl=65536 sgemm=131072 ltmatmul=196608 conv=262144 torch_async=327680 leak=393216 torch_uncached=458752 torch=1048576; rc=$?
got=$(jq_ "$WORK/own.json" 'sorted((g["bytes"], g["owner"], g.get("pool", "-")) for g in r["live"])')
want="[(65536, 'NCCL', '-'), (131072, 'cuBLAS', '-'), (196608, 'cuBLASLt', '-'), (262144, 'cuDNN', '-'), (327680, 'PyTorch', '-'), (393216, 'program', '-'), (458752, 'PyTorch', '-'), (1048576, 'PyTorch', 'PyTorch')]"
owners=$(jq_ "$WORK/own.json" '[(o["owner"], o["bytes"], o["count"], o["retained_bytes"]) for o in r["owners"]]')
wown="[('PyTorch', 1835008, 3, 1048576), ('program', 393216, 1, 0), ('cuDNN', 262144, 1, 0), ('cuBLASLt', 196608, 1, 0), ('cuBLAS', 131072, 1, 0), ('NCCL', 65536, 1, 0)]"
if [ $rc = 23 ] && [ "$got" = "$want" ] && [ "$owners" = "$wown" ] \
   && [ "$(jq_ "$WORK/own.json" 'r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')" = "(1835008, 1048576)" ]; then
    ok "owners: NCCL, cuBLAS, cuBLASLt, cuDNN, PyTorch (cudaMallocAsync and uncached: no pool) and the program labelled; summary by owner; leaks still fail the run (23)"
else bad "owners (rc $rc): $got / $owners" "$WORK/own.json"; fi

# Module patterns read a path from its package on: a CuPy module in a venv
# under /opt/torch is CuPy's, not PyTorch's; torch/lib itself is PyTorch's.
mkdir -p "$T/opt/torch/.venv/lib/python3.12/site-packages/cupy_backends" "$T/opt/torch/.venv/lib/python3.12/site-packages/torch/lib"
cp "$T/libfakepools.so" "$T/opt/torch/.venv/lib/python3.12/site-packages/cupy_backends/libfakepools.so"
cp "$T/libfakepools.so" "$T/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libfakepools.so"
own_in() { guarded GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/path.json" "$T/poolapp" "$ROOT/$T/opt/torch/.venv/lib/python3.12/site-packages/$1/libfakepools.so" plain=65536
           jq_ "$WORK/path.json" '[g["owner"] for g in r["live"]]'; }
got="$(own_in cupy_backends) $(own_in torch/lib)"
if [ "$got" = "['CuPy'] ['PyTorch']" ]; then
    ok "owner by module path from the package on: a CuPy module in a venv under /opt/torch is CuPy's; torch/lib is PyTorch's"
else bad "owner by module path: got $got" "$WORK/path.json"; fi

# the text report: leaks listed, the pool apart, the summary by owner
guarded GPUMEM_EXITCODE=23 "$T/poolapp" "$FP" leak=393216 torch=1048576; rc=$?
if [ $rc = 23 ] && has "Retained by pool PyTorch (not a leak): 1.0 MiB (1048576 bytes) in 1 allocation" "$WORK/err" \
   && grep -A3 "^Live allocations" "$WORK/err" | grep -q "in leak_plain " \
   && ! sed -n '/^Live allocations/,/^Retained/p' "$WORK/err" | grep -q "DeviceCachingAllocator" \
   && grep -qE "^  PyTorch +1.0 MiB \(1048576 bytes\) in 1 allocation, 1.0 MiB \(1048576 bytes\) retained$" "$WORK/err" \
   && grep -qE "^  program +384.0 KiB \(393216 bytes\) in 1 allocation$" "$WORK/err" \
   && has "SUMMARY: gpumemguard: 393216 bytes in 1 allocation still live at exit, 1048576 bytes in 1 allocation retained by pools" "$WORK/err"; then
    ok "text: a leak beside a pool's segment: the leak listed and counted (exit 23), the segment apart, the summary by owner"
else bad "text with a leak and a pool (rc $rc)" "$WORK/err"; fi

# at exit the runtime's teardown has usually reclaimed the segments already:
# still retained by their pool, not leaks
guarded GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/rs.json" "$T/poolapp" "$FP" torch=1048576 leak=4096 reset=0; rc2=$?
guarded GPUMEM_EXITCODE=23 "$T/poolapp" "$FP" torch=1048576 cupy=2097152 reset=0; rc=$?
if [ $rc = 0 ] && has "Retained by pool PyTorch (not a leak): 1.0 MiB (1048576 bytes) in 1 allocation (1.0 MiB (1048576 bytes) in 1 of them reclaimed by context teardown)" "$WORK/err" \
   && has "Retained by pool CuPy (not a leak): 2.0 MiB (2097152 bytes)" "$WORK/err" && ! has "Reclaimed by context teardown (never freed" "$WORK/err" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit, 3145728 bytes in 2 allocations retained by pools" "$WORK/err" \
   && [ $rc2 = 23 ] && [ "$(jq_ "$WORK/rs.json" '[(g["bytes"], g.get("pool")) for g in r["reclaimed"]], r["totals"]["reclaimed_bytes"], r["totals"]["retained_bytes"]')" = "([(1048576, 'PyTorch'), (4096, None)], 4096, 1048576)" ]; then
    ok "segments reclaimed by context teardown are still retained by their pool (exit 0); a reclaimed leak still fails (23)"
else bad "reclaimed pool segments (rc $rc, $rc2)" "$WORK/err"; fi

# folded: a root frame per pool and per library
guarded GPUMEM_REPORT_FORMAT=folded "$T/poolapp" "$FP" nccl=65536 leak=393216 torch=1048576
if grep -qE '^\[pool PyTorch\];_start;.*;main;fake_torch;c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block\(unsigned_long\);cuMemAlloc_device0 1048576$' "$WORK/err" \
   && grep -qE '^\[NCCL\];_start;.*;main;fake_nccl;ncclCudaCalloc;cuMemAlloc_device0 65536$' "$WORK/err" \
   && grep -qE '^_start;.*;main;leak_plain;cuMemAlloc_device0 393216$' "$WORK/err"; then
    ok "folded: '[pool PyTorch];...' and '[NCCL];...' roots; the program's own lines unchanged"
else bad "folded owners" "$WORK/err"; fi

# GPUMEM_POOLS=off, and --pools off: every live allocation is a leak again
guarded GPUMEM_EXITCODE=23 GPUMEM_POOLS=off GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/off.json" "$T/poolapp" "$FP" torch=1048576; rc=$?
if [ $rc = 23 ] && [ "$(jq_ "$WORK/off.json" '[g.get("pool") for g in r["live"]], r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')" = "([None], 1048576, 0)" ]; then
    ok "GPUMEM_POOLS=off: a pool's segment is a leak (exit 23), no \"pool\" in JSON"
else bad "GPUMEM_POOLS=off (rc $rc)" "$WORK/off.json"; fi
env GPUMEM_EXITCODE=23 "$B/gpumemguard" --pools off -- "$T/poolapp" "$FP" torch=1048576 >"$WORK/out" 2>"$WORK/err"; rc=$?
env GPUMEM_EXITCODE=23 "$B/gpumemguard" --pools auto -- "$T/poolapp" "$FP" torch=1048576 >"$WORK/out2" 2>"$WORK/err2"; rc2=$?
if [ $rc = 23 ] && [ $rc2 = 0 ] && has "1048576 bytes in 1 allocation still live at exit" "$WORK/err" && has "retained by pools" "$WORK/err2"; then
    ok "gpumemguard --pools off: the segment is a leak (23); --pools auto: retained (0)"
else bad "--pools (rc $rc, $rc2)" "$WORK/err"; fi
guarded GPUMEM_POOLS=maybe "$T/poolapp" - leak=1; rc=$?
[ $rc = 2 ] && has "GPUMEM_POOLS='maybe' is not valid" "$WORK/err" && ok "GPUMEM_POOLS=maybe is refused at start-up" \
    || bad "bad GPUMEM_POOLS (rc $rc)" "$WORK/err"

# pool:PATTERN lines: a C program acting as a pool
printf '# our arena\npool:my_arena_grow\nleak:nothing_here\n' >"$WORK/sp"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/sp" GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/arena.json" "$T/poolapp" - arena=2097152 free=4096; rc=$?
guarded GPUMEM_EXITCODE=23 "$T/poolapp" - arena=2097152; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 23 ] && [ "$(jq_ "$WORK/arena.json" '[(g["owner"], g.get("pool")) for g in r["live"]], r["suppressions"]')" = "([('program', 'my_arena_grow')], [])" ]; then
    ok "pool:my_arena_grow: a C program's arena is retained by pool my_arena_grow (exit 0); without the line a leak (23)"
else bad "pool: line (rc $rc, $rc2)" "$WORK/arena.json"; fi
printf 'pool:my_arena_grow\n' >"$WORK/sp2"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/sp2" "$T/poolapp" - arena=2097152 leak=4096; rc=$?
[ $rc = 23 ] && has "Retained by pool my_arena_grow (not a leak): 2.0 MiB (2097152 bytes)" "$WORK/err" \
    && ok "pool: line beside a leak: the leak still fails the run (23)" || bad "pool: line and a leak (rc $rc)" "$WORK/err"
guarded GPUMEM_EXITCODE=23 GPUMEM_POOLS=off GPUMEM_SUPPRESSIONS="$WORK/sp2" "$T/poolapp" - arena=2097152; rc=$?
[ $rc = 23 ] && ok "GPUMEM_POOLS=off turns pool: lines off too (23)" || bad "GPUMEM_POOLS=off with pool: lines (rc $rc)" "$WORK/err"
printf 'pool:\n' >"$WORK/sp3"
guarded GPUMEM_SUPPRESSIONS="$WORK/sp3" "$T/poolapp" - leak=1; rc=$?
[ $rc = 2 ] && has "line 1" "$WORK/err" && ok "an empty pool: pattern stops the process at start-up, naming the line" \
    || bad "empty pool: line (rc $rc)" "$WORK/err"

# a pool's segment is never suppressed as a leak: it is counted as retained,
# not under "Suppressions used", even when a leak: line matches its stack too
printf 'leak:main\n' >"$WORK/sp4"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/sp4" "$T/poolapp" "$FP" torch=1048576 leak=4096; rc=$?
if [ $rc = 0 ] && has "Retained by pool PyTorch" "$WORK/err" && grep -qE "^ +1 +4096 main$" "$WORK/err"; then
    ok "a leak: line takes the leak; the pool's segment stays retained, not suppressed"
else bad "leak: and pool together (rc $rc)" "$WORK/err"; fi

# gpumemguard --tensors: every tensor to the driver, the user's PyTorch
# settings kept (their own backend replaced); nothing set without it
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "--tensors settings" "$GMG_SANITIZER build: the command would preload the guard into an uninstrumented shell"
else
    printf '#!/bin/sh\necho "P=${PYTORCH_CUDA_ALLOC_CONF-unset} T=${TF_GPU_ALLOCATOR-unset} X=${XLA_PYTHON_CLIENT_ALLOCATOR-unset}${PYTORCH_ALLOC_CONF+ A=$PYTORCH_ALLOC_CONF}"\n' >"$WORK/envdump"
    chmod +x "$WORK/envdump"
    t1=$("$B/gpumemguard" --tensors -- "$WORK/envdump" 2>&1)
    t2=$(env PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True, backend : native,max_split_size_mb:128" "$B/gpumemguard" --tensors -- "$WORK/envdump" 2>&1)
    t3=$(env PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6 "$B/gpumemguard" -- "$WORK/envdump" 2>&1)
    # PyTorch 2.9 and later read PYTORCH_ALLOC_CONF first: merged too when set
    t4=$(env PYTORCH_ALLOC_CONF="expandable_segments:True,backend:native" "$B/gpumemguard" --tensors -- "$WORK/envdump" 2>&1)
    if [ "$t1" = "P=backend:cudaMallocAsync T=cuda_malloc_async X=platform" ] \
       && [ "$t4" = "P=backend:cudaMallocAsync T=cuda_malloc_async X=platform A=backend:cudaMallocAsync,expandable_segments:True" ] \
       && [ "$t2" = "P=backend:cudaMallocAsync,expandable_segments:True,max_split_size_mb:128 T=cuda_malloc_async X=platform" ] \
       && [ "$t3" = "P=garbage_collection_threshold:0.6 T=unset X=unset" ]; then
        ok "--tensors: backend:cudaMallocAsync merged into the user's PYTORCH_CUDA_ALLOC_CONF (and PYTORCH_ALLOC_CONF when set), TF_GPU_ALLOCATOR, XLA_PYTHON_CLIENT_ALLOCATOR; nothing without it"
    else bad "--tensors: '$t1' / '$t2' / '$t3' / '$t4'"; fi
fi
"$B/gpumemguard" --help >"$WORK/out" 2>&1
has "--tensors" "$WORK/out" && has "--pools MODE" "$WORK/out" && ok "--help lists --tensors and --pools" || bad "--help: --tensors/--pools" "$WORK/out"

# ------------------------------------------------ the NVTX memory API
build nvtxpool tests/pools/nvtxpool.c -L"$B/sim" -l:libcuda.so.1
nv() { guarded NVTX_INJECTION64_PATH="$ROOT/$B/libgpumemguard.so" "$@"; }
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/nv.%p" "$T/nvtxpool" leak; rc=$?
j=$(ls "$WORK"/nv.*.json 2>/dev/null | head -1); t=${j%.json}.txt
# (the registering call's frames: NVTX's inline wrapper, then pool_hand_out, unless a compiler inlined the wrapper)
got=$([ -n "$j" ] && jq_ "$j" 'sorted((g["api"], g["bytes"], g["count"], g.get("pool"), [f.get("function") for f in g["frames"] if f.get("function") != "nvtxMemRegionsRegister"][0]) for g in r["live"]), [(h["pool"], h["segment_bytes"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')
want="([('cuMemAlloc', 8388608, 1, 'arena', 'arena_segment'), ('nvtxMemRegionsRegister', 1048576, 1, None, 'pool_hand_out'), ('nvtxMemRegionsRegister', 1048576, 1, None, 'pool_hand_out')], [('arena', 8388608, 2097152, 6291456)], 2097152, 6291456)"
if [ $rc = 23 ] && [ "$got" = "$want" ] && has "nvtxpool leak done; guard live 8388608" "$WORK/out" \
   && has "nvtxpool api: leaked 2097152 2097152, retained 6291456 6291456" "$WORK/out" \
   && has "nvtxpool since, no pools: 2097152 bytes in 2" "$WORK/out" \
   && grep -q "^Retained by pool arena (not a leak): 8.0 MiB (8388608 bytes) in 1 allocation" "$t" \
   && has "NVTX heap [" "$t" && has "2.0 MiB (2097152 bytes) in registered regions, 6.0 MiB (6291456 bytes) retained" "$t" \
   && grep -A3 "^Live allocations" "$t" | grep -q "(1048576 bytes) in 1 allocation (nvtxMemRegionsRegister, device 0)"; then
    ok "NVTX: a heap's segment is retained by pool arena; its regions still registered at exit are leaks (exit 23) with the registering call's stack; one unregistered, one resized; never counted; the public API's leaked and retained bytes the same, of every device and of device 0, and its bytes since a mark without pools the regions alone"
else bad "NVTX heap and regions (rc $rc): $got" "${t:-$WORK/err}"; fi
# the summary by owner counts the segment once (its regions lie in it); the
# groups at the peak are as in live[]: owner, and pool on the segment's
got=$([ -n "$j" ] && jq_ "$j" '[(o["owner"], o["bytes"], o["count"], o["retained_bytes"]) for o in r["owners"]], sorted((g["api"], g["owner"], g.get("pool")) for p in r["at_peak"] for g in p["groups"])')
want="([('program', 8388608, 1, 6291456)], [('cuMemAlloc', 'program', 'arena')])"
[ "$got" = "$want" ] && ok "NVTX: the summary by owner counts the heap's segment once (not its regions again); at the peak, groups carry owner and pool as in live[]" \
    || bad "NVTX owners / at_peak groups: $got" "$j"
# memviz: the heap's segment is one segment whose blocks are its regions
# (with the registering call's frames) and the room between them
# a heap's name is the program's: written as text, never a line of its own
nv NVTXPOOL_NAME="$(printf 'evil\n==1== SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit')" \
    GPUMEM_REPORT="$WORK/nvname.txt" "$T/nvtxpool" leak
if grep -q '^Retained by pool evil\\n==1== SUMMARY: gpumemguard: 0 bytes' "$WORK/nvname.txt" \
   && ! grep -q '^==1== SUMMARY' "$WORK/nvname.txt"; then
    ok "text: an NVTX heap's name holding a newline is written with \\n in the pool's section, no line of its own"
else bad "an NVTX heap's name with a newline" "$WORK/nvname.txt"; fi
# a name past 63 bytes is cut there, never through a UTF-8 character
nv NVTXPOOL_NAME="$(printf '%061d\360\237\216\211b' 0)" GPUMEM_REPORT_FORMAT=text GPUMEM_REPORT="$WORK/nvlong.txt" "$T/nvtxpool" leak
if grep -q "^Retained by pool $(printf '%061d' 0) " "$WORK/nvlong.txt" && iconv -f UTF-8 -t UTF-8 "$WORK/nvlong.txt" >/dev/null 2>&1; then
    ok "an NVTX heap's name of 66 bytes is its first 61, before a 4-byte character the cut would split: the report stays UTF-8"
else bad "a long NVTX heap name" "$WORK/nvlong.txt"; fi
# in folded stacks, a pool's name keeps its spaces; ';' and control characters become '_'
nv NVTXPOOL_NAME="$(printf 'a;b c\033d\te')" GPUMEM_REPORT_FORMAT=folded GPUMEM_REPORT="$WORK/nvf.folded" "$T/nvtxpool" leak
if grep -q '^\[pool a_b c_d_e\];' "$WORK/nvf.folded" && ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037]')" "$WORK/nvf.folded"; then
    ok "folded: a pool's name keeps its blanks, its ';', escape and tab written as '_'"
else bad "folded pool name with control characters" "$WORK/nvf.folded"; fi
nv GPUMEM_REPORT_FORMAT=memviz,json GPUMEM_REPORT="$WORK/nvm" "$T/nvtxpool" leak
got=$(python3 - "$WORK/nvm.pickle" <<'PY' 2>&1
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
for seg in s["segments"]:
    print(seg["total_size"], seg["allocated_size"], [(b["state"], b["address"] - seg["address"], b["size"],
          [f["name"] for f in b["frames"] if f["name"] != "nvtxMemRegionsRegister"][:1]) for b in seg["blocks"]])
PY
)
want="8388608 2097152 [('active_allocated', 0, 1048576, ['pool_hand_out']), ('inactive', 1048576, 3145728, []), ('active_allocated', 4194304, 1048576, ['pool_hand_out']), ('inactive', 5242880, 3145728, [])]"
if [ "$got" = "$want" ] && python3 tests/python/memviz_read.py "$WORK/nvm.pickle" "$WORK/nvm.json" >"$WORK/out" 2>&1; then
    ok "memviz: an NVTX heap's segment is one segment, its registered regions its blocks (the registering call's frames) and the room between them inactive"
else bad "memviz of NVTX regions: $got" "$WORK/out"; fi

# two heaps of one name: one pool, one section, both heaps in it
nv GPUMEM_REPORT_FORMAT=text GPUMEM_REPORT="$WORK/two.txt" "$T/nvtxpool" twoheaps
if [ "$(grep -c "^Retained by pool arena" "$WORK/two.txt")" = 1 ] \
   && has "Retained by pool arena (not a leak): 16.0 MiB (16777216 bytes) in 2 allocations" "$WORK/two.txt" \
   && [ "$(grep -c "^  NVTX heap \[" "$WORK/two.txt")" = 2 ] && has "nvtxpool api: leaked 2097152 2097152, retained 14680064 14680064" "$WORK/out"; then
    ok "NVTX: two heaps of one name are one pool: one section with both segments and both heaps"
else bad "NVTX: two heaps of one name" "$WORK/two.txt"; fi

# a pool named twice, by a pool: line and by an NVTX heap: one pool, one section
printf 'pool:zone\n' >"$WORK/zone.supp"
nv GPUMEM_SUPPRESSIONS="$WORK/zone.supp" GPUMEM_REPORT_FORMAT=text GPUMEM_REPORT="$WORK/zone.txt" "$T/nvtxpool" zone
if [ "$(grep -c "^Retained by pool zone" "$WORK/zone.txt")" = 1 ] \
   && has "Retained by pool zone (not a leak): 12.0 MiB (12582912 bytes) in 2 allocations" "$WORK/zone.txt"; then
    ok "a pool named by a pool: line and by an NVTX heap alike is one pool: one section with both segments"
else bad "one pool named twice" "$WORK/zone.txt"; fi

nv GPUMEM_METRICS="$WORK/nv.prom" GPUMEM_REPORT=none "$T/nvtxpool" leak
if grep -q '^gpumem_live_allocations{device="0",.*} 1$' "$WORK/nv.prom" && [ "$(grep -c '^gpumem_site_bytes{' "$WORK/nv.prom")" = 1 ]; then
    ok "NVTX: metrics count the segment, not its regions (1 live allocation, one call site)"
else bad "NVTX metrics" "$WORK/nv.prom"; fi
nv GPUMEM_EXITCODE=23 "$T/nvtxpool" clean; rc=$?
nv GPUMEM_EXITCODE=23 "$T/nvtxpool" reset; rc2=$?
nv GPUMEM_EXITCODE=23 "$T/nvtxpool" unreg; rc3=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ]; then
    ok "NVTX: every region unregistered, nvtxMemHeapReset, nvtxMemHeapUnregister then free: no leak (exit 0 each)"
else bad "NVTX clean/reset/unreg (rc $rc $rc2 $rc3)" "$WORK/err"; fi
# without stacks every cuMemAlloc is in one group (stack 0): the heap's
# segment alone leaves it for its pool; the 512 KiB beside it stays a leak
nv GPUMEM_STACK_DEPTH=0 GPUMEM_EXITCODE=23 "$T/nvtxpool" clean; rc=$?
nv GPUMEM_STACK_DEPTH=0 GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nv0" "$T/nvtxpool" quota; rc2=$?
got=$([ -f "$WORK/nv0" ] && jq_ "$WORK/nv0" 'sorted((g["api"], g["bytes"], g["count"], g.get("pool")) for g in r["live"]), r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')
want="([('cuMemAlloc', 524288, 1, None), ('cuMemAlloc', 8388608, 1, 'arena'), ('nvtxMemRegionsRegister', 2097152, 2, None)], 2621440, 6291456)"
if [ $rc = 0 ] && [ $rc2 = 23 ] && [ "$got" = "$want" ]; then
    ok "NVTX, stacks off: the heap's segment alone is retained (exit 0 when every region is unregistered); a cuMemAlloc beside it and the regions left are leaks (23)"
else bad "NVTX, stacks off (rc $rc $rc2): $got" "$WORK/err"; fi
nv GPUMEM_LIMIT=9M "$T/nvtxpool" quota; rc=$?
[ $rc = 0 ] && has "nvtxpool quota done; guard live 8912896" "$WORK/out" \
    && ok "NVTX: regions never count against the quota twice (8 MiB segment + 0.5 MiB under a 9 MiB limit)" \
    || bad "NVTX quota (rc $rc)" "$WORK/out"
nv "$T/nvtxpool" garbage; rc=$?
nw=$(grep -c "NVTX memory API" "$WORK/err")
if [ $rc = 0 ] && has "nvtxpool garbage done" "$WORK/out" && [ "$nw" -ge 3 ] && [ "$nw" -le 5 ] \
   && has "not registered (twice, or never)" "$WORK/err" && has "outside its heap" "$WORK/err" && has "of the v1 layout" "$WORK/err" \
   && [ "$(grep -c "outside its heap" "$WORK/err")" = 1 ]; then
    ok "NVTX: a double unregister, regions outside their heap, an unknown heap, garbage and NULL descriptors: one warning each kind, no crash"
else bad "NVTX garbage (rc $rc, $nw warnings)" "$WORK/err"; fi
# four threads registering and unregistering regions in heaps of their own,
# while heaps come and go beside them (the region calls take no lock)
# folded: every line adds into the total, so a heap's segment carries what
# its regions do not hold: the lines sum to the device's bytes in use
nv GPUMEM_REPORT_FORMAT=folded,json GPUMEM_REPORT="$WORK/nvf" "$T/nvtxpool" leak
fsum=$(awk '{s += $NF} END {print s}' "$WORK/nvf.folded" 2>/dev/null)
inuse=$(jq_ "$WORK/nvf.json" 'r["devices"][0]["in_use"]')
if [ -n "$fsum" ] && [ "$fsum" = "$inuse" ] && grep -q "^\[pool arena\].* 6291456$" "$WORK/nvf.folded"; then
    ok "folded: a heap's segment carries what its regions do not hold (6 MiB of 8): the lines sum to the bytes in use ($inuse)"
else bad "folded with NVTX regions: lines sum to $fsum, in use $inuse" "$WORK/nvf.folded"; fi

# a region resized past its heap's end keeps its size, with a warning
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvr.json" "$T/nvtxpool" resize_out; rc=$?
got=$(jq_ "$WORK/nvr.json" '[(h["pool"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["live_bytes"]')
if [ $rc = 23 ] && [ "$got" = "([('arena', 2097152, 6291456)], 2097152)" ] \
   && has "nvtxpool api: leaked 2097152 2097152, retained 6291456 6291456" "$WORK/out" \
   && has "a region resized past the end of its heap: it keeps its size" "$WORK/err"; then
    ok "NVTX: a region resized past its heap's end keeps its size, said once (not 64 MiB of leaks in an 8 MiB segment)"
else bad "NVTX: resize past the heap (rc $rc): $got" "$WORK/err"; fi

# a heap inside another: each region moves its own heap's bytes, and a
# heap unregistered takes its own regions only
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvn.json" "$T/nvtxpool" nested; rc=$?
got=$(jq_ "$WORK/nvn.json" '[(h["pool"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["live_bytes"]')
if [ $rc = 23 ] && [ "$got" = "([('arena', 2621440, 5767168)], 2621440)" ] && ! has "NVTX memory API" "$WORK/err" \
   && has "nvtxpool api: leaked 2621440 2621440, retained 5767168 5767168" "$WORK/out"; then
    ok "NVTX: a heap inside another: a region unregistered moves its own heap's bytes, the inner heap's unregister leaves the outer's region"
else bad "NVTX: nested heaps (rc $rc): $got" "$WORK/err"; fi

# a block of the outer heap handed to an inner heap over it: the inner
# heap's region at the block's address covers the block's without taking
# it out; when it goes (unregistered, or with its heap) the block is there
for c in block blockheap; do
    nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvb.json" "$T/nvtxpool" $c; rc=$?
    got=$(jq_ "$WORK/nvb.json" '[(h["pool"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["live_bytes"], sorted((g["api"], g["bytes"], g["count"]) for g in r["live"])')
    want="([('arena', 4194304, 4194304)], 4194304, [('cuMemAlloc', 8388608, 1), ('nvtxMemRegionsRegister', 1048576, 1), ('nvtxMemRegionsRegister', 1048576, 1), ('nvtxMemRegionsRegister', 2097152, 1)])"
    if [ $rc = 23 ] && [ "$got" = "$want" ] && ! has "NVTX memory API" "$WORK/err" \
       && has "nvtxpool api: leaked 4194304 4194304, retained 4194304 4194304" "$WORK/out"; then
        ok "NVTX ($c): a block of arena's handed to a heap over it, whose region at the block's address comes and goes: arena's 2 MiB block is still a leak (4 MiB with its other regions), no warning"
    else bad "NVTX: nested heap at a region's address ($c, rc $rc): $got" "$WORK/err"; fi
done

# two heaps at one address: a region goes to the one that holds it
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvsa.json" "$T/nvtxpool" sameaddr; rc=$?
got=$(jq_ "$WORK/nvsa.json" 'sorted((h["name"], h["pool"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]), r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')
if [ $rc = 23 ] && [ "$got" = "([('arena', 'arena', 3145728, 5242880), ('head', 'arena', 0, 0)], 3145728, 5242880)" ] \
   && ! has "NVTX memory API" "$WORK/err"; then
    ok "NVTX: two heaps at one address (one handle): a region goes to the latest that holds it; the segment is the first heap's pool's, retained once"
else bad "NVTX: two heaps at one address (rc $rc): $got" "$WORK/err"; fi
# ... and with stacks off, where the segment leaves the group of every
# cuMemAlloc for its pool's: once, so the program's 8 MiB stays a leak
nv GPUMEM_STACK_DEPTH=0 GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvsl.json" "$T/nvtxpool" sameleak; rc=$?
got=$(jq_ "$WORK/nvsl.json" 'sorted((g["api"], g["bytes"], g["count"], g.get("pool") or "-") for g in r["live"]), r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')
want="([('cuMemAlloc', 8388608, 1, '-'), ('cuMemAlloc', 8388608, 1, 'arena'), ('nvtxMemRegionsRegister', 3145728, 3, '-')], 11534336, 5242880)"
if [ $rc = 23 ] && [ "$got" = "$want" ] && has "nvtxpool api: leaked 11534336 11534336, retained 5242880 5242880" "$WORK/out" \
   && has "nvtxpool since, no pools: 11534336 bytes in 4" "$WORK/out"; then
    ok "NVTX, stacks off: a segment under two heaps leaves the leaks once: the program's 8 MiB beside it stays a leak"
else bad "NVTX, stacks off, two heaps over one segment (rc $rc): $got" "$WORK/out"; fi

# segments of one call site made from three call addresses (one source
# line): one site, one pool, as the report's groups are by site
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "NVTX: one site, several call addresses" "no file:line for clang-built programs (known symbolizer gap, see reports.sh): each address is a site"
else
    nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json,text GPUMEM_REPORT="$WORK/nvl" "$T/nvtxpool" oneline; rc=$?
    got=$(jq_ "$WORK/nvl.json" 'r["totals"]["retained_bytes"], sorted((h["name"], h["pool"], h["retained_bytes"]) for h in r["heaps"]), sorted(g.get("pool") or "-" for g in r["live"])')
    want="(8912896, [('arena', 'arena', 6291456), ('first', 'first', 1048576), ('later', 'first', 524288)], ['-', '-', '-', 'arena', 'first'])"
    if [ $rc = 23 ] && [ "$got" = "$want" ] && has "nvtxpool api: leaked 2621440 2621440, retained 8912896 8912896" "$WORK/out" \
       && has "nvtxpool since, no pools: 2621440 bytes in 3" "$WORK/out" && [ "$(grep -c "^  NVTX heap \[" "$WORK/nvl.txt")" = 3 ]; then
        ok "NVTX: segments of one call site from several call addresses are one pool; report, public API and since agree"
    else bad "NVTX: one site, several call addresses (rc $rc): $got" "$WORK/out"; fi
fi
# reports built on four threads at once (the public API's), with many heaps
nv GPUMEM_REPORT=none "$T/nvtxpool" queries; rc=$?
[ $rc = 0 ] && has "nvtxpool api: leaked 2097152 2097152, retained 6291456 6291456" "$WORK/out" \
    && ok "NVTX: four threads asking for the leaked bytes at once, 2000 heaps live: each builds its report, no crash" \
    || bad "NVTX: reports on four threads at once (rc $rc)" "$WORK/err"

# two heaps of other names over segments of one call site: one pool (a
# report groups by stack), both heaps listed in it, each region's bytes out
# of what is retained once, in the totals, the summary by owner and folded
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json,text,folded GPUMEM_REPORT="$WORK/nvo" "$T/nvtxpool" other; rc=$?
got=$(jq_ "$WORK/nvo.json" 'sorted((h["name"], h["pool"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]), r["totals"]["retained_bytes"], [(o["owner"], o["retained_bytes"]) for o in r["owners"]], r["devices"][0]["in_use"]')
want="([('arena', 'arena', 2097152, 6291456), ('other', 'arena', 2097152, 6291456)], 12582912, [('program', 12582912)], 16777216)"
fsum=$(awk '{s += $NF} END {print s}' "$WORK/nvo.folded" 2>/dev/null)
if [ $rc = 23 ] && [ "$got" = "$want" ] && [ "$fsum" = 16777216 ] && [ "$(grep -c "^  NVTX heap \[" "$WORK/nvo.txt")" = 2 ] \
   && has "Retained by pool arena (not a leak): 16.0 MiB (16777216 bytes) in 2 allocations" "$WORK/nvo.txt" \
   && has "nvtxpool api: leaked 4194304 4194304, retained 12582912 12582912" "$WORK/out"; then
    ok "NVTX: heaps of two names over segments of one call site: one pool with both heaps; regions out of the retained bytes once (totals, owners, folded sum to the bytes in use)"
else bad "NVTX: two names at one call site (rc $rc, folded $fsum): $got" "$WORK/nvo.txt"; fi

# a dump's timeline mark: the bytes live then, each once (a region lies in its segment)
nv GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvd.%p.json" "$T/nvtxpool" dump; rc=$?
j=$(grep -l '"trigger": *"exit"' "$WORK"/nvd.*.json 2>/dev/null | head -1)
got=$([ -n "$j" ] && jq_ "$j" '[(e["kind"], e["bytes"]) for e in r["timeline"]["events"] if e["kind"] == "dump"]')
if [ $rc = 0 ] && [ "$got" = "[('dump', 8388608)]" ] && ! has "FAIL" "$WORK/out"; then
    ok "NVTX: a dump's timeline mark counts the segment's 8 MiB once, not its regions again"
else bad "NVTX: the dump mark's bytes (rc $rc): $got" "$WORK/out"; fi

# a virtual-address heap's handle is its address (nvToolsExtMem.h)
nv GPUMEM_EXITCODE=23 "$T/nvtxpool" byaddr; rc=$?
if [ $rc = 23 ] && has "nvtxpool heap handle is its address: yes" "$WORK/out" && ! has "NVTX memory API" "$WORK/err" \
   && has "nvtxpool api: leaked 3145728 3145728, retained 5242880 5242880" "$WORK/out"; then
    ok "NVTX: nvtxMemHeapRegister returns the heap's address, and a region registered in the heap named by its address is its"
else bad "NVTX: heap by address (rc $rc)" "$WORK/err"; fi

# memviz: a heap's segment with no region registered is the pool's cached
# room (inactive); a heap over mapped physical memory (expandable segments)
# is a segment too; torch's segment_pool_id and allocator_settings are there
nv GPUMEM_REPORT_FORMAT=memviz,json GPUMEM_REPORT="$WORK/nvmc" "$T/nvtxpool" clean
cp "$WORK/nvmc.pickle" "$WORK/nvmc.keep.pickle"; cp "$WORK/nvmc.json" "$WORK/nvmc.keep.json"
nv GPUMEM_REPORT_FORMAT=memviz,json GPUMEM_REPORT="$WORK/nvmv" "$T/nvtxpool" vmm
got=$(python3 - "$WORK/nvmc.keep.pickle" "$WORK/nvmv.pickle" <<'PY' 2>&1
import pickle, sys
for f in sys.argv[1:]:
    s = pickle.load(open(f, "rb"))
    print(s["allocator_settings"], [(seg["total_size"], seg["is_expandable"], seg["segment_pool_id"], seg["allocated_size"],
           [(b["state"], b["size"]) for b in seg["blocks"]]) for seg in s["segments"]])
PY
)
want="{} [(8388608, False, (0, 0), 0, [('inactive', 8388608)])]
{} [(4194304, True, (0, 0), 0, [('inactive', 4194304)])]"
if [ "$got" = "$want" ] && python3 tests/python/memviz_read.py "$WORK/nvmc.keep.pickle" "$WORK/nvmc.keep.json" >"$WORK/out" 2>&1 \
   && python3 tests/python/memviz_read.py "$WORK/nvmv.pickle" "$WORK/nvmv.json" >>"$WORK/out" 2>&1; then
    ok "memviz: a heap's segment with no region is the pool's room (inactive); a heap over mapped memory is an expandable segment; segment_pool_id and allocator_settings as torch writes them"
else bad "memviz of a pool's empty segment and of a heap over mapped memory: $got" "$WORK/out"; fi

# memviz: regions left outside any allocation (their segment freed) are
# segments of their own in their place: by device, then address
nv GPUMEM_REPORT_FORMAT=memviz GPUMEM_REPORT="$WORK/orph.pickle" "$T/nvtxpool" orphan
got=$(python3 -c '
import pickle, sys
segs = pickle.load(open(sys.argv[1], "rb"))["segments"]
keys = [(s["device"], s["address"]) for s in segs]
print(len(segs), keys == sorted(keys))' "$WORK/orph.pickle" 2>&1)
if [ "$got" = "3 True" ]; then
    ok "memviz: regions left outside any allocation are segments in their place, by device then address"
else bad "memviz order with orphaned regions: $got" "$WORK/err"; fi

# a segment freed under its heap, still registered: no segment, nothing retained
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvs.json" "$T/nvtxpool" segfree; rc=$?
got=$(jq_ "$WORK/nvs.json" '[(h["pool"], h["segment_bytes"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')
if [ $rc = 0 ] && [ "$got" = "([('arena', 0, 0, 0)], 0, 0)" ] \
   && [ "$(grep -c "an allocation was freed while a heap in it was still registered" "$WORK/err")" = 1 ]; then
    ok "NVTX: a segment freed while its heap is registered: the heap keeps no segment and nothing retained, said once"
else bad "NVTX: segment freed under its heap (rc $rc): $got" "$WORK/err"; fi

# a heap over cuMemCreate + cuMemMap memory: the physical handle is its segment
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvv.json" "$T/nvtxpool" vmm; rc=$?
got=$(jq_ "$WORK/nvv.json" '[(h["pool"], h["segment_bytes"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["live_bytes"], r["totals"]["retained_bytes"]')
if [ $rc = 0 ] && [ "$got" = "([('vmmpool', 4194304, 0, 4194304)], 0, 4194304)" ] && ! has "NVTX memory API" "$WORK/err"; then
    ok "NVTX: a heap over cuMemCreate + cuMemMap memory makes the physical allocation its pool's segment (retained, no leak: exit 0)"
else bad "NVTX: heap over mapped memory (rc $rc): $got" "$WORK/err"; fi
nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvvr.json" "$T/nvtxpool" vmmrel; rc=$?
cp "$WORK/err" "$WORK/nvvr.err"
got=$(jq_ "$WORK/nvvr.json" '[(h["pool"], h["segment_bytes"], h["retained_bytes"]) for h in r["heaps"]], r["totals"]["retained_bytes"]')
nv GPUMEM_REPORT=none "$T/nvtxpool" vmmtwo; rc2=$?
if [ $rc = 0 ] && [ "$got" = "([('vmmpool', 0, 0)], 0)" ] \
   && has "an allocation was freed while a heap in it was still registered" "$WORK/nvvr.err" \
   && [ $rc2 = 0 ] && has "a heap reaches past the allocation (or mapping) it starts in" "$WORK/err"; then
    ok "NVTX: a heap's mapped memory unmapped and released under it: no segment, nothing retained, said; a heap over two mappings is said to have the first as its segment"
else bad "NVTX: mapped memory under a heap released (rc $rc: $got), or a heap over two mappings (rc $rc2)" "$WORK/nvvr.err"; fi

nv GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/nvt" "$T/nvtxpool" threads; rc=$?
got=$([ -f "$WORK/nvt" ] && jq_ "$WORK/nvt" 'sorted((h["name"], h["segment_bytes"], h["region_bytes"], h["retained_bytes"]) for h in r["heaps"]), sorted((g["api"], g["bytes"], g["count"]) for g in r["live"])')
want="([('t0', 1048576, 12288, 1036288), ('t1', 1048576, 12288, 1036288), ('t2', 1048576, 12288, 1036288), ('t3', 1048576, 12288, 1036288)], [('cuMemAlloc', 4194304, 4), ('nvtxMemRegionsRegister', 49152, 12)])"
if [ $rc = 23 ] && [ "$got" = "$want" ] && has "nvtxpool threads done; guard live 4194304" "$WORK/out" && ! has "NVTX memory API" "$WORK/err"; then
    ok "NVTX from four threads while heaps come and go: each heap's region bytes exact (3 regions of 4 KiB), the 12 regions kept the only leaks"
else bad "NVTX threads (rc $rc): $got" "$WORK/err"; fi
nv GPUMEM_EXITCODE=23 GPUMEM_POOLS=off "$T/nvtxpool" clean; rc=$?
[ $rc = 23 ] && ! has "nvtxMemRegionsRegister" "$WORK/err" && has "(8388608 bytes) in 1 allocation" "$WORK/err" \
    && ok "NVTX under GPUMEM_POOLS=off: not attached; the segment is a leak (23)" || bad "NVTX, pools off (rc $rc)" "$WORK/err"
# the command sets NVTX_INJECTION64_PATH unless the user did
guarded GPUMEM_EXITCODE=23 "$T/nvtxpool" clean; rc3=$?
env GPUMEM_EXITCODE=23 "$B/gpumemguard" -- "$T/nvtxpool" clean >"$WORK/out" 2>"$WORK/err"; rc=$?
env GPUMEM_EXITCODE=23 NVTX_INJECTION64_PATH=/nonexistent/libtool.so "$B/gpumemguard" -- "$T/nvtxpool" clean >"$WORK/out2" 2>"$WORK/err2"; rc2=$?
if [ $rc = 0 ] && has "Retained by pool arena" "$WORK/err" && [ $rc2 = 23 ] && ! has "pool arena" "$WORK/err2" && [ $rc3 = 23 ]; then
    ok "the command sets NVTX_INJECTION64_PATH to the guard (exit 0: heap seen); a user's own path is kept (not seen: 23)"
else bad "NVTX_INJECTION64_PATH (rc $rc $rc2 $rc3)" "$WORK/err"; fi
# a descendant that drops LD_PRELOAD loads the guard through NVTX only: it
# sees none of the program's calls, so it says so and claims no clean run
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "the guard loaded only through NVTX_INJECTION64_PATH" "TSan: the command preloads the instrumented library into sh, which cannot load it"
else
    env GPUMEM_EXITCODE=23 "$B/gpumemguard" -- sh -c 'env -u LD_PRELOAD "$0" clean' "$T/nvtxpool" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "loaded without LD_PRELOAD" "$WORK/err" && has "tracks nothing and writes no report" "$WORK/err" \
       && ! has "SUMMARY: gpumemguard" "$WORK/err" && ! has "NVTX memory API" "$WORK/err"; then
        ok "the guard loaded only through NVTX_INJECTION64_PATH (no LD_PRELOAD): says it sees none of the program's calls, writes no report, takes no NVTX heap on"
    else bad "the guard loaded late through NVTX (rc $rc)" "$WORK/err"; fi
fi

# ------------------------------------------- stream-ordered pools: retained
build asyncpool tests/pools/asyncpool.c -L"$B/sim" -l:libcuda.so.1
guarded GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/ap.%p" "$T/asyncpool" keep; rc=$?
j=$(ls "$WORK"/ap.*.json 2>/dev/null | head -1); t=${j%.json}.txt
got=$([ -n "$j" ] && jq_ "$j" '[(p["device"], p["reserved_bytes"], p["used_bytes"], p["retained_bytes"], p["release_threshold"]) for p in r["stream_pools"]]')
if [ $rc = 23 ] && has "keep: guard 1048576 retained 3145728" "$WORK/out" && [ "$got" = "[(0, 4194304, 1048576, 3145728, 18446744073709551615)]" ] \
   && grep -q "^Stream-ordered pool 0x[0-9a-f]*, device 0: 4.0 MiB (4194304 bytes) reserved, 1.0 MiB (1048576 bytes) in use: 3.0 MiB (3145728 bytes) retained by the pool" "$t"; then
    ok "stream-ordered pool: what the driver reserves beyond what is in use is shown as retained (3 MiB); the live 1 MiB is a leak (23)"
else bad "stream-ordered pool retained (rc $rc): $got" "${t:-$WORK/err}"; fi
# a fork child's report: the parent's pools are not its own (nor asked about)
guarded GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/apf.%p" "$T/asyncpool" fork; rc=$?
cpid=$(sed -n 's/^fork: child \([0-9]*\) exited 0$/\1/p' "$WORK/out")
ppid_=$(ls "$WORK"/apf.* 2>/dev/null | grep -v "apf.$cpid$" | head -1)
gotc=$([ -n "$cpid" ] && jq_ "$WORK/apf.$cpid" 'len(r["stream_pools"])')
gotp=$([ -n "$ppid_" ] && jq_ "$ppid_" 'len(r["stream_pools"])')
if [ $rc = 0 ] && [ "$gotc" = 0 ] && [ "$gotp" = 1 ]; then
    ok "a fork child's report lists none of its parent's stream-ordered pools (the parent's lists its own)"
else bad "fork child and the parent's pools (rc $rc, child '$cpid' lists '$gotc', parent '$gotp')" "$WORK/out"; fi
guarded GPUMEM_LIMIT=8M "$T/asyncpool" quota; rc=$?
if [ $rc = 0 ] && has "quota: retained before 6291456; cuMemAlloc 0; guard 6291456 retained 0" "$WORK/out"; then
    ok "under GPUMEM_LIMIT=8M a pool keeping 6 MiB freed is trimmed before a 6 MiB request: requests + retained stay within the limit"
else bad "quota and retained pool memory (rc $rc)" "$WORK/out"; fi
guarded GPUMEM_LIMIT=8M "$T/asyncpool" quotafree; rc=$?
if [ $rc = 0 ] && has "quota: retained before 6291456; cuMemAlloc 0; guard 6291456 retained 0" "$WORK/out"; then
    ok "the same with the 6 MiB freed by cuMemFree (into its pool too): trimmed before the 6 MiB request"
else bad "quota and pool memory freed by cuMemFree (rc $rc)" "$WORK/out"; fi
# more pools than a fixed list would hold: every one trimmed, every one listed
guarded GPUMEM_LIMIT=100M GPUMEM_REPORT=none "$T/asyncpool" many; rc=$?
mv "$WORK/out" "$WORK/apm.out"
guarded ASYNCPOOL_NO_ALLOC=1 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/apm.json" "$T/asyncpool" many; rc2=$?
got=$(jq_ "$WORK/apm.json" 'len(r["stream_pools"]), sum(p["retained_bytes"] for p in r["stream_pools"])')
if [ $rc = 0 ] && has "many: retained before 104857600; cuMemAlloc 0; retained after 0" "$WORK/apm.out" && [ $rc2 = 0 ] \
   && [ "$got" = "(100, 104857600)" ]; then
    ok "100 stream-ordered pools keeping 1 MiB each: under GPUMEM_LIMIT=100M all are trimmed before a 90 MiB request; a report lists all 100"
else bad "many stream-ordered pools (rc $rc $rc2): $got" "$WORK/apm.out"; fi
# managed memory from a managed pool counts against the limit: the pool is trimmed too
guarded GPUMEM_LIMIT=64M GPUMEM_REPORT=none "$T/asyncpool" managed; rc=$?
if [ $rc = 0 ] && has "managed: reserved before 50331648; allocated 0; reserved after 41943040" "$WORK/out"; then
    ok "under GPUMEM_LIMIT=64M a managed pool keeping 48 MiB freed is trimmed before a 40 MiB managed request from it (40 MiB reserved after, not 88)"
else bad "a managed pool under the limit (rc $rc)" "$WORK/out"; fi
# pools of pinned host and of managed memory are listed with the device's
guarded GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/apk" "$T/asyncpool" kinds; rc=$?
got=$(jq_ "$WORK/apk.json" 'sorted((p["memory"], p["device"], p["retained_bytes"]) for p in r["stream_pools"])')
if [ $rc = 0 ] && has "kinds: 8388608 4194304 2097152" "$WORK/out" \
   && [ "$got" = "[('device', 0, 2097152), ('host', -1, 8388608), ('managed', 0, 4194304)]" ] \
   && grep -q "^Stream-ordered pool 0x[0-9a-f]*, pinned host memory: 8.0 MiB (8388608 bytes) reserved" "$WORK/apk.txt" \
   && grep -q "^Stream-ordered pool 0x[0-9a-f]*, managed memory, device 0 preferred: 4.0 MiB (4194304 bytes) reserved" "$WORK/apk.txt" \
   && grep -q "^Stream-ordered pool 0x[0-9a-f]*, device 0: 2.0 MiB (2097152 bytes) reserved" "$WORK/apk.txt"; then
    ok "stream-ordered pools of pinned host memory (8 MiB retained) and of managed memory (4 MiB) are listed beside the device's (2 MiB), with their memory in JSON"
else bad "pools of host and managed memory in reports (rc $rc): $got" "$WORK/apk.txt"; fi
guarded "$T/asyncpool" quota; rc=$?
has "quota: retained before 6291456; cuMemAlloc 0; guard 6291456 retained 6291456" "$WORK/out" \
    && ok "without a limit the pool keeps what it retains (no trim)" || bad "no limit, no trim (rc $rc)" "$WORK/out"

# the public API: leaked and retained bytes, as the exit report counts them
printf 'leak:leak_plain\n' >"$WORK/sq"
guarded POOLAPP_QUERY=1 GPUMEM_SUPPRESSIONS="$WORK/sq" "$T/poolapp" "$FP" torch=1048576 leak=393216 rmm=2097152
mv "$WORK/out" "$WORK/out2"
guarded POOLAPP_QUERY=1 "$T/poolapp" "$FP" torch=1048576 leak=393216 free=4096 rmm=2097152; rc=$?
if [ $rc = 0 ] && has "query: leaked 393216 retained 3145728; device 0: 393216 3145728; device 1: 0 0" "$WORK/out" \
   && has "query: leaked 0 retained 3145728;" "$WORK/out2"; then
    ok "gpumemguard_leaked_bytes / gpumemguard_retained_bytes: leaks apart from pools' segments, per device; suppressed leaks left out"
else bad "public API leaked/retained (rc $rc)" "$WORK/out"; fi
guarded POOLAPP_QUERY=1 GPUMEM_POOLS=off "$T/poolapp" "$FP" torch=1048576 leak=393216
has "query: leaked 1441792 retained 0;" "$WORK/out" && ok "the public API under GPUMEM_POOLS=off: every live allocation leaked" \
    || bad "public API, pools off" "$WORK/out"

# a Python client: ctypes' frames are glue, its Python frame's file names the owner
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "a Python client's owner" "$GMG_SANITIZER build: the interpreter is not instrumented"
elif python3 -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null; then
    guarded GPUMEM_EXITCODE=23 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/py.json" python3 "$ROOT/tests/pools/numba/driver.py"; rc=$?
    got=$(jq_ "$WORK/py.json" '[(g["owner"], g.get("pool"), g["bytes"], g["frames"][0]["lang"], g["frames"][0]["function"]) for g in r["live"]], [o["owner"] for o in r["owners"]]')
    if [ $rc = 23 ] && [ "$got" = "([('numba', None, 3145728, 'python', 'memalloc')], ['numba'])" ]; then
        ok "a Python client through ctypes: owner numba from its Python frame's file; a leak (23)"
    else bad "Python client owner (rc $rc): $got" "$WORK/py.json"; fi
else skip "a Python client's owner" "python3 is not CPython 3.10-3.13"; fi
