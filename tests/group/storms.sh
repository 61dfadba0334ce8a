# storms.sh - GPUMEM_GROUP under kill and stop storms, for make stress
# (scripts/stress.sh sources it: its helpers ok/bad, $T with grouptest and
# holdfast built, $PRELOAD, $WORK). Bounded: under a minute on 2 cores.

GT="$T/grouptest"; HF="$T/holdfast"; GU=$(id -u); SP="gmgstorm$$"
sseg() { echo "gpumemguard-$GU-$1"; }
sreap() { for p in "$@"; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done; }
sawait() { for _ in $(seq 1 1000); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done; return 1; }
# "${M[@]}" CMD: a member of group $G (set M after G; an array, not a
# function, so that CMD & leaves $! the member's own pid)

# 150 SIGKILLs while 4 members x 4 threads churn near an 8 MiB budget; one
# member holds 1 MiB throughout. After: exactly that 1 MiB is held.
G=${SP}k; s0=$SECONDS
M=(env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_REPORT=none)
"${M[@]}" "$GT" member 1048576 "$WORK/never" 0 0 >"$WORK/sv.out" 2>&1 & spid=$!
sawait "$WORK/sv.out" joined
declare -a cp
for k in 0 1 2 3; do "${M[@]}" "$HF" churn $k >/dev/null 2>&1 & cp[$k]=$!; done
for i in $(seq 1 150); do
    sleep 0.0$((RANDOM % 4))$((RANDOM % 10))
    k=$((RANDOM % 4))
    sreap ${cp[$k]}
    "${M[@]}" "$HF" churn $((i + 4)) >/dev/null 2>&1 & cp[$k]=$!
done
sreap "${cp[@]}"
"${M[@]}" "$GT" info >"$WORK/out" 2>"$WORK/err"
[ "$(cat "$WORK/out")" = "free 7340032 total 8388608 devtotal 8388608" ] \
    && ok "group kill storm: 150 SIGKILLs of 4 members x 4 threads near the budget: exactly the survivor's 1 MiB held after ($((SECONDS - s0)) s)" \
    || bad "group kill storm: [$(cat "$WORK/out")], expected 7 MiB of 8 free" "$WORK/err"
sreap $spid

# 40 SIGSTOPs of a member polling cuMemGetInfo while 2 others churn: each
# time a new process starts and allocates within two seconds
G=${SP}s; s0=$SECONDS
M=(env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_REPORT=none)
"${M[@]}" "$HF" poll 1048576 >"$WORK/p.out" 2>&1 & ppid=$!
sawait "$WORK/p.out" polling
for k in 0 1; do "${M[@]}" "$HF" churn $k >/dev/null 2>&1 & cp[$k]=$!; done
failed=0; worst=0
for i in $(seq 1 40); do
    sleep 0.0$((RANDOM % 3))$((RANDOM % 10))
    kill -STOP $ppid
    gt0=$(date +%s%N)
    env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_REPORT=none timeout 10 "$GT" info >/dev/null 2>"$WORK/err" \
        || failed=$((failed + 1))
    ms=$((($(date +%s%N) - gt0) / 1000000)); [ $ms -gt $worst ] && worst=$ms
    kill -CONT $ppid
done
sreap ${cp[0]} ${cp[1]} $ppid
[ $failed = 0 ] && [ $worst -lt 2000 ] \
    && ok "group stop storm: 40 SIGSTOPs of a polling member: every new process started (slowest $worst ms, $((SECONDS - s0)) s)" \
    || bad "group stop storm: $failed failed, slowest $worst ms" "$WORK/err"

rm -f /dev/shm/"$(sseg "$SP")"*
