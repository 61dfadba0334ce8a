# copies.sh - two copies of the guard in one process
# (tests/library/copies.c). Sourced by tests/run.sh (its helpers, $B, $T,
# $WORK, $PRELOAD).
build guard_copies tests/library/copies.c -L"$B/sim" -l:libcuda.so.1

# two copies of the guard (a job's LD_PRELOAD and another path, or a copy a
# program dlopens by path): the first loaded intercepts everything; the
# other stays out (one exit report, not two; said once) and its public API
# answers with the first's numbers
mkdir -p "$WORK/copy"; cp "$B/libgpumemguard.so" "$WORK/copy/libgpumemguard.so"
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "two copies of the guard in one process" "two TSan-built copies of one library crash TSan's runtime at exit (plain and ASan builds run it)"
else
timeout 60 env LD_PRELOAD="$PRELOAD $WORK/copy/libgpumemguard.so" "$T/guard_copies" "$WORK/copy/libgpumemguard.so" \
    >"$WORK/out" 2>"$WORK/err"
if [ "$(grep -c "^SUMMARY: gpumemguard: 1048576 bytes in 1 allocation still live at exit" "$WORK/err")" = 1 ] \
   && [ "$(grep -c "SUMMARY" "$WORK/err")" = 1 ] && has "copy: live 1048576" "$WORK/out" \
   && [ "$(grep -c "another copy of the guard was loaded first" "$WORK/err")" = 1 ]; then
    ok "two copies of the guard: one exit report, the other copy says so once and answers with the first's numbers"
else bad "two copies of the guard in one process" "$WORK/err"; fi
# a process of the job that never uses CUDA (a shell, ls, a pipe) prints nothing
timeout 60 env LD_PRELOAD="$PRELOAD $WORK/copy/libgpumemguard.so" sh -c 'echo captured' >"$WORK/out" 2>"$WORK/err"
[ ! -s "$WORK/err" ] && [ "$(cat "$WORK/out")" = captured ] \
    && ok "two copies of the guard in a process that never uses CUDA: nothing printed" \
    || bad "two copies of the guard, no CUDA: printed" "$WORK/err"
fi
