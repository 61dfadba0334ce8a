# group.sh - GPUMEM_GROUP: one budget per device shared by the
# processes of one user and group name. Sourced by run.sh (uses its helpers).
# Every group name here is new (the pid of this shell in it), and every
# segment made is removed at the end.

GT="$T/grouptest"
GU=$(id -u)
GP="gmgtest$$"
SHM=/dev/shm
seg() { echo "gpumemguard-$GU-$1"; }
# gbg OUT VAR=VALUE... CMD...: a guarded process in the background ($! its pid)
# (the old output goes first: await must not find the previous process's word)
gbg() { local out=$1; shift; rm -f "$WORK/$out.out"; env LD_PRELOAD="$PRELOAD" "$@" >"$WORK/$out.out" 2>"$WORK/$out.err" & }
# await FILE WORD: until FILE says WORD (10 s)
await() { for _ in $(seq 1 1000); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done; return 1; }
# reap PID...: kill -9 and wait, without the shell's "Killed" lines
reap() { for p in "$@"; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done; }
peek() { "$GT" peek "$(seg "$1")"; }
ms_of() { sed -n 's/.* after \([0-9]*\) ms.*/\1/p' "$1"; }

# --------------------------------------------- 8 processes x 4 threads
G=${GP}h
: >"$WORK/hammer.shm"
pids=""
for i in 1 2 3 4 5 6 7 8; do
    gbg "h$i" GPUMEM_GROUP=$G GPUMEM_LIMIT=4M "$GT" hammer "$WORK/hammer.shm" 8 4000
    pids="$pids $!"
done
failed=0
for p in $pids; do wait "$p" || failed=$((failed + 1)); done
read -r _ max _ live _ ready _ refusals <<<"$("$GT" maxlive "$WORK/hammer.shm")"
read -r _ used _ peak _ _ _ members _ <<<"$(peek $G)"
clean=0
for i in 1 2 3 4 5 6 7 8; do
    has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/h$i.err" && clean=$((clean + 1))
done
if [ "$failed" = 0 ] && [ "$ready" = 8 ] && [ -n "$max" ] && [ "$max" -le 4194304 ] && [ "$max" -gt 2097152 ] \
   && [ "$refusals" -gt 0 ] && [ "$live" = 0 ] && [ "$used" = 0 ] && [ "$members" = 0 ] && [ "$peak" -le 4194304 ] \
   && [ "$clean" = 8 ]; then
    ok "group: 8 processes x 4 threads under one 4 MiB budget: live bytes of all never above it (most $max), $refusals refusals, all 0 at the end"
else
    bad "group hammer: failed=$failed ready=$ready max=$max refusals=$refusals live=$live used=$used members=$members peak=$peak clean=$clean" "$WORK/h1.err"
fi

# -------------------------------------------------------- SIGKILL
# a live member keeps the group from starting clean: the dead one's share
# must come back by reclaim
G=${GP}k
gbg m GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" member 1048576 "$WORK/never" 0 0; mpid=$!
await "$WORK/m.out" joined
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 6291456; apid=$!
await "$WORK/a.out" held
read -r _ before _ <<<"$(peek $G)"
reap $apid
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 6291456 1000
t=$(ms_of "$WORK/out")
if [ "$before" = 7340032 ] && has "took after" "$WORK/out" && [ -n "$t" ] && [ "$t" -lt 1000 ]; then
    ok "group: a member killed with SIGKILL holding 6 MiB: the next process gets its share (after $t ms)"
else bad "SIGKILL, next process: before=$before t=$t" "$WORK/out"; fi
reap $mpid

G=${GP}r
gbg m GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" member 1048576 "$WORK/trig.r" 6291456 1000; mpid=$!
await "$WORK/m.out" joined
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 6291456; apid=$!
await "$WORK/a.out" held
reap $apid
touch "$WORK/trig.r"
wait $mpid
t=$(ms_of "$WORK/m.out")
if has "took after" "$WORK/m.out" && [ -n "$t" ] && [ "$t" -lt 1000 ]; then
    ok "group: a running member gets a SIGKILLed member's share as soon as it asks (after $t ms)"
else bad "SIGKILL, running member" "$WORK/m.out"; fi

G=${GP}w
gbg w GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" watch 1048576 "$WORK/trig.w" 7340032 3000; wpid=$!
await "$WORK/w.out" joined
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 6291456; apid=$!
await "$WORK/a.out" held
reap $apid
touch "$WORK/trig.w"
wait $wpid
t=$(ms_of "$WORK/w.out")
if has "free after" "$WORK/w.out" && [ -n "$t" ] && [ "$t" -le 1000 ]; then
    ok "group: after a member's SIGKILL, another's cuMemGetInfo shows its share free within a second ($t ms)"
else bad "SIGKILL, cuMemGetInfo of a member" "$WORK/w.out"; fi

# an idle member (no allocation, no question) gives a dead one's share back
# on its reporter thread, each second: seen from outside the group
G=${GP}t
gbg m GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" member 1048576 "$WORK/never" 0 0; mpid=$!
await "$WORK/m.out" joined
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 6291456; apid=$!
await "$WORK/a.out" held
reap $apid
t0=$(date +%s%N)
for _ in $(seq 1 300); do
    read -r _ used _ <<<"$(peek $G)"
    [ "$used" = 1048576 ] && break
    sleep 0.01
done
t=$((($(date +%s%N) - t0) / 1000000))
[ "$used" = 1048576 ] && [ $t -le 2000 ] \
    && ok "group: an idle member gives a SIGKILLed member's share back on its own within a second ($t ms)" \
    || bad "SIGKILL, idle member: used=$used after $t ms" "$WORK/m.err"
reap $mpid

# ------------------------------------------------ a sequence of processes
G=${GP}s
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" leak 3145728; s1=$(cat "$WORK/out")
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=4M "$GT" leak 1048576; s2=$(cat "$WORK/out")
grep -q "group $G, device 0: limit 4.0 MiB (4194304 bytes), in use 1.0 MiB (1048576 bytes) by 1 member, peak 1.0 MiB (1048576 bytes)$" "$WORK/err"; r2=$?
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=4M "$GT" hold 2097152; apid=$!
await "$WORK/a.out" held
reap $apid
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=6M "$GT" leak 1048576; s4=$(cat "$WORK/out")
grep -q "group $G, device 0: limit 6.0 MiB (6291456 bytes), in use 1.0 MiB (1048576 bytes) by 1 member, peak 1.0 MiB (1048576 bytes)$" "$WORK/err"; r4=$?
read -r _ used _ _ _ _ _ members _ <<<"$(peek $G)"
if [ "$s1" = "free 8388608 total 8388608 devtotal 8388608" ] && [ "$s2" = "free 4194304 total 4194304 devtotal 4194304" ] \
   && [ $r2 = 0 ] && [ "$s4" = "free 6291456 total 6291456 devtotal 6291456" ] && [ $r4 = 0 ] \
   && [ "$used" = 0 ] && [ "$members" = 0 ]; then
    ok "group: processes one after another (exiting with leaks, one SIGKILLed) each start clean: budget, use and peak their own"
else bad "sequence: [$s1] [$s2] r2=$r2 [$s4] r4=$r4 used=$used members=$members" "$WORK/err"; fi

# ------------------------------------------ cuMemGetInfo under the budget
G=${GP}i
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 3145728; apid=$!
await "$WORK/a.out" held
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" info
i1=$(cat "$WORK/out")
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=16M "$GT" take 6291456 0
if [ "$i1" = "free 5242880 total 8388608 devtotal 8388608" ] && has "refused" "$WORK/out" \
   && has "GPUMEM_LIMIT for device 0 is 16.0 MiB (16777216 bytes), but the group's budget is 8.0 MiB (8388608 bytes)" "$WORK/err" \
   && has "GPUMEM_LIMIT is 8.0 MiB (8388608 bytes) for group $G, 3.0 MiB (3145728 bytes) in use by the group (0 bytes by this process)" "$WORK/err"; then
    ok "group: cuMemGetInfo/cuDeviceTotalMem describe the group's budget; a member with another limit is held to it and told"
else bad "info under a group: [$i1]" "$WORK/err"; fi
reap $apid
G=${GP}o
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_ON_LIMIT=warn "$GT" hold 10485760; apid=$!
await "$WORK/a.out" held
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" info
[ "$(cat "$WORK/out")" = "free 0 total 8388608 devtotal 8388608" ] \
    && ok "group: over the budget (GPUMEM_ON_LIMIT=warn) cuMemGetInfo says 0 free, never a wrapped number" \
    || bad "info over the group's budget" "$WORK/out"
reap $apid

# --------------------------------------------------------- reports
G=${GP}j
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 3145728; apid=$!
await "$WORK/a.out" held
rm -f "$WORK/g.prom"
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/g.prom" "$GT" leak 1048576
promok=1
if command -v promtool >/dev/null 2>&1; then promtool check metrics <"$WORK/g.prom" >"$WORK/prom" 2>&1 || promok=0; fi
if jq -e --arg g "$G" '.group.name == $g and .group.members == 2 and .group.devices[0].limit == 8388608
        and .group.devices[0].in_use == 4194304 and .devices[0].in_use == 1048576 and .devices[0].limit == 8388608' \
        "$WORK/err" >/dev/null 2>&1 \
   && grep -q "^gpumem_group_used_bytes{device=\"0\",group=\"$G\",pid=\"[0-9]*\",exe=\"grouptest\",host=\"[^\"]*\",pidns=\"[0-9]*\"} 4194304$" "$WORK/g.prom" \
   && grep -q "^gpumem_group_limit_bytes{device=\"0\",group=\"$G\",pid=\"[0-9]*\",exe=\"grouptest\",host=\"[^\"]*\",pidns=\"[0-9]*\"} 8388608$" "$WORK/g.prom" \
   && grep -q "^gpumem_group_members{group=\"$G\",pid=\"[0-9]*\",exe=\"grouptest\",host=\"[^\"]*\",pidns=\"[0-9]*\"} 2$" "$WORK/g.prom" \
   && grep -q '^gpumem_used_bytes{device="0",pid="[0-9]*",exe="grouptest",host="[^"]*",pidns="[0-9]*"} 1048576$' "$WORK/g.prom" && [ $promok = 1 ]; then
    ok "group: the JSON report and the metrics file name the group, its budget, members and use beside the process's own"
else bad "group in reports (promtool $promok)" "$WORK/err"; fi
reap $apid

# ------------------------------------------------------- fork and exec
G=${GP}f
tguarded 60 GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" forkjoin 1048576; rc=$?
if [ $rc = 0 ] && [ "$(sed -n 1p "$WORK/out")" = "free 6291456 total 8388608 devtotal 8388608" ] \
   && [ "$(sed -n 2p "$WORK/out")" = "free 7340032 total 8388608 devtotal 8388608" ]; then
    ok "group: a forked child joins as a member of its own, holding none of its parent's share; its exit gives back only its own"
else bad "group and fork (exit $rc)" "$WORK/out"; fi
G=${GP}x
gbg m GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" member 1048576 "$WORK/never" 0 0; mpid=$!
await "$WORK/m.out" joined
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" execinfo 2097152
[ "$(cat "$WORK/out")" = "free 7340032 total 8388608 devtotal 8388608" ] \
    && ok "group: a member that execs: the program it becomes starts with nothing, the old image's share is back" \
    || bad "group and exec" "$WORK/out"
reap $mpid

# the command's --group sets GPUMEM_GROUP (not under a sanitizer: see cli.sh)
if [ -z "${GMG_SANITIZER:-}" ]; then
    G=${GP}c
    gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 3145728; apid=$!
    await "$WORK/a.out" held
    "$B/gpumemguard" --group $G --limit 8M -- "$GT" info >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && [ "$(cat "$WORK/out")" = "free 5242880 total 8388608 devtotal 8388608" ] \
        && ok "gpumemguard --group NAME --limit 8M: the program is a member of group NAME" || bad "--group (rc $rc)" "$WORK/err"
    reap $apid
else
    skip "gpumemguard --group" "the command preloads the guard alone (sanitizer build)"
fi

# ------------------------------------------------ groups and users apart
G=${GP}a
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 6291456; apid=$!
await "$WORK/a.out" held
guarded GPUMEM_GROUP=${GP}b GPUMEM_LIMIT=8M "$GT" take 8388608 0; t1=$?
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 4194304 0; t2=$?
if [ $t1 = 0 ] && [ $t2 = 1 ]; then
    ok "group: two groups of one user do not see each other"
else bad "two groups: other group $t1, same group $t2" "$WORK/out"; fi
if [ "$GU" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD="$PRELOAD" GPUMEM_GROUP=$G GPUMEM_LIMIT=8M \
        "$GT" take 8388608 0 >"$WORK/out" 2>"$WORK/err"; t3=$?
    if [ $t3 = 0 ] && [ "$(stat -c '%u %a' "$SHM/gpumemguard-65534-$G" 2>/dev/null)" = "65534 600" ]; then
        ok "group: two users with one group name do not see each other (uid 65534 got the whole budget, its own segment, mode 0600)"
    else bad "two users (rc $t3)" "$WORK/err"; fi
else
    skip "group: two users" "not root: no setuid to a second user"
fi
reap $apid

# ---------------------------------------------------- segments refused
if [ "$GU" = 0 ]; then
    f="$SHM/$(seg ${GP}e)"; : >"$f"; chmod 600 "$f"; chown 65534:65534 "$f"
    guarded GPUMEM_GROUP=${GP}e "$GT" info; rc=$?
    [ $rc = 2 ] && has "is owned by uid 65534, not by this user (uid 0)" "$WORK/err" && [ ! -s "$f" ] && [ ! -s "$WORK/out" ] \
        && ok "group: a segment owned by another user stops the process at start-up, untouched" \
        || bad "segment of another user (rc $rc)" "$WORK/err"
else
    skip "group: a segment owned by another user" "not root: cannot make a file of another user"
fi
f="$SHM/$(seg ${GP}m)"; : >"$f"; chmod 644 "$f"
guarded GPUMEM_GROUP=${GP}m "$GT" info; rc=$?
[ $rc = 2 ] && has "has mode 0644, not 0600" "$WORK/err" && ok "group: a segment others may read is refused" \
    || bad "segment mode (rc $rc)" "$WORK/err"
f="$SHM/$(seg ${GP}z)"; head -c 100 /dev/zero >"$f"; chmod 600 "$f"
guarded GPUMEM_GROUP=${GP}z "$GT" info; rc=$?
[ $rc = 2 ] && has "is 100 bytes, not the" "$WORK/err" && [ "$(stat -c %s "$f")" = 100 ] \
    && ok "group: a segment of another size (another version) is refused, not resized" || bad "segment size (rc $rc)" "$WORK/err"
size=$("$GT" size)
f="$SHM/$(seg ${GP}v)"
# this layout's header, all but the version: magic, version, size, slots, devices, uid
python3 -c 'import struct,sys; n=int(sys.argv[1]); sys.stdout.buffer.write(struct.pack("<QIIIII", 0x70756f7267676d67, 99, n, 256, 64, int(sys.argv[2])).ljust(n, b"\0"))' "$size" "$GU" >"$f"
chmod 600 "$f"
guarded GPUMEM_GROUP=${GP}v "$GT" info; rc=$?
[ $rc = 2 ] && has "is not a group segment of this guard (version 99" "$WORK/err" \
    && ok "group: a segment of another layout version is refused with a message, no crash" || bad "segment version (rc $rc)" "$WORK/err"
f="$SHM/$(seg ${GP}g)"; head -c "$size" /dev/urandom >"$f"; chmod 600 "$f"
guarded GPUMEM_GROUP=${GP}g "$GT" info; rc=$?
[ $rc = 2 ] && has "unknown contents" "$WORK/err" && ok "group: a segment of unknown contents is refused" \
    || bad "segment contents (rc $rc)" "$WORK/err"
ln -s "$WORK/target" "$SHM/$(seg ${GP}l)"
guarded GPUMEM_GROUP=${GP}l "$GT" info; rc=$?
[ $rc = 2 ] && [ ! -e "$WORK/target" ] && has "cannot open the group's shared memory" "$WORK/err" \
    && ok "group: a segment name that is a symlink is refused, nothing created through it" || bad "segment symlink (rc $rc)" "$WORK/err"
guarded GPUMEM_GROUP=${GP}n "$GT" info; rc=$?
[ $rc = 0 ] && [ "$(stat -c %a "$SHM/$(seg ${GP}n)")" = 600 ] && ok "group: a new segment is mode 0600" || bad "new segment mode (rc $rc)" "$WORK/err"
# ------------------------- a member's timeline starts with its own moments
# The group's peak was set before this member was born: its timeline's
# group samples show what the group held while it lived, not that peak.
G=${GP}p
gbg sp GPUMEM_GROUP=$G GPUMEM_LIMIT=64M "$GT" spike 31457280; spid=$! # 30 MiB made and freed; it stays
await "$WORK/sp.out" freed
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=64M GPUMEM_REPORT="$WORK/late.json" GPUMEM_REPORT_FORMAT=json "$GT" take 1048576 0
reap $spid
if jq -e '.timeline.group[0].samples | length > 0 and (map(.[1]) | max) == 1048576' "$WORK/late.json" >/dev/null 2>&1; then
    ok "group: a member that joins after the group's peak samples the group's bytes from its own start (1 MiB), not the old peak (30 MiB)"
else
    bad "a late member's timeline: $(jq -c '.timeline.group' "$WORK/late.json" 2>&1)" "$WORK/err"
fi
# so does a fork child's, when the group's peak came just before the fork
# (after its parent's last sample)
G=${GP}q
rm -f "$WORK"/fk.*.json
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=64M GPUMEM_REPORT="$WORK/fk.%p.json" GPUMEM_REPORT_FORMAT=json "$GT" spikefork 31457280
cpid=$(sed -n 's/^child pid //p' "$WORK/out")
if [ -n "$cpid" ] && jq -e '.timeline.group[0].samples | length > 0 and (map(.[1]) | max) == 1048576' "$WORK/fk.$cpid.json" >/dev/null 2>&1; then
    ok "group: a fork child made just after its parent's spike samples the group's bytes from its own start (1 MiB), not the spike (30 MiB)"
else
    bad "a fork child's group timeline: $(jq -c '.timeline.group' "$WORK/fk.$cpid.json" 2>&1)" "$WORK/out"
fi

miss=""
for name in "a/b" "" ".hidden" "x y" "$(printf '%065d' 0)"; do
    guarded GPUMEM_GROUP="$name" "$T/nulls"; rc=$?
    [ $rc = 2 ] && has "GPUMEM_GROUP='$name' is not valid" "$WORK/err" && has "Accepted:" "$WORK/err" \
        && ! has "nulls" "$WORK/out" || miss="$miss [$name] rc $rc"
done
[ -z "$miss" ] && ok "group: bad names (a/b, empty, .hidden, a space, 65 characters) stop the process at start-up" \
    || bad "bad group names:$miss" "$WORK/err"

rm -f "$SHM/gpumemguard-$GU-$GP"* "$SHM/gpumemguard-65534-$GP"*
