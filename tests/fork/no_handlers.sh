# no_handlers.sh - children made without fork handlers (_Fork(), a raw
# clone): refusals and dump signals there (tests/fork/no_handlers.c).
# Sourced by tests/run.sh (its helpers, $T, $WORK, $PRELOAD).
build no_handlers tests/fork/no_handlers.c -L"$B/sim" -l:libcuda.so.1

# a child made without fork handlers (glibc's _Fork(), a raw clone) has no
# report thread: its refused calls come back at once, each with its
# message's first line written, not after 2 s of waiting for a thread that
# is not there; the rest of their messages with its exit report. The
# parent's thread goes on explaining the parent's refusals.
for how in _Fork clone; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "refusals in a child forked without fork handlers ($how)" "TSan sees no fork it did not make itself: to it the parent's threads live on in the child, and the child's fresh locks race with them; plain and ASan builds run it"
        continue
    fi
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_LIMIT=1M "$T/no_handlers" nohandler_fork $how >"$WORK/out" 2>"$WORK/err"; rc=$?
    line() { grep -n -F -- "$1" "$WORK/err" | head -1 | cut -d: -f1; }
    orphan="(returning CUDA_ERROR_OUT_OF_MEMORY; this process was forked without fork handlers and has no report thread: this call's stack and the biggest live allocations follow at its exit)"
    short1=$(grep -n "^gpumemguard: refused cuMemAlloc of 2.0 TiB " "$WORK/err" | grep -F -- "$orphan" | head -1 | cut -d: -f1)
    back1=$(line "child: the refused call returned 2 in under 1000 ms")
    back2=$(line "child again: the refused call returned 2 in under 1000 ms")
    short2=$(sed -n "$((${back1:-0} + 1)),\$p" "$WORK/err" | grep -c -F -- "$orphan")
    whole=$(grep -n " in refused_in_child_again " "$WORK/err" | head -1 | cut -d: -f1)
    # the child's whole messages at its exit (and one "further refusals"
    # line each); a child made while the parent's report thread was at work
    # (under a sanitizer: any of its passes, a periodic one too; in any
    # build: giving the heap back after its warm-up) writes one line saying
    # why it has none instead: its allocator may hold that thread's locks
    # for ever
    busy="made without fork handlers (_Fork, a raw clone) while its parent's report thread was at work"
    further=$(grep -c "further refusals from this call site are counted, not shown)$" "$WORK/err")
    why=""
    if [ -n "$whole" ] && [ -n "$back2" ] && [ "$whole" -gt "$back2" ] && grep -q " in refused_in_child " "$WORK/err" \
       && [ "$further" = 4 ]; then
        at_exit=1
    elif has "$busy" "$WORK/err" && [ "$further" = 2 ]; then
        at_exit=1; why=" (made while the parent's report thread was at work${GMG_SANITIZER:+ under $GMG_SANITIZER}, or gave the heap back: the line saying why there are none)"
    else at_exit=0; fi
    if [ $rc = 0 ] && has "nohandler_fork: child exited 0" "$WORK/out" && [ -n "$short1" ] && [ -n "$back1" ] \
       && [ -n "$back2" ] && [ "$short1" -lt "$back1" ] && [ "$back1" -lt "$back2" ] && [ "$short2" = 1 ] \
       && [ "$at_exit" = 1 ] \
       && has "parent: the refused call returned 2 in under 10000 ms" "$WORK/err" \
       && has "parent after: the refused call returned 2 in under 10000 ms" "$WORK/err" \
       && grep -q " in refused_after_child " "$WORK/err"; then
        ok "a child forked without fork handlers ($how): refused calls come back at once with their first line, the whole messages at its exit$why; the parent's thread still explains"
    else bad "refusals in a child forked without fork handlers ($how; rc $rc; lines: short ${short1:-none}, back ${back1:-none} ${back2:-none}, second short $short2, whole ${whole:-none})" "$WORK/err"; fi
done

# ... and a dump signal such a child gets is written at its exit, before
# its exit report, even when nothing else of the guard's ran in it first
# (the state taken over only at exit must not forget the signal)
for how in _Fork clone; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "a dump signal in a child forked without fork handlers ($how)" "as above"
        continue
    fi
    rm -rf "$WORK/nd"; mkdir -p "$WORK/nd"
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_STACK_DEPTH=0 GPUMEM_REPORT="$WORK/nd/r.%p.%n" "$T/no_handlers" nohandler_dump $how >"$WORK/out" 2>"$WORK/err"; rc=$?
    cpid=$(sed -n 's/^nohandler_dump: child \([0-9]*\) exited 0$/\1/p' "$WORK/out")
    if [ $rc = 0 ] && [ -n "$cpid" ] && [ -n "${GMG_SANITIZER:-}" ] && has "$busy" "$WORK/err" && [ ! -e "$WORK/nd/r.$cpid.1" ]; then
        ok "a dump signal in a child forked without fork handlers ($how): under $GMG_SANITIZER, made while the parent's report thread was at work, the line saying why there is no report"
    elif [ $rc = 0 ] && [ -n "$cpid" ] && grep -q "^==$cpid== gpumemguard report (signal, dump 1)" "$WORK/nd/r.$cpid.1" 2>/dev/null \
       && grep -q "^SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/nd/r.$cpid.2" 2>/dev/null; then
        ok "a dump signal in a child forked without fork handlers ($how): written at its exit, before its exit report (clean: none of its parent's allocations is its own)"
    else bad "a dump signal in a child forked without fork handlers ($how; rc $rc; child ${cpid:-none}: $(ls "$WORK/nd" | tr '\n' ' '))" "$WORK/err"; fi
done

# a vfork child that calls exit() (not _exit) runs its parent's exit
# handlers in the parent's memory: the guard there must neither empty the
# parent's table nor write a report as the child; it says what happened
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a vfork child that calls exit()" "TSan makes vfork a fork (with its handlers): the child has memory of its own there"
else
    rm -rf "$WORK/vx"; mkdir -p "$WORK/vx"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/vx/r.%p" "$T/no_handlers" vfork_exit >"$WORK/out" 2>"$WORK/err"; rc=$?
    kid=$(sed -n 's/^vfork_exit: child \([0-9]*\) .*/\1/p' "$WORK/out")
    if [ $rc = 0 ] && has "status 4" "$WORK/out" && [ -n "$kid" ] && [ ! -e "$WORK/vx/r.$kid" ] \
       && has "process $kid, made by vfork or clone(CLONE_VM)" "$WORK/err" && has "its parent will write no exit report" "$WORK/err"; then
        ok "a vfork child that calls exit(): no report as the child (no '0 bytes' of its parent's), and it says its parent will write none"
    else bad "a vfork child calling exit() (rc $rc, child $kid: $(ls "$WORK/vx" | tr '\n' ' '))" "$WORK/err"; fi
fi
