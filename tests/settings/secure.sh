# secure.sh - a setuid or setgid program (secure-execution mode): the guard
# writes no file a user names and reads none (reports go to stderr,
# GPUMEM_METRICS is not written, GPUMEM_SUPPRESSIONS is not read), and says
# so (tests/settings/secure.c). Sourced by tests/run.sh (its helpers, $ROOT,
# $B, $T, $WORK).
#
# The loader ignores LD_PRELOAD and LD_LIBRARY_PATH in secure-execution mode:
# the program is linked with the guard and the simulated driver, found by
# absolute run paths. It is made setgid to another group and run: the kernel
# then sets AT_SECURE (not on a file system mounted nosuid: skipped there).
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "secure-execution mode" "the sanitizer's runtime is preloaded, which the loader refuses in that mode"
elif ! getent group nogroup >/dev/null 2>&1; then
    skip "secure-execution mode" "no group 'nogroup' to make the program setgid to"
else
    $CC -std=gnu11 -O1 -g -Wall -Wextra -Werror -I"$CUDA_INC" -o "$T/secure" tests/settings/secure.c \
        -L"$B" -lgpumemguard -Wl,-rpath,"$ROOT/$B" -L"$B/sim" -l:libcuda.so.1 -Wl,-rpath,"$ROOT/$B/sim" -ldl -lpthread \
        && chgrp nogroup "$T/secure" && chmod g+s "$T/secure" || exit 1
    printf 'leak:secure_leak\n' >"$WORK/sec.supp"
    rm -f "$WORK/sec.txt" "$WORK/sec.prom"
    env GPUMEM_REPORT="$WORK/sec.txt" GPUMEM_METRICS="$WORK/sec.prom" GPUMEM_SUPPRESSIONS="$WORK/sec.supp" \
        timeout 60 "$T/secure" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if has "secure: AT_SECURE 0" "$WORK/out"; then
        skip "secure-execution mode" "the kernel did not set AT_SECURE (a file system mounted nosuid?)"
    elif [ $rc = 0 ] && has "secure: AT_SECURE 1" "$WORK/out" \
       && has "secure execution: report files are not written, using stderr" "$WORK/err" \
       && has "secure execution: GPUMEM_METRICS is not written" "$WORK/err" \
       && has "secure execution: GPUMEM_SUPPRESSIONS is not read" "$WORK/err" \
       && has "SUMMARY: gpumemguard: 1048576 bytes in 1 allocation still live at exit" "$WORK/err" \
       && grep -A1 -F "(1048576 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" "$WORK/err" | grep -q " in secure_leak " \
       && [ ! -e "$WORK/sec.txt" ] && [ ! -e "$WORK/sec.prom" ]; then
        ok "a setgid program (secure-execution mode): the report on stderr, not in the file named; no metrics file; the suppressions file not read; each said"
    else bad "secure-execution mode (rc $rc)" "$WORK/err"; fi
fi
