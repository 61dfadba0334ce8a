# pipes.sh - a forked child holds no pipe of its parent's reporter
# (tests/fork/pipes.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
build fork_pipes tests/fork/pipes.c -L"$B/sim" -l:libcuda.so.1

# a forked child holds no more pipes than its parent (the reporter once woke
# through a pipe, which a child had to close before making its own; it is a
# semaphore now, and this stays to keep any descriptor from coming back)
tguarded 60 "$T/fork_pipes"
n=$(sed -n 's/^forkfds: parent \([0-9]*\) child \([0-9]*\)$/\1 \2/p' "$WORK/out")
[ -n "$n" ] && [ "${n% *}" = "${n#* }" ] && ok "a forked child holds no pipe of its parent's reporter (${n% *} pipes open in each)" \
    || bad "pipes in a forked child: ${n:-none}" "$WORK/out"
