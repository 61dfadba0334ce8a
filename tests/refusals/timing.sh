# timing.sh - when a refused call comes back and its message is written:
# before the call returns (a program that aborts at once still has it), with
# the loader's lock held (a bounded wait, the first line, the rest later),
# just as the wait runs out (written once) (tests/refusals/timing.c,
# tests/refusals/ctorrefuse.c, tests/refusals/slowwrite.c). Sourced by
# tests/run.sh (its helpers, $ROOT, $T, $WORK, $PRELOAD).
build refusal_timing tests/refusals/timing.c -L"$B/sim" -l:libcuda.so.1
build libgmgctor.so -shared -fPIC tests/refusals/ctorrefuse.c -L"$B/sim" -l:libcuda.so.1
build libslowwrite.so -shared -fPIC tests/refusals/slowwrite.c

# a refused call returns only once its message is written: a program that
# aborts at once (CUDA_CHECK) still says why (the reporter thread wrote it
# after the fact: lost to the abort, or after the program's own line)
( tguarded 60 GPUMEM_LIMIT=1M "$T/refusal_timing" refuse_abort ) 2>/dev/null; rc=$?
said=$(grep -n "^gpumemguard: refused cuMemAlloc of 2.0 MiB" "$WORK/err" | head -1 | cut -d: -f1)
stack=$(grep -n " in refused_then_abort " "$WORK/err" | head -1 | cut -d: -f1)
back=$(grep -n "^refuse_abort: the refused call returned 2$" "$WORK/err" | cut -d: -f1)
if [ $rc = 134 ] && [ -n "$said" ] && [ -n "$stack" ] && [ -n "$back" ] && [ "$said" -lt "$stack" ] && [ "$stack" -lt "$back" ] \
   && sed -n "${said},${back}p" "$WORK/err" | grep -q "^gpumemguard: the biggest live allocations on device 0:$"; then
    ok "a refused call returns with its message written: the program aborting at once still has it, whole, before its own line"
else bad "refusal message before the refused call returns (rc $rc; lines: message ${said:-none}, stack ${stack:-none}, program ${back:-none})" "$WORK/err"; fi

# a refusal inside a library's constructor: the loader's lock is held, which
# the reporter needs to name frames. The refused call waits for its message
# no longer than 2 s; then its first line is written from the refusing
# thread, and the whole message follows once the library is loaded
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_LIMIT=1M "$T/refusal_timing" ctor_refuse "$ROOT/$T/libgmgctor.so" >"$WORK/out" 2>"$WORK/err"; rc=$?
short=$(grep -n "^gpumemguard: refused cuMemAlloc of 1.0 TiB .*(returning CUDA_ERROR_OUT_OF_MEMORY; the report thread is busy: this call's stack and the biggest live allocations follow when it can write them)$" "$WORK/err" | cut -d: -f1)
back=$(grep -n "^ctor: the refused call returned 2$" "$WORK/err" | cut -d: -f1)
whole=$(grep -n "^gpumemguard: refused cuMemAlloc of 1.0 TiB .*further refusals from this call site are counted, not shown)$" "$WORK/err" | cut -d: -f1)
if [ $rc = 0 ] && has "ctor_refuse: loaded in under 10 s" "$WORK/out" && [ -n "$short" ] && [ -n "$back" ] && [ -n "$whole" ] \
   && [ "$short" -lt "$back" ] && [ "$back" -lt "$whole" ] && sed -n "${whole},\$p" "$WORK/err" | grep -q " in refused_in_ctor "; then
    ok "a refusal in a library constructor (loader's lock held): the call comes back after the bounded wait, its first line written, the whole message after"
else bad "refusal with the loader's lock held (rc $rc; lines: short ${short:-none}, program ${back:-none}, whole ${whole:-none})" "$WORK/err"; fi

# a refusal's whole message written by the report thread, which then takes
# 3 s to say so (a write() preloaded beside the guard returns late; a loaded
# machine does the same, for less long): the refused call, past its 2 s
# wait, must not write the first line again after the whole message
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a refusal's message written just as the wait ends" "a write() preloaded beside the guard crashes TSan-built programs, as close() does; plain and ASan builds run it"
else
    timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowwrite.so" GPUMEM_LIMIT=1M "$T/refusal_timing" refuse_timed >"$WORK/out" 2>"$WORK/err"; rc=$?
    first=$(grep -n "^gpumemguard: refused cuMemAlloc of 5.0 TiB" "$WORK/err" | cut -d: -f1 | tr '\n' ' ')
    whole=$(grep -n "^gpumemguard: refused cuMemAlloc of 5.0 TiB .*further refusals from this call site are counted, not shown)$" "$WORK/err" | cut -d: -f1)
    back=$(grep -n "^refuse_timed: the refused call returned 2 in under 10000 ms$" "$WORK/err" | cut -d: -f1)
    if [ $rc = 0 ] && [ -n "$whole" ] && [ "$first" = "$whole " ] && [ -n "$back" ] && [ "$whole" -lt "$back" ] \
       && sed -n "${whole},\$p" "$WORK/err" | grep -q " in refused_once "; then
        ok "a refusal's message written just as the refused call's wait ends: written once, whole, before the call returns; no first line after it"
    else bad "a refusal's message at the end of the wait (rc $rc; first lines: ${first:-none}, whole ${whole:-none}, program ${back:-none})" "$WORK/err"; fi
fi
