# tests/unwind/unwind.sh - sourced by tests/run.sh: the fast stack walker
# (core/unwind.c) against libunwind on the same calls. GMG_UNWIND_CHECK=1
# makes every capture walk its stack both ways and print any difference,
# and at exit how many walks were compared, how many differed and how many
# the fast walker left to libunwind (tests/unwind/unwindtest.c).
U=$T/unwind
mkdir -p "$U"
ucc() { $CC -std=gnu11 -g -Wall -Wextra -Werror $SAN_FLAGS -I"$CUDA_INC" -Itests/unwind "$@" || exit 1; }
ucc -O2 -fomit-frame-pointer -fPIC -shared -o "$U/libunwmix.so" tests/unwind/unwmix.c
ucc -O2 -fomit-frame-pointer -fPIC -shared -DFRAME=4096 -o "$U/libunwA.so" tests/unwind/unwab.c
ucc -O2 -fomit-frame-pointer -fPIC -shared -DFRAME=8192 -o "$U/libunwB.so" tests/unwind/unwab.c
ucc -O1 -fPIC -shared -pthread -o "$U/libunwthr.so" tests/unwind/unwthr.c
ucc -O1 -fno-omit-frame-pointer -rdynamic -o "$U/unwindtest" tests/unwind/unwindtest.c \
    -L"$U" -lunwmix -lunwthr -Wl,-rpath,"$ROOT/$U" -L"$B/sim" -l:libcuda.so.1 -ldl -lpthread

# unwcase NAME: run one case checked; true when it ran, walks were compared
# fast, none differed. "fast": the least number of walks compared.
unwcase() {
    guarded GMG_UNWIND_CHECK=1 GPUMEM_REPORT=stderr "$U/unwindtest" "$@" "$ROOT/$U" \
        && has "done $1" "$WORK/out" && ! has "differs from libunwind" "$WORK/err" \
        && grep -q "unwind check: [1-9][0-9]* walks compared, 0 differ" "$WORK/err"
}
ucount() { sed -n 's/.*unwind check: \(.*\)/\1/p' "$WORK/err" | tail -1; }

if unwcase mixed && leak leaf_alloc 4096 cuMemAlloc \
   && [ "$(before_peak "$WORK/err" | grep -m1 -A40 -F "(4096 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" | grep -c " in nofp_level ")" = 15 ] \
   && [ "$(before_peak "$WORK/err" | grep -m1 -A40 -F "(4096 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" | grep -c " in fp_level ")" = 16 ]; then
    ok "fast stacks = libunwind's through code with and without frame pointers mixed, 1 to 48 deep ($(ucount)); 32 frames kept of 41, alternating"
else bad "fast walk vs libunwind, mixed frame pointers" "$WORK/err"; fi

if unwcase hostile && [ "$(grep -c "in garbage_rbp_call\|in fake_frame_call" "$WORK/err")" -ge 2 ] \
   && ! grep -q "differs" "$WORK/err"; then
    ok "hand-made hostile frames (rbp garbage, rbp at a fake frame, code without unwind information): no crash, the same stacks as libunwind's, the real callers named ($(ucount))"
else bad "fast walk vs libunwind, hostile frames" "$WORK/err"; fi

if guarded GMG_UNWIND_CHECK=1 GPUMEM_REPORT=stderr "$U/unwindtest" signal && has "done signal" "$WORK/out" \
   && ! has "differs" "$WORK/err" && [ "$(grep -A12 -F "(4096 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" "$WORK/err" | grep -c " in signal_outer ")" -ge 2 ]; then
    ok "allocations in signal handlers (on the thread's stack and on a sigaltstack): walked through the signal frame to the interrupted caller, as libunwind does ($(ucount))"
else bad "fast walk vs libunwind, signal frames" "$WORK/err"; fi

if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a library unloaded and another mapped in its place" "TSan: a ThreadSanitizer program's own dlclose interceptor calls the C library's, past the guard's"
elif unwcase dlclose && leak leaf_alloc 4096 cuMemAlloc && grep -q " in lib_alloc .*(libunwB.so+" "$WORK/err" \
   && grep -q " in lib_alloc .*(libunwA.so+.*, unloaded)" "$WORK/err" \
   && awk -v RS= '/libunwB.so/' "$WORK/err" | grep -q " in main .*unwindtest"; then
    ok "a library unloaded and another mapped in its place ($(grep -c ' at ' "$WORK/out") loads: $(grep -o 'at 0x[0-9a-f]*' "$WORK/out" | tr '\n' ' ')): no rule of the first applied to the second ($(ucount))"
else bad "fast walk vs libunwind, dlclose" "$WORK/err"; fi

if unwcase threads && has "(16384 bytes) in 4 allocations (cuMemAlloc, device 0)" "$WORK/err" \
   && grep -q " in thread_body " "$WORK/err" && grep -q " in run .*(libunwthr.so+" "$WORK/err"; then
    ok "threads started by a library: their stacks walked fast to the library's thread start, as libunwind's ($(ucount))"
else bad "fast walk vs libunwind, threads from a library" "$WORK/err"; fi

# the walker's memo of its last walk: twin callers reach the allocation at
# one stack and frame pointer, so each walk starts where the other's did;
# their stacks differ in one return address (the allocation's caller, or
# the frame beyond it), and every allocation keeps its own
twins() {
    local k=$1 caller=$2
    grep -A3 -F "($((k * 4096)) bytes) in $k allocations (cuMemAlloc, device 0) allocated from:" "$WORK/err" \
        | grep -q " in $caller "
}
if unwcase twins && guarded GPUMEM_REPORT=stderr "$U/unwindtest" twins && has "done twins" "$WORK/out" \
   && twins 3 twin_a && twins 5 twin_b && twins 2 twin_deep_a && twins 4 twin_deep_b \
   && twins 6 nofp_site_small && twins 7 nofp_site_big; then
    ok "a walk starting where the last one did, one return address apart (the caller, or one further out), or with one frame pointer at another stack pointer: each allocation keeps its own stack, as libunwind's"
else bad "the walk's memo: twin callers" "$WORK/err"; fi

# runs of one call site after another, without the check mode (whose own
# walks would rewrite the memo): a run's later captures are given the
# thread's last capture again, and each allocation still keeps its own stack
# (GMG_STACK_STATS=1 counts the captures given so)
if guarded GMG_STACK_STATS=1 GPUMEM_REPORT=stderr "$U/unwindtest" runs && has "done runs" "$WORK/out" \
   && twins 11 twin_a && twins 13 twin_b && twins 8 twin_deep_a && twins 9 twin_deep_b \
   && grep -q "stacks: [0-9]* captures, [1-9][0-9]* given the thread's last capture" "$WORK/err"; then
    ok "runs of allocations from one call site after another, each run's first kept, then freed and kept in turn: each allocation keeps its own stack ($(sed -n "s/.*stacks: //p" "$WORK/err"))"
else bad "the thread's last capture: runs of call sites" "$WORK/err"; fi


# where little stack is left (a handler on an alternate stack of SIGSTKSZ, a
# thread of 16 KiB through code without unwind information): libunwind's
# walk runs on the guard's own walk stack, so no walk runs off the program's;
# the handler's stack goes on past its signal frame to main, and the
# thread's ends at the stub without unwind information (nothing guessed)
build shortstack tests/unwind/shortstack.c -L"$B/sim" -l:libcuda.so.1
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "allocations on a short stack" "a $GMG_SANITIZER build takes several times the stack itself: sized for the release build"
else
    ss_bad=""
    for c in "alt 8192" "alt 16384" "thread 16384" "altlocal 8192"; do
        guarded GPUMEM_REPORT=stderr "$T/shortstack" $c; rc=$?
        m=${c% *}; [ "$m" = altlocal ] && m=alt
        if [ $m = alt ]; then
            frames() { grep -A12 "(4001 bytes) in 1 allocation" "$WORK/err" | grep -q " in on_usr1 " \
                       && grep -A12 "(4001 bytes) in 1 allocation" "$WORK/err" | grep -q " in main "; }
        else
            frames() { grep -A3 "(3001 bytes) in 1 allocation" "$WORK/err" | grep -q " in thread_alloc " \
                       && ! grep -A12 "(3001 bytes) in 1 allocation" "$WORK/err" | grep -q " in thread_main "; }
        fi
        { [ $rc = 0 ] && has "shortstack $m allocated" "$WORK/out" && has "shortstack done" "$WORK/out" && frames \
          && ! has "Some call stacks or Python frames were not kept" "$WORK/err"; } || ss_bad="$ss_bad [$c: rc $rc]"
    done
    [ -z "$ss_bad" ] && ok "a stack with little room left (a handler on an 8 or 16 KiB alternate stack, one inside the thread's own stack, a 16 KiB thread): no crash, the allocation and its stack kept, walked on the guard's own stack; through code without unwind information, the stack ends there" \
        || bad "allocations on a short stack:$ss_bad" "$WORK/err"
fi

# a coroutine on a small stack (malloc'd: no bounds the guard can know; or
# mapped above an inaccessible page): walked on the guard's own stack, never
# past the coroutine's; through a library built without unwind tables, the
# stack ends there, no frame guessed by its frame pointer
ucc -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -fPIC -shared \
    -o "$U/libnounwind.so" tests/unwind/nounwind.c
ucc -O1 -Wl,-z,now -o "$U/coroutine" tests/unwind/coroutine.c -L"$U" -lnounwind -Wl,-rpath,"$ROOT/$U" -L"$B/sim" -l:libcuda.so.1
co_bad=""
co_cases="heap 8192|mapped 8192|heap 4096"
[ -n "${GMG_SANITIZER:-}" ] && co_cases="heap 65536|mapped 65536" # a sanitized build takes several times the stack itself
IFS='|' read -r -a co_list <<<"$co_cases"
for c in "${co_list[@]}"; do
    guarded GPUMEM_REPORT=stderr "$U/coroutine" $c; rc=$?
    { [ $rc = 0 ] && has "coroutine stack allocated" "$WORK/out" && has "coroutine done" "$WORK/out" \
      && grep -A4 "(4097 bytes) in 1 allocation (cuMemAlloc" "$WORK/err" | grep -q " in co_body " \
      && ! has "Some call stacks or Python frames were not kept" "$WORK/err"; } || co_bad="$co_bad [$c: rc $rc]"
done
guarded GPUMEM_REPORT=stderr "$U/coroutine" nounwind; rc=$?
nw=$(grep -m1 -A8 "(4097 bytes) in 1 allocation (cuMemAlloc" "$WORK/err" | sed "/^$/q" | sed -n 's/.* in \([a-z_]*\) .*/\1/p' | tr '\n' ' ')
[ $rc = 0 ] && [ "$nw" = "do_alloc nounw_inner " ] || co_bad="$co_bad [nounwind: rc $rc, frames: $nw]"
# what a thread's first allocation takes of the program's stack: the
# thread's first walk asks its stack's bounds (for the main thread, libc
# reads /proc/self/maps) on the walk stack, not the program's (4 KiB, or
# 2.7 KiB more where libc's first calloc is a lazy binding saving AVX-512
# registers, overran a 4 KiB coroutine's stack); the unguarded program
# takes about 500 bytes here, the guard about 1.5 KiB more
if [ -z "${GMG_SANITIZER:-}" ]; then
    guarded GPUMEM_REPORT=/dev/null "$U/coroutine" depth; rc=$?
    used=$(sed -n 's/^stack used //p' "$WORK/out")
    { [ $rc = 0 ] && [ -n "$used" ] && [ "$used" -le 2560 ]; } || co_bad="$co_bad [depth: rc $rc, $used bytes of the coroutine's stack used, more than 2560]"
fi
[ -z "$co_bad" ] && ok "a coroutine on a 4 or 8 KiB stack (malloc'd, or mapped above a guard page): no crash, its stack kept, the first allocation taking at most 2.5 KiB of it; through a library without unwind tables the stack ends there (do_alloc, nounw_inner), nothing guessed" \
    || bad "coroutines and code without unwind tables:$co_bad" "$WORK/err"

# a plug-in unloaded by a loader opened with RTLD_DEEPBIND (its dlclose the C
# library's, not the guard's), another mapped in its place with another
# frame at the same return address: after the reporter's next look at the
# loader's unload count (a second), the walk is the new plug-in's own
# a thread that a library's constructor starts and waits for inside dlopen
# (the loader's lock held) makes the first allocation with a stack: no
# lookup of the guard's on that thread waits for the lock (it would for ever)
ucc -O1 -fPIC -shared -pthread -o "$U/libctorthr.so" tests/unwind/ctorthr.c
build ctorload tests/unwind/ctorload.c -rdynamic -L"$B/sim" -l:libcuda.so.1
tguarded 30 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/ctor.json" "$T/ctorload" "$ROOT/$U"; rc=$?
got=$(jq -r '[.live[] | select(.bytes == 6001) | .frames[] | .function] | join(" ")' "$WORK/ctor.json" 2>&1)
if [ $rc = 0 ] && has "ctorload done" "$WORK/out" && [[ "$got" == "host_alloc body"* ]]; then
    ok "the first allocation, by a thread a library's constructor starts and joins inside dlopen: no hang, its stack is right ($got)"
else bad "an allocation from a constructor's thread inside dlopen (rc $rc; frames: $got)" "$WORK/err"; fi

$CC -shared -fPIC -o "$U/libunwrelA.so" tests/unwind/unwrelA.S || exit 1
$CC -shared -fPIC -o "$U/libunwrelB.so" tests/unwind/unwrelB.S || exit 1
ucc -O1 -fno-omit-frame-pointer -fPIC -shared -o "$U/libunwrelload.so" tests/unwind/unwrelload.c # (its frame pointer is what an old rule would follow)
build unwreload tests/unwind/unwreload.c -L"$B/sim" -l:libcuda.so.1
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "a plug-in unloaded behind the guard's back" "the sanitizer runtimes refuse RTLD_DEEPBIND"
else
guarded GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/unwrel.json" "$T/unwreload" "$ROOT/$U" 2.5; rc=$?
same=$(grep -o 'plug at 0x[0-9a-f]*' "$WORK/out" | sort -u | wc -l)
got=$(python3 -c '
import json, sys
for g in json.load(open(sys.argv[1]))["live"]:
    if g["bytes"] == 2002:
        print(" ".join(str(f.get("function")) for f in g["frames"][:4]))' "$WORK/unwrel.json" 2>&1)
if [ $rc = 0 ] && [ "$same" = 1 ] && [ "$got" = "cbB plug loader_run main" ]; then
    ok "a plug-in unloaded behind the guard's back (RTLD_DEEPBIND), another at its address: walked by its own rules a second later"
elif [ $rc = 0 ] && [ "$same" != 1 ]; then
    skip "a plug-in unloaded behind the guard's back" "the second plug-in was not mapped where the first was"
else bad "a plug-in unloaded behind the guard's back (rc $rc): '$got'" "$WORK/err"; fi
fi

# stacks libunwind walks, where it used to end them early or add to them:
# a signal that came at a function's first instruction (after padding with
# no unwind information), or inside a function whose caller called it last;
# a hand-started green thread whose outermost return address is 0
build sigentry tests/unwind/sigentry.c -L"$B/sim" -l:libcuda.so.1
se_bad=""
for m in pad noret green; do
    [ -n "${GMG_SANITIZER:-}" ] && [ $m = green ] && continue # (the runtimes take the hand-made stack for an overflow)
    tguarded 30 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/sigentry.json" "$T/sigentry" $m; rc=$?
    got=$(jq -r '[.live[] | select(.bytes == 4099 or .bytes == 4097) | .frames[] | (.function // .pc)] | join(" ")' \
          "$WORK/sigentry.json" 2>&1)
    case "$m:$got" in
        # (the signal frame and the interrupted one are named by the byte
        # before their pc, which may be no function's: their pcs are shown)
        pad:"in_handler on_ill "?*" "?*" caller_pad outer main "*) ;;
        noret:"in_handler on_ill "?*" trap_mid caller_noret caller_nr outer main "*) ;;
        green:"green_leaf green_mid green_entry") ;;
        *) se_bad="$se_bad [$m, rc $rc: $got]" ;;
    esac
    [ $rc = 0 ] && has "sigentry $m done" "$WORK/out" || se_bad="$se_bad [$m: rc $rc]"
done
[ -z "$se_bad" ] && ok "libunwind's walks: past a signal that came at a function's first instruction or inside a function called last, to main; a green thread's stack ends at its entry, no frame for the 0 above it" \
    || bad "libunwind's walks through signal frames and to a 0 return address:$se_bad" "$WORK/err"
