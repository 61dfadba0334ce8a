# holds.sh - GPUMEM_GROUP holds whatever happens to a member: children made
# without fork handlers, a program closing the segment's file, kills at any
# moment, a member stopped while it works, a vfork child, segments that are
# not the group's own. Sourced by run.sh (uses its helpers); every segment
# made here is removed at the end.

GT="$T/grouptest"
HF="$T/holdfast"
GU=$(id -u)
SHM=/dev/shm
seg() { echo "gpumemguard-$GU-$1"; }
# gbg OUT VAR=VALUE... CMD...: a guarded process in the background ($! its pid)
gbg() { local out=$1; shift; rm -f "$WORK/$out.out"; env LD_PRELOAD="$PRELOAD" "$@" >"$WORK/$out.out" 2>"$WORK/$out.err" & }
# await FILE WORD: until FILE says WORD (10 s)
await() { for _ in $(seq 1 1000); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done; return 1; }
# reap PID...: kill -9 and wait, without the shell's "Killed" lines
reap() { for p in "$@"; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done; }
peek() { "$GT" peek "$(seg "$1")"; }
HP="gmghold$$"
# gtake BYTES: a new member asks for BYTES of the group $G at once
gtake() { guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take "$1" 0; }

# ------------------------------------- a child made without fork handlers
# made once the parent's report thread is idle, then at once (while that
# thread warms its symbolizer up). Under a sanitizer a child made while that
# thread was at work may have inherited an allocator lock that is never let
# go of: its exit writes no report and says why, instead of waiting for ever
# (a plain build's allocator gives that thread an arena of its own).
for how in _Fork clone; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "group: a child made by $how" "TSan sees no fork it did not make itself (as in tests/fork/no_handlers.sh); plain and ASan builds run it"
        continue
    fi
    for when in idle now; do
        G=${HP}f$how$when
        gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_EXITCODE=23 "$HF" forkraw 6291456 $how $when; apid=$!
        await "$WORK/a.out" held
        gtake 6291456; t=$?
        # the parent is killed: the only report is the child's, which lists none of the parent's allocations
        clean=0
        has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/a.err" && clean=1
        [ "$(grep -c "gpumemguard: " "$WORK/a.err")" = 1 ] \
            && has "made without fork handlers (_Fork, a raw clone) while its parent's report thread was at work:" "$WORK/a.err" && clean=1
        what="made once its parent's report thread was idle"
        [ $when = now ] && what="made at once, while its parent's report thread warms up"
        if has "child status 0" "$WORK/a.out" && [ $clean = 1 ] \
           && ! has "6291456 bytes in 1 allocation" "$WORK/a.err" && [ $t = 1 ] && has "refused" "$WORK/out"; then
            ok "group: a child made by $how ($what) that returns from main: its parent's 6 MiB stay the group's (another 6 MiB of 8 refused), its exit report lists none of its parent's allocations$([ -n "${GMG_SANITIZER:-}" ] && echo " (or says why there is none)"), exit status 0 under GPUMEM_EXITCODE=23"
        else bad "group and a $how child ($when): take rc $t, $(cat "$WORK/a.out" | tr '\n' ' ')" "$WORK/a.err"; fi
        reap $apid
    done
done

# --------------------------------- the program closes the segment's file
G=${HP}c
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$HF" closeseg 6291456 "$(seg $G)"; apid=$!
await "$WORK/a.out" held
gtake 6291456; t=$?
read -r _ used _ _ _ _ _ members _ <<<"$(peek $G)"
if [ $t = 1 ] && [ "$used" = 6291456 ] && [ "$members" = 1 ]; then
    ok "group: a member that opens and closes the segment's file itself stays alive: its 6 MiB stay held (another 6 MiB of 8 refused)"
else bad "group: a close of the segment's file (take rc $t, used $used, members $members)" "$WORK/out"; fi
reap $apid

# ------------------------------- a killed member whose fork() child lives on
# (a data-loader worker that never allocates): the child has the parent's
# mapping of the segment, which must not keep the parent's liveness
G=${HP}w
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$HF" forkkeep 6291456; apid=$!
await "$WORK/a.out" held
read -r _ _ kid <"$WORK/a.out"
reap $apid
gtake 6291456; t=$?
read -r _ used _ _ _ _ _ members _ <<<"$(peek $G)"
if [ $t = 0 ] && [ -n "$kid" ] && [ -d "/proc/$kid" ] && [ "$used" = 0 ] && [ "$members" = 0 ]; then
    ok "group: a member killed while its fork() child lives on gives its share back (the child's copy of the mapping keeps nothing)"
else bad "group: a killed member with a live child (take rc $t, child $kid, used $used, members $members)" "$WORK/out"; fi
[ -n "$kid" ] && kill -9 "$kid" 2>/dev/null

# ------------------------------- a member started with its stdout closed
# (cron, a daemon): the segment's descriptor must not take number 1, where
# the program's own output would go into it
G=${HP}s
env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" leak 1048576 1>&- 2>"$WORK/err"; rc1=$?
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" info; rc=$?
read -r _ used _ _ _ budget _ <<<"$(peek $G)"
if [ $rc1 = 0 ] && [ $rc = 0 ] && has "free 8388608 total 8388608" "$WORK/out" && [ "$used" = 0 ]; then
    ok "group: a member started with its standard output closed writes its output anywhere but into the group's segment (the next member starts, 8 MiB free)"
else bad "group: a member with stdout closed (rc $rc1, then $rc, budget $budget, used $used)" "$WORK/err"; fi

# ------------------------------- the segment's maker stopped while making it
# (a debugger's breakpoint, a freezer): others start all the same, refused
# under the budget until it is made, then join
$CC -std=gnu11 -O1 -g -Wall -Wextra -Werror $SAN_FLAGS -shared -fPIC -o "$T/libstopmaking.so" tests/group/stopmaking.c -ldl || exit 1
G=${HP}m
rm -f "$SHM/$(seg $G)"
env LD_PRELOAD="$ROOT/$T/libstopmaking.so $PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 1048576 >"$WORK/mk.out" 2>"$WORK/mk.err" &
mk=$!
for _ in $(seq 200); do [ "$(awk '{print $3}' "/proc/$mk/stat" 2>/dev/null)" = T ] && break; sleep 0.05; done
state=$(awk '{print $3}' "/proc/$mk/stat" 2>/dev/null)
env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G "$GT" size >/dev/null 2>"$WORK/true.err"; rc_true=$? # a process that never uses CUDA
gbg w GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 1048576 8000; w=$!
sleep 1.5
kill -CONT $mk
wait $w; rc_take=$?
if [ "$state" = T ] && [ $rc_true = 0 ] && [ $rc_take = 0 ] && has "took after" "$WORK/w.out" \
   && has "the group's segment was being made by a process that held its lock" "$WORK/w.err" && await "$WORK/mk.out" held; then
    ok "group: the segment's maker stopped while making it: another process starts (one that never uses CUDA: status 0, not 2), one that allocates is refused until it is made, then joins ($(cat "$WORK/w.out"))"
else bad "group: a stopped maker (state $state, a process without CUDA $rc_true, take $rc_take: $(cat "$WORK/w.out"))" "$WORK/w.err"; fi
reap $mk
# the same, and a waiting process with no GPUMEM_LIMIT of its own holds
# 6 MiB meanwhile (not refused: the budget is not known to it): the group
# counts them when it joins, and then refuses the others past the budget
G=${HP}q
rm -f "$SHM/$(seg $G)"
env LD_PRELOAD="$ROOT/$T/libstopmaking.so $PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 1048576 >"$WORK/mk.out" 2>"$WORK/mk.err" &
mk=$!
for _ in $(seq 200); do [ "$(awk '{print $3}' "/proc/$mk/stat" 2>/dev/null)" = T ] && break; sleep 0.05; done
gbg nl GPUMEM_GROUP=$G "$GT" hold 6291456; nl=$!
await "$WORK/nl.out" held
kill -CONT $mk
await "$WORK/mk.out" held
used=""
for _ in $(seq 60); do read -r _ used _ <<<"$(peek $G)"; [ "$used" = 7340032 ] && break; sleep 0.05; done
gtake 2097152; t=$?
if [ "$used" = 7340032 ] && [ $t = 1 ]; then
    ok "group: a process without a limit of its own that allocated while the segment was being made: its 6 MiB are the group's once it is (7 of 8 MiB used, another 2 MiB refused)"
else bad "group: what a waiting process without a limit held (used $used, take rc $t)" "$WORK/nl.err"; fi
reap $mk $nl
# the same under GPUMEM_ON_LIMIT=warn with a limit of its own (4 MiB): it
# is told when its 6 MiB go over that limit, as a member would be
G=${HP}w
rm -f "$SHM/$(seg $G)"
env LD_PRELOAD="$ROOT/$T/libstopmaking.so $PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 1048576 >"$WORK/mk.out" 2>"$WORK/mk.err" &
mk=$!
for _ in $(seq 200); do [ "$(awk '{print $3}' "/proc/$mk/stat" 2>/dev/null)" = T ] && break; sleep 0.05; done
gbg wl GPUMEM_GROUP=$G GPUMEM_LIMIT=4M GPUMEM_ON_LIMIT=warn "$GT" hold 6291456; wl=$!
await "$WORK/wl.out" held
if has "over the limit: cuMemAlloc of 6.0 MiB (6291456 bytes) on device 0 takes it to 6.0 MiB (6291456 bytes) of 4.0 MiB (4194304 bytes) (allowed: GPUMEM_ON_LIMIT=warn)" "$WORK/wl.err"; then
    ok "group: a waiting process under GPUMEM_ON_LIMIT=warn is told when it goes over its own limit (6 of 4 MiB)"
else bad "group: a waiting process over its own limit under warn was not told" "$WORK/wl.err"; fi
reap $mk $wl
# the same, and the waiting process makes a child without fork handlers,
# which asks cuMemGetInfo once its parent has joined and holds 6 MiB: the
# child never makes the segment ready itself (it shares its parent's open
# of it, whose locks never conflict with the parent's: it would start the
# group clean over its parent's slot)
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    G=${HP}n
    rm -f "$SHM/$(seg $G)"
    env LD_PRELOAD="$ROOT/$T/libstopmaking.so $PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 1048576 >"$WORK/mk.out" 2>"$WORK/mk.err" &
    mk=$!
    for _ in $(seq 200); do [ "$(awk '{print $3}' "/proc/$mk/stat" 2>/dev/null)" = T ] && break; sleep 0.05; done
    gbg pf GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$HF" pendfork 6291456; pf=$!
    sleep 0.5
    reap $mk
    await "$WORK/pf.out" held
    read -r _ used _ _ _ _ _ members _ <<<"$(peek $G)"
    gtake 6291456; t=$?
    if [ "$used" = 6291456 ] && [ "$members" = 1 ] && [ $t = 1 ]; then
        ok "group: a child made by _Fork while its parent waited for the segment leaves its parent's slot alone (6 MiB held, another 6 MiB refused)"
    else bad "group: a _Fork child of a waiting process (used $used, members $members, take rc $t)" "$WORK/pf.err"; fi
    reap $pf
else
    skip "group: a _Fork child of a waiting process" "TSan sees no fork it did not make itself (as in tests/fork/no_handlers.sh)"
fi

# ------------------------------- members asking for more than the budget
# are refused without counting: the others' reservations, free memory and
# the group's peak never see the bytes they asked for
G=${HP}x
gbg b1 GPUMEM_GROUP=$G GPUMEM_LIMIT=64M "$HF" overask 68157440; b1=$!
gbg b2 GPUMEM_GROUP=$G GPUMEM_LIMIT=64M "$HF" overask 68157440; b2=$!
gbg b3 GPUMEM_GROUP=$G GPUMEM_LIMIT=64M "$HF" overask 68157440; b3=$!
await "$WORK/b1.out" asking && await "$WORK/b2.out" asking && await "$WORK/b3.out" asking
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=64M "$HF" steps 1048576 5000
read -r _ used _ peak _ <<<"$(peek $G)"
reap $b1 $b2 $b3
read -r _ refused _ <"$WORK/out"
if [ "$refused" = 0 ] && [ -n "$peak" ] && [ "$peak" -le 4194304 ]; then
    ok "group: 3 members asking for more than the budget for ever: another's 20,000 allocations of 1 MiB are never refused, the group's peak stays $peak"
else bad "group: members asking too much (refused $refused, peak $peak)" "$WORK/out"; fi

# ------------------------------- two members taking turns at 2.5 MiB under
# a 4 MiB budget: they can never hold two at once, so the group's peak is
# 2.5 MiB; a sum another's passing add took over the budget is no peak
G=${HP}t
gbg t1 GPUMEM_GROUP=$G GPUMEM_LIMIT=4M "$HF" turns 2621440 300000; t1=$!
gbg t2 GPUMEM_GROUP=$G GPUMEM_LIMIT=4M "$HF" turns 2621440 300000; t2=$!
wait $t1 $t2
read -r _ used _ peak _ <<<"$(peek $G)"
if [ "$used" = 0 ] && [ "$peak" = 2621440 ]; then
    ok "group: two members taking turns at 2.5 MiB under 4 MiB, 300,000 times each: the group's peak is 2.5 MiB, never the budget"
else bad "group: turns at 2.5 MiB (used $used, peak $peak)" "$WORK/t1.out"; fi

# ------------------------------- the group's file cut short by another
# process (truncate): made whole again, said; no idle member faults on it
# (one reading it in that very moment may: docs/deploy.md)
G=${HP}c
gbg c1 GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 1048576; c1=$!
gbg c2 GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 1048576; c2=$!
await "$WORK/c1.out" held && await "$WORK/c2.out" held
read -r _ _ _ _ _ _ _ before _ <<<"$(peek $G)"
truncate -s 0 "/dev/shm/$(seg $G)"
sleep 2.5
alive=0
for p in $c1 $c2; do kill -0 $p 2>/dev/null && alive=$((alive + 1)); done
read -r _ _ _ _ _ _ _ members _ <<<"$(peek $G)"
# the budget holds again: 6 MiB held by a newcomer, another 6 MiB refused
gbg c3 GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 6291456; c3=$!
await "$WORK/c3.out" held
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 6291456 0
reap $c1 $c2 $c3
if [ $alive = 2 ] && [ -n "$before" ] && [ "$members" = "$before" ] && has "refused" "$WORK/out" \
   && cat "$WORK/c1.err" "$WORK/c2.err" | grep -q "was cut short by another process: made whole again"; then
    ok "group: its file truncated under two members holding 1 MiB each: made whole again, said, neither faults; its members are members again, the budget held (6 MiB of 8 held, 6 more refused)"
else bad "group: file truncated under its members ($alive of 2 alive, members '$before' then '$members', $(cat "$WORK/out"))" "$WORK/c1.err"; fi

# --------------------------------------- a member holding the membership lock
# (as one stopped by SIGSTOP or a debugger at the wrong moment would): a new
# process starts and allocates after a short bounded wait
G=${HP}l
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" info # makes the segment
"$HF" lockmem "$(seg $G)" >"$WORK/l.out" 2>&1 & lpid=$!
await "$WORK/l.out" locked
t0=$(date +%s%N)
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 1048576 0; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $rc = 0 ] && has "took after" "$WORK/out" && [ $ms -lt 4000 ]; then
    ok "group: the membership lock held by a process that does not let go: a new member starts and allocates ($ms ms)"
else bad "group: membership lock held (rc $rc, $ms ms)" "$WORK/err"; fi
reap $lpid

# a member stopped over and over while it polls cuMemGetInfo: every new
# process of the group starts and allocates, each within the bounded wait
G=${HP}p
gbg p GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$HF" poll 1048576; ppid=$!
await "$WORK/p.out" polling
worst=0; failed=0
slow=2000; [ -n "${GMG_SANITIZER:-}" ] && slow=5000 # a sanitizer's start-up is slower (the old wait was 5 s, then status 2)
for i in $(seq 1 12); do
    sleep 0.0$((RANDOM % 10))
    kill -STOP $ppid
    t0=$(date +%s%N)
    guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 1048576 0 || failed=$((failed + 1))
    ms=$((($(date +%s%N) - t0) / 1000000)); [ $ms -gt $worst ] && worst=$ms
    kill -CONT $ppid
done
[ $failed = 0 ] && [ $worst -lt $slow ] \
    && ok "group: a member stopped 12 times while polling cuMemGetInfo: every new member started and allocated (slowest $worst ms)" \
    || bad "group: stopped member ($failed failed, slowest $worst ms)" "$WORK/err"
reap $ppid

# ------------------------------------------- kills: exactly the survivors' bytes
# 4 members churn (4 threads each, 64-768 KiB at a time, near the budget)
# and are killed with SIGKILL at random moments, 40 times; one member holds
# 1 MiB throughout (the group never starts clean). After the storm the group
# holds exactly that 1 MiB: a new member sees 7 MiB of 8 free.
G=${HP}k
gbg s GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" member 1048576 "$WORK/never" 0 0; spid=$!
await "$WORK/s.out" joined
declare -a cp
for k in 0 1 2 3; do env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_REPORT=none "$HF" churn $k >/dev/null 2>&1 & cp[$k]=$!; done
for i in $(seq 1 40); do
    sleep 0.0$((RANDOM % 5))$((RANDOM % 10))
    k=$((RANDOM % 4))
    reap ${cp[$k]}
    env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_REPORT=none "$HF" churn $((i + 4)) >/dev/null 2>&1 & cp[$k]=$!
done
reap "${cp[@]}"
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" info
[ "$(cat "$WORK/out")" = "free 7340032 total 8388608 devtotal 8388608" ] \
    && ok "group: 40 SIGKILLs of members allocating near the budget: the group holds exactly the survivor's 1 MiB" \
    || bad "group: after 40 kills [$(cat "$WORK/out")], expected 7 MiB free" "$WORK/err"
reap $spid

# ------------------------------------------------------- a vfork child
guarded GPUMEM_REPORT=/dev/null "$HF" vforksig
has "handler ran 1" "$WORK/out" \
    && ok "a vfork child that sets the dump signal to SIG_DFL before exec leaves its parent's handler in place" \
    || bad "vfork child and the dump signal: $(cat "$WORK/out")" "$WORK/err"

# -------------------------------------------- segments that are not the group's
G=${HP}o
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=1M "$GT" hold 1048576; apid=$!
await "$WORK/a.out" held
ln "$SHM/$(seg $G)" "$SHM/$(seg ${HP}h)"
guarded GPUMEM_GROUP=${HP}h GPUMEM_LIMIT=8M "$GT" info; rc=$?
[ $rc = 2 ] && has "has 2 links, not 1" "$WORK/err" && [ ! -s "$WORK/out" ] \
    && ok "group: a hard link to another group's segment under this group's name is refused at start-up" \
    || bad "group: a hard-linked segment (rc $rc)" "$WORK/err"
cp "$SHM/$(seg $G)" "$SHM/$(seg ${HP}y)"; chmod 600 "$SHM/$(seg ${HP}y)"
guarded GPUMEM_GROUP=${HP}y GPUMEM_LIMIT=8M "$GT" info; rc=$?
[ $rc = 2 ] && has "says it is the segment of group '$G', not '${HP}y'" "$WORK/err" \
    && ok "group: a copy of another group's segment under this group's name is refused (the name inside is checked)" \
    || bad "group: a copied segment (rc $rc)" "$WORK/err"
# a segment that says it is another user's (copied from theirs): said so
cp "$SHM/$(seg $G)" "$SHM/$(seg ${HP}u)"; chmod 600 "$SHM/$(seg ${HP}u)"
python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(24); f.write(struct.pack("<I", int(sys.argv[2])))' "$SHM/$(seg ${HP}u)" $((GU + 4242))
guarded GPUMEM_GROUP=${HP}u GPUMEM_LIMIT=8M "$GT" info; rc=$?
[ $rc = 2 ] && has "says it is the segment of uid $((GU + 4242)), not of this user (uid $GU)" "$WORK/err" \
    && ok "group: a segment that says it is another user's is refused saying so" \
    || bad "group: a segment of another uid inside (rc $rc)" "$WORK/err"
reap $apid
mkdir "$SHM/$(seg ${HP}d)"
guarded GPUMEM_GROUP=${HP}d "$GT" info; rc=$?
[ $rc = 2 ] && has "is a directory, not the group's shared-memory segment; remove it (rmdir" "$WORK/err" \
    && ok "group: a directory at the segment's path is refused saying what it is and what to do" \
    || bad "group: a directory segment (rc $rc)" "$WORK/err"
rmdir "$SHM/$(seg ${HP}d)"
# a segment of the previous layout (version 1: a shared counter beside the
# slots, the same size): refused as an older one, never read as this one
python3 -c 'import struct,sys; n=int(sys.argv[1]); sys.stdout.buffer.write(struct.pack("<QIIIII", 0x70756f7267676d67, 1, n, 256, 64, int(sys.argv[2])).ljust(n, b"\0"))' "$("$GT" size)" "$GU" >"$SHM/$(seg ${HP}v)"
chmod 600 "$SHM/$(seg ${HP}v)"
guarded GPUMEM_GROUP=${HP}v "$GT" info; rc=$?
[ $rc = 2 ] && has "(version 1, this guard's is 2: made by an older gpumemguard)" "$WORK/err" \
    && ok "group: a segment of the older layout is refused as such, never misread" \
    || bad "group: an older segment (rc $rc)" "$WORK/err"

# a member that holds memory on device 1 only: another member, which used
# device 0 alone, shows the group's device 1 too (report, metrics, status
# page for top), not only the devices it used itself
G=${HP}dv
gbg dv1 GPUSIM_DEVICES=2 GPUMEM_GROUP=$G GPUMEM_LIMIT=1G "$HF" ondev 1 4194304; dpid=$!
if await "$WORK/dv1.out" held; then
    guarded GPUSIM_DEVICES=2 GPUMEM_GROUP=$G GPUMEM_LIMIT=1G GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/dv0.json" \
        GPUMEM_METRICS="$WORK/dv0.prom" "$HF" turns 1048576 1; rc=$?
    got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([(d["device"], d["in_use"]) for d in r["group"]["devices"]])' "$WORK/dv0.json" 2>&1)
    if [ $rc = 0 ] && [ "$got" = "[(0, 0), (1, 4194304)]" ] \
       && grep -q "^gpumem_group_used_bytes{device=\"1\",group=\"$G\",.*} 4194304$" "$WORK/dv0.prom"; then
        ok "group: a member that used device 0 alone reports the group's 4 MiB on device 1, another member's (JSON group.devices, metrics)"
    else bad "group: another member's device (rc $rc): $got" "$WORK/dv0.prom"; fi
else bad "group: the member on device 1 never held its memory" "$WORK/dv1.err"; fi
reap $dpid

rm -rf "$SHM/gpumemguard-$GU-$HP"*
