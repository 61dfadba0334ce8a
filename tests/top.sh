# top.sh - `gpumemguard top`: the status page each guarded process publishes
# under /dev/shm and the command that shows them. Sourced by run.sh (uses its
# helpers and $B, $T, $ROOT, $WORK, $PRELOAD). Every process started here is
# named with --pid when top is asked, so other guarded processes of this
# machine (other test runs) never change what is checked.

build toptest tests/top/toptest.c -L"$B/sim" -l:libcuda.so.1
TT="$T/toptest"
TOPCMD="$B/gpumemguard"
TU=$(id -u)
TG="gmgtop$$"
MiB=1048576
tpage() { echo "/dev/shm/gpumemguard-top-$TU-$1"; }
# tbg NAME VAR=VALUE... CMD...: a guarded process in the background ($! its pid)
tbg() { local n=$1; shift; rm -f "$WORK/$n.ready" "$WORK/$n.done"; env LD_PRELOAD="$PRELOAD" "$@" >"$WORK/$n.out" 2>"$WORK/$n.err" & }
# tready FILE PID: up to 10 s for FILE to exist while PID lives
tready() { for _ in $(seq 200); do [ -e "$1" ] && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.05; done; return 1; }
# tq PID JQ: the JSON frame's field for PID
tq() { "$TOPCMD" top --json --pid "$1" | jq -r ".processes[0]${2}"; }
# tsettle PID BYTES: up to 10 s until top shows PID holding BYTES
tsettle() { for _ in $(seq 200); do [ "$(tq "$1" '.used // empty')" = "$2" ] && return 0; sleep 0.05; done; return 1; }
# tsite PID REGEX: up to 10 s until top shows PID's biggest site with a name
# that matches REGEX. A page is written every second, and one written while
# an allocation is charged to the quota but not yet in the live table (the
# driver's call between) has its bytes and not its site: the next has both.
tsite() { for _ in $(seq 200); do [ "$(tq "$1" ".site.name // \"\" | test(\"$2\")")" = true ] && return 0; sleep 0.05; done; return 1; }
# twait PID JQ VALUE: up to 10 s until top shows JQ of PID as VALUE (a page
# written between a charge and its record, or before a refusal was counted,
# is followed by one that has them)
twait() { for _ in $(seq 200); do [ "$(tq "$1" "$2")" = "$3" ] && return 0; sleep 0.05; done; return 1; }
# tgone PATH: up to 5 s until PATH is no more
tgone() { for _ in $(seq 100); do [ -e "$1" ] || [ -L "$1" ] || return 0; sleep 0.05; done; return 1; }
tkill() { for p in "$@"; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done; }
# tplant SRC DST PID [START [UID]]: a copy of page SRC as DST, its pid PID (and
# its start time START, its uid UID): a page a reader would take if nothing
# else were checked. TPLANT_NS=N: of pid namespace N, written at
# TPLANT_WRITTEN (nanoseconds since the epoch; now when unset); TPLANT_TORN=1:
# one that reads as being written (begun past done). Put in place
# whole (a rename): a top running meanwhile never reads it half made.
tplant() {
    python3 - "$@" <<'EOF'
import os, struct, sys, time
src, dst, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(100):
    b = bytearray(open(src, "rb").read())
    if b[8:16] == b[-8:] and b[8:16] != bytes(8):
        break
    time.sleep(0.01)
struct.pack_into("<i", b, 24, pid)
if len(sys.argv) > 4:
    struct.pack_into("<Q", b, 32, int(sys.argv[4]))
if len(sys.argv) > 5:
    struct.pack_into("<I", b, 28, int(sys.argv[5]))
if os.environ.get("TPLANT_NS"):
    struct.pack_into("<QQ", b, 40, int(os.environ["TPLANT_NS"]), int(os.environ.get("TPLANT_WRITTEN") or time.time_ns()))
if os.environ.get("TPLANT_TORN"):
    struct.pack_into("<Q", b, len(b) - 8, struct.unpack_from("<Q", b, 8)[0] + 1)  # begun past done: being written
fd = os.open(dst + ".planting", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, b)
os.close(fd)
os.rename(dst + ".planting", dst)
EOF
}
starttime() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }

if ! command -v jq >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    skip "gpumemguard top" "no jq or python3"
else
# ------------------------------------------- several processes and a group
tbg A GPUMEM_GROUP=$TG GPUMEM_LIMIT=8M "$TT" hold "$WORK/A.ready" "$WORK/A.done" $((3 * MiB)) $MiB 0 0; PA=$!
tbg B GPUMEM_GROUP=$TG GPUMEM_LIMIT=8M "$TT" hold "$WORK/B.ready" "$WORK/B.done" $((2 * MiB)) 0 $((16 * MiB)) 0; PB=$!
tbg C GPUSIM_DEVICES=2 "$TT" hold "$WORK/C.ready" "$WORK/C.done" $((5 * MiB)) 0 0 $MiB; PC=$!
tbg E "$TT" grow "$WORK/E.ready" "$WORK/E.done" 2048 2000; PE=$!
PD=""; NP=4
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    NP=5
    tbg D python3 tests/top/holder.py "$WORK/D.ready" "$WORK/D.done" 1572864; PD=$!
fi
started=1
for n in A:$PA B:$PB C:$PC E:$PE ${PD:+D:$PD}; do
    tready "$WORK/${n%%:*}.ready" "${n#*:}" || { started=0; bad "top: process ${n%%:*} did not start" "$WORK/${n%%:*}.err"; }
done
if [ "$started" = 1 ] && tsettle $PA $((4 * MiB)) && tsettle $PB $((2 * MiB)) && tsettle $PC $((6 * MiB)) \
   && tsite $PA "^big_site " && tsite $PC "^big_site " && { [ -z "$PD" ] || tsettle $PD 1572864; } \
   && twait $PB ' | "\(.devices[0].refused) \(.devices[0].live_allocations)"' '1 1' \
   && twait $PA '.devices[0].live_allocations' 2; then
    PIDS="--pid $PA --pid $PB --pid $PC --pid $PE${PD:+ --pid $PD}"
    "$TOPCMD" top --json $PIDS >"$WORK/top.json"
    pj() { jq -c "$2" <<<"$(jq -c ".processes[] | select(.pid == $1)" "$WORK/top.json")"; }
    sel='[.group, .used, .devices[0].used, .devices[0].limit, .devices[0].peak, .devices[0].refused, .devices[0].driver_oom, .devices[0].live_allocations, .site.bytes, .site.allocations, .site.device, (.site.name | test("^big_site ")), (.command | test("toptest hold .*A.ready"))]'
    a=$(pj $PA "$sel")
    b=$(pj $PB '[.group, .devices[0].used, .devices[0].peak, .devices[0].refused, .refused, .devices[0].live_allocations, .site.bytes]')
    c=$(pj $PC '[.group, (.devices | length), .devices[0].used, .devices[0].limit, .devices[1].used, .devices[1].live_allocations, .site.bytes, (.site.name | test("^big_site "))]')
    g=$(jq -c ".groups[] | select(.name == \"$TG\") | [.uid, .members, .members_shown, .devices[0].used, .devices[0].budget, .devices[0].peak]" "$WORK/top.json")
    n=$(jq '.processes | length' "$WORK/top.json")
    if [ "$a" = "[\"$TG\",4194304,4194304,8388608,4194304,0,0,2,3145728,1,0,true,true]" ] \
       && [ "$b" = "[\"$TG\",2097152,2097152,1,1,1,2097152]" ] && has refused "$WORK/B.out" \
       && [ "$c" = "[null,2,5242880,0,1048576,1,5242880,true]" ] \
       && [ "$g" = "[$TU,2,2,6291456,8388608,6291456]" ] && [ "$n" = "$NP" ]; then
        ok "top --json: each process's bytes in use, limit, peak, refusals, live allocations and biggest call site per device as it holds them (two devices, a refusal), the group's 6 MiB of its 8 MiB budget with 2 members"
    else bad "top --json: A=$a B=$b C=$c group=$g n=$n" "$WORK/top.json"; fi

    if [ -n "$PD" ]; then
        L=$(grep -n '# SITE' tests/top/holder.py | cut -d: -f1)
        d=$(pj $PD '[.site.bytes, .site.name, (.command | test("python3? tests/top/holder.py "))]')
        if [[ "$d" =~ ^\[1572864,\"load_weights\ .*tests/top/holder.py:$L\",true\]$ ]]; then
            ok "top: a Python program's biggest site is its Python frame (load_weights holder.py:$L), its command the interpreter with the script and arguments"
        else bad "top: Python site: $d (line $L)" "$WORK/top.json"; fi
    fi

    # growth over the last interval: the growing process, and sorting by it
    # (the still one's growth is 0 once a tick came after its last
    # allocation: on a loaded machine that tick can come late)
    grew=""
    for _ in $(seq 100); do
        grew=$(tq $PE ' | [.growth, .devices[0].growth, .interval_ms] | @tsv')
        read -r g1 g2 iv <<<"$grew"
        still=$(tq $PA '.growth')
        [ "${g1:-0}" -gt 0 ] 2>/dev/null && [ "$still" = 0 ] && break
        sleep 0.05
    done
    grew="$grew; the still one's: $still"
    if [ "${g1:-0}" -gt 0 ] && [ "$g1" = "$g2" ] && [ "$((g1 % 2048))" = 0 ] && [ "$iv" -ge 500 ] && [ "$iv" -le 3000 ] \
       && [ "$still" = 0 ]; then
        ok "top: growth over the last interval ($g1 bytes in $iv ms for a process allocating 2 KiB every 50 ms; 0 for one that holds still)"
    else bad "top: growth: $grew" "$WORK/top.json"; fi

    # the text frame, once the holders' pages have been written twice since
    # their last allocation (growth 0: on a loaded machine a tick can come late)
    for _ in $(seq 100); do
        [ "$(tq $PA '.growth')" = 0 ] && [ "$(tq $PB '.growth')" = 0 ] && [ "$(tq $PC '.growth')" = 0 ] && break
        sleep 0.1
    done
    "$TOPCMD" top --once $PIDS >"$WORK/top.txt"
    rows() { grep -E '^ *[0-9]+ +[0-9]+ ' "$1" | awk '{print $1}' | tr '\n' ' '; }
    order=$(rows "$WORK/top.txt" | tr ' ' '\n' | grep -xE "$PA|$PB|$PC" | tr '\n' ' ')
    if grep -qE "^gpumemguard top - .* - $NP processes, 1 group - sorted by bytes$" "$WORK/top.txt" \
       && grep -qE "^ +PID +DEV +IN USE +LIMIT +PEAK +REFUSED +OOMS +GROWTH +GROUP +COMMAND$" "$WORK/top.txt" \
       && [ "$order" = "$PC $PA $PB " ] \
       && grep -qE "^ *$PA +0 +4\.0 MiB +8\.0 MiB +4\.0 MiB +0 +0 +0 +$TG +.*toptest hold " "$WORK/top.txt" \
       && grep -qE "^ *$PB +0 +2\.0 MiB +8\.0 MiB +2\.0 MiB +1 +0 +0 +$TG " "$WORK/top.txt" \
       && grep -qE "^ *$PC +0 +5\.0 MiB +none +5\.0 MiB +0 +0 +0 +- " "$WORK/top.txt" \
       && grep -qE "^ +1 +1\.0 MiB +none +1\.0 MiB +0 +0 +0$" "$WORK/top.txt" \
       && grep -qE "^ +biggest site: 3\.0 MiB in 1 allocation on device 0: big_site " "$WORK/top.txt" \
       && has "group $TG (uid $TU): 2 members; device 0 6.0 MiB in use of 8.0 MiB budget, peak 6.0 MiB" "$WORK/top.txt"; then
        ok "top --once: a line per process and device (pid, in use, limit, peak, refused, driver OOMs, growth, group, command), its biggest site, a line for the group with its budget, biggest first"
    else bad "top --once (order: $order)" "$WORK/top.txt"; fi

    r=$("$TOPCMD" top --once --sort refused $PIDS | grep -E '^ *[0-9]+ +[0-9]+ ' | awk 'NR==1{print $1}')
    gr=$("$TOPCMD" top --once --sort growth $PIDS | grep -E '^ *[0-9]+ +[0-9]+ ' | awk 'NR==1{print $1}')
    only=$("$TOPCMD" top --once --group "$TG" | rows /dev/stdin)
    onlyj=$("$TOPCMD" top --json --group "$TG" | jq -c '[.processes[].pid] | sort')
    one=$("$TOPCMD" top --json --pid $PC | jq -c '[[.processes[].pid], (.groups | length)]')
    if [ "$r" = "$PB" ] && [ "$gr" = "$PE" ] && { [ "$only" = "$PA $PB " ] || [ "$only" = "$PB $PA " ]; } \
       && [ "$onlyj" = "[$(printf '%s\n' $PA $PB | sort -n | paste -sd,)]" ] && [ "$one" = "[[$PC],0]" ]; then
        ok "top: --sort refused and --sort growth put the refused and the growing process first; --group and --pid filter"
    else bad "top: sort/filter: refused first=$r growth first=$gr group=$only/$onlyj pid=$one" "$WORK/top.txt"; fi

    # ------------------------------------------------- the terminal view (tmux)
    if command -v tmux >/dev/null 2>&1; then
        TS="gmgtop$$"
        tcap() { tmux capture-pane -p -t "$TS" >"$WORK/pane" 2>/dev/null; }
        # twait TEXT: up to 10 s for the pane to show TEXT
        twait() { for _ in $(seq 200); do tcap; grep -qF -- "$1" "$WORK/pane" && return 0; sleep 0.05; done; return 1; }
        tfirst() { grep -E '^ *[0-9]+ +[0-9]+ ' "$WORK/pane" | awk 'NR==1{print $1}'; }
        tmux -f /dev/null new-session -d -s "$TS" -x 160 -y 40 "env PS1='$ ' bash --norc --noprofile" 2>"$WORK/tmux.err"
        tmux send-keys -t "$TS" "stty -a >$WORK/stty.before; $TOPCMD top $PIDS; stty -a >$WORK/stty.after; echo TOP-\$((40 + 2))-EXITED" Enter
        steps=""
        twait "sorted by bytes (b bytes, g growth, r refused, q quit)" && [ "$(tfirst)" = "$PC" ] && grep -q "big_site" "$WORK/pane" \
            && steps="drew"
        if [ "$steps" = drew ]; then
            tmux send-keys -t "$TS" r
            twait "sorted by refused" && [ "$(tfirst)" = "$PB" ] && steps="$steps refused"
            tmux send-keys -t "$TS" g
            twait "sorted by growth" && [ "$(tfirst)" = "$PE" ] && steps="$steps growth"
            tmux send-keys -t "$TS" b
            twait "sorted by bytes" && [ "$(tfirst)" = "$PC" ] && steps="$steps bytes"
            # it refreshes: the growing process's bytes change on screen
            tcap; before=$(grep -E "^ *$PE " "$WORK/pane"); sleep 2.2; tcap; after=$(grep -E "^ *$PE " "$WORK/pane")
            [ -n "$before" ] && [ "$before" != "$after" ] && steps="$steps refresh"
            tmux send-keys -t "$TS" q
            twait "TOP-42-EXITED" && ! grep -q "sorted by" "$WORK/pane" && cmp -s "$WORK/stty.before" "$WORK/stty.after" \
                && steps="$steps quit"
        fi
        if [ "$steps" = "drew refused growth bytes refresh quit" ]; then
            ok "top in a terminal (tmux): draws the processes biggest first, r/g/b sort by refusals, growth and bytes, it refreshes, q quits with the screen and terminal settings restored"
        else bad "top in tmux: only '$steps'" "$WORK/pane"; fi

        # SIGTERM while it runs: the terminal comes back as it was
        tmux send-keys -t "$TS" "clear; $TOPCMD top --pid $PA; stty -a >$WORK/stty.after2; echo TOP-\$((40 + 3))-EXITED" Enter
        killed=""
        keys=""
        if twait "sorted by bytes"; then
            # function keys and arrows (and the wheel, which terminals send
            # as arrows there) are no keys of its: F3 is ESC O R, F2 ESC O Q
            tmux send-keys -t "$TS" F3 F2 Down F12 PageDown
            sleep 0.6; tcap
            grep -q "sorted by bytes" "$WORK/pane" && ! grep -q "TOP-43-EXITED" "$WORK/pane" && keys=kept
            tmux send-keys -t "$TS" r
            twait "sorted by refused" && keys="$keys r"
            tmux send-keys -t "$TS" -H 1b 5b 5b 42 1b 1b 5b 42 # the Linux console's F2; Alt+Down (B: bytes)
            sleep 0.6; tcap
            grep -q "sorted by refused" "$WORK/pane" && keys="$keys kept"
            shpid=$(tmux list-panes -t "$TS" -F '#{pane_pid}')
            tpid=$(ps -o pid= --ppid "$shpid" | tr -d ' ' | head -1)
            [ -n "$tpid" ] && kill -TERM "$tpid" && twait "TOP-43-EXITED" && ! grep -q "sorted by" "$WORK/pane" \
                && cmp -s "$WORK/stty.before" "$WORK/stty.after2" && killed=yes
        fi
        if [ "$killed" = yes ]; then
            ok "top killed with SIGTERM: the terminal's settings and screen are restored"
        else bad "top and SIGTERM: terminal not restored" "$WORK/pane"; fi
        [ "$keys" = "kept r kept" ] && ok "top: function keys (the Linux console's too), arrows, Alt+arrows and page keys neither quit nor sort (their escape sequences are skipped); r still sorts" \
            || bad "top and escape sequences: '$keys'" "$WORK/pane"
        tmux kill-session -t "$TS" 2>/dev/null
    else
        skip "top in a terminal" "no tmux (scripts/ensure-deps.sh installs it)"
    fi

    # ---------------------------------------------- pages that are not taken
    sleep 60 & PS=$!
    # a --pid with no page: the table is empty, and says why on stderr
    "$TOPCMD" top --once --pid $PS >"$WORK/top-none.out" 2>"$WORK/top-none.err"; rc=$?
    [ $rc = 0 ] && grep -q " - 0 processes, " "$WORK/top-none.out" \
        && has "gpumemguard top: no guarded process $PS of yours" "$WORK/top-none.err" \
        && ok "top --once --pid of a process without the guard: an empty table, and a line saying there is none" \
        || bad "top --once --pid of an unguarded process (rc $rc)" "$WORK/top-none.err"
    planted=$(tpage $PS)
    tplant "$(tpage $PA)" "$planted" $PS
    n1=$("$TOPCMD" top --json --pid $PS | jq '.processes | length')
    gone1=$([ -e "$planted" ] && echo kept || echo removed)
    tplant "$(tpage $PA)" "$planted" $PS "$(starttime $PS)"
    n2=$("$TOPCMD" top --json --pid $PS | jq '.processes | length') # the control: this one is taken
    nobody=$(id -u nobody 2>/dev/null || echo 65534)
    chown "$nobody" "$planted" 2>/dev/null
    n3=$("$TOPCMD" top --json --pid $PS | jq '.processes | length')
    gone3=$([ -e "$planted" ] && echo kept || echo removed)
    chown "$TU" "$planted"; chmod 0644 "$planted"
    n4=$("$TOPCMD" top --json --pid $PS | jq '.processes | length')
    chmod 0600 "$planted"; mv "$planted" "$WORK/planted.page"; ln -s "$WORK/planted.page" "$planted"
    n5=$("$TOPCMD" top --json --pid $PS | jq '.processes | length')
    link5=$([ -L "$planted" ] && echo kept || echo removed)
    rm -f "$planted"
    if [ "$n1" = 0 ] && [ "$gone1" = removed ] && [ "$n2" = 1 ] && [ "$n3" = 0 ] && [ "$gone3" = kept ] \
       && [ "$n4" = 0 ] && [ "$n5" = 0 ] && [ "$link5" = kept ]; then
        ok "top: a page for a live pid with another start time is a dead process's (removed); a valid page owned by another user, of mode 0644, or reached through a symlink is ignored and left"
    else bad "top: planted pages: start time $n1/$gone1, control $n2, other owner $n3/$gone3, mode $n4, symlink $n5/$link5"; fi
    # pages of another pid namespace (a container sharing /dev/shm): one not
    # written for 30 s is a dead process's, removed by top and replaced by a
    # process of ours that takes its name; one written lately is left alone
    tns() { TPLANT_NS=4242 TPLANT_WRITTEN=$3 tplant "$(tpage $PA)" "$1" "$2"; } # tns DST PID WRITTEN_NS ('': now)
    tns "$(tpage $PS)" $PS 1000000000
    "$TOPCMD" top --once >/dev/null 2>&1
    old_gone=$([ -e "$(tpage $PS)" ] && echo kept || echo removed)
    tns "$(tpage $PS)" $PS ''
    "$TOPCMD" top --once >/dev/null 2>&1
    new_kept=$([ -e "$(tpage $PS)" ] && echo kept || echo removed)
    rm -f "$(tpage $PS)"
    rm -f "$WORK/N.ready" "$WORK/N.done"
    cat >"$WORK/nsrun.sh" <<'NSEOF'
# nsrun.sh UID SRC CMD...: SRC as another namespace's page, not written for 30 s, at this pid's name; then CMD here
dst=/dev/shm/gpumemguard-top-$1-$$; src=$2; shift 2
python3 -c 'import os,struct,sys; b=bytearray(open(sys.argv[1],"rb").read()); struct.pack_into("<i",b,24,int(sys.argv[3])); struct.pack_into("<QQ",b,40,4242,1000000000); fd=os.open(sys.argv[2]+".planting",os.O_WRONLY|os.O_CREAT|os.O_TRUNC,0o600); os.write(fd,b); os.close(fd); os.rename(sys.argv[2]+".planting",sys.argv[2])' "$src" "$dst" $$
exec "$@"
NSEOF
    bash "$WORK/nsrun.sh" "$TU" "$(tpage $PA)" env LD_PRELOAD="$PRELOAD" "$TT" hold "$WORK/N.ready" "$WORK/N.done" 1048576 0 0 0 \
        >"$WORK/N.out" 2>"$WORK/N.err" &
    PN=$!
    taken=no
    # (tsettle: twait is the pane's by now, where tmux is)
    if tready "$WORK/N.ready" $PN && tsettle $PN 1048576; then taken=yes; fi
    touch "$WORK/N.done"; wait $PN 2>/dev/null
    if [ "$old_gone" = removed ] && [ "$new_kept" = kept ] && [ "$taken" = yes ]; then
        ok "top: a page of another pid namespace not written for 30 s is removed, and replaced by a process of ours at its name; one written lately is left"
    else bad "top: pages of another pid namespace: old $old_gone, lately $new_kept, our process at its name $taken" "$WORK/N.err"; fi
    # 40 pages that always read as being written (begun 2, done 1), for live
    # processes of ours: each is given up without a wait of its own, so top
    # answers at once (at 200 ms each it took 8 s), and the real page shows
    slp=""
    for i in $(seq 40); do sleep 60 & slp="$slp $!"; done
    # (planted by one interpreter: 80 of them took 10-20 s of the suite)
    python3 - "$(tpage $PA)" "$TU" $slp <<'EOF'
import os, struct, sys, time
src, uid, pids = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
for _ in range(100):
    b = bytearray(open(src, "rb").read())
    if b[8:16] == b[-8:] and b[8:16] != bytes(8):
        break
    time.sleep(0.01)
for pid in pids:
    start = int(open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()[19])
    struct.pack_into("<i", b, 24, pid)
    struct.pack_into("<Q", b, 32, start)
    struct.pack_into("<Q", b, 8, 2)          # done 2, begun 1: always being written
    struct.pack_into("<Q", b, len(b) - 8, 1)
    dst = f"/dev/shm/gpumemguard-top-{uid}-{pid}"
    fd = os.open(dst + ".planting", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b)
    os.close(fd)
    os.rename(dst + ".planting", dst)
EOF
    timeout 4 "$TOPCMD" top --json >"$WORK/busy.json" 2>"$WORK/busy.err"; rc=$?
    nb=$(jq "[.processes[] | select(.pid == $PA)] | length" "$WORK/busy.json" 2>/dev/null)
    nw=$(jq --argjson s "[$(echo $slp | tr ' ' ',')]" '[.processes[] | select(.pid as $p | $s | index($p))] | length' "$WORK/busy.json" 2>/dev/null)
    for p in $slp; do rm -f "$(tpage $p)"; kill $p 2>/dev/null; done
    wait $slp 2>/dev/null
    if [ $rc = 0 ] && [ "$nb" = 1 ] && [ "$nw" = 0 ]; then
        ok "top: 40 pages that always read as being written cost it no wait each: it answers (within 4 s; 8 s before), the real page shown, none of them"
    else bad "top with pages always being written (rc $rc, real page $nb, planted $nw)" "$WORK/busy.err"; fi
    if [ "$TU" = 0 ] && command -v setpriv >/dev/null 2>&1; then
        u=$(setpriv --reuid="$nobody" --regid="$nobody" --clear-groups "$TOPCMD" top --json --pid $PA 2>&1 | jq '.processes | length' 2>&1)
        if [ "$u" = 0 ]; then ok "top run by another user does not show root's processes"
        else bad "top as nobody: $u processes of root's"; fi
        # a page of nobody's, well made, naming root's unguarded process
        forged="/dev/shm/gpumemguard-top-$nobody-$PS"
        tplant "$(tpage $PA)" "$forged" $PS "$(starttime $PS)" "$nobody"
        chown "$nobody" "$forged"
        n6=$("$TOPCMD" top --json --pid $PS | jq '.processes | length')
        kept6=$([ -e "$forged" ] && echo kept || echo removed)
        rm -f "$forged"
        if [ "$n6" = 0 ] && [ "$kept6" = kept ]; then
            ok "top as root: a page another user made for root's process (its pid and start time) is not shown, and left"
        else bad "top as root: a page of nobody's for root's process: $n6 shown, $kept6"; fi
    fi
    tkill $PS

    touch "$WORK/A.done" "$WORK/B.done" "$WORK/C.done" "$WORK/E.done" ${PD:+"$WORK/D.done"}
    wait $PA $PB $PC $PE $PD 2>/dev/null
    left=""
    for p in $PA $PB $PC $PE $PD; do [ -e "$(tpage $p)" ] && left="$left $p"; done
    if [ -z "$left" ]; then ok "top: each process's status page is removed when it exits"
    else bad "top: pages left after exit:$left"; fi
else
    bad "top: the processes never showed what they hold" "$WORK/A.err"
    touch "$WORK/A.done" "$WORK/B.done" "$WORK/C.done" "$WORK/E.done" "$WORK/D.done"
    wait $PA $PB $PC $PE $PD 2>/dev/null
fi
rm -f "/dev/shm/gpumemguard-$TU-$TG"

# ------------------------------- a process that used only its second device
tbg O GPUSIM_DEVICES=2 "$TT" hold "$WORK/O.ready" "$WORK/O.done" 0 0 0 $MiB; PO=$!
if tready "$WORK/O.ready" $PO && tsettle $PO $MiB; then
    "$TOPCMD" top --once --pid $PO >"$WORK/topo.txt"
    if grep -qE "^ *$PO +1 +1\.0 MiB " "$WORK/topo.txt" && ! grep -qE "^ *($PO)? +0 +0 " "$WORK/topo.txt"; then
        ok "top --once: a process that used device 1 only has a line for device 1, none for device 0"
    else bad "top: a process on its second device only" "$WORK/topo.txt"; fi
else bad "top: process O" "$WORK/O.err"; fi
touch "$WORK/O.done"; tkill $PO

# ------------------------------------------------------------ a dead process
tbg F "$TT" hold "$WORK/F.ready" "$WORK/F.done" $MiB 0 0 0; PF=$!
if tready "$WORK/F.ready" $PF && tsettle $PF $MiB; then
    # (a hard link keeps the page's file: another test run's top on this
    # machine, which cleans every dead page of ours, may unlink its name
    # first; the link count then says so)
    FL="/dev/shm/gmgtest-F-$$.page"; ln "$(tpage $PF)" "$FL" 2>/dev/null
    tkill $PF
    there=$([ -e "$(tpage $PF)" ] && echo yes || echo no)
    [ "$there" = no ] && [ "$(stat -c %h "$FL" 2>/dev/null)" = 1 ] \
        && there=yes # unlinked by another suite's top or guarded process, not by the killed process
    n=$("$TOPCMD" top --json --pid $PF | jq '.processes | length')
    rm -f "$FL"
    if [ "$there" = yes ] && [ "$n" = 0 ] && [ ! -e "$(tpage $PF)" ]; then
        ok "top: a process killed with SIGKILL left its page; top skips it and removes it"
    else bad "top: dead process: page there=$there, listed $n, after: $(ls "$(tpage $PF)" 2>&1)"; fi
else bad "top: process F" "$WORK/F.err"; tkill $PF; fi

# the next guarded process of the user to publish a page removes a dead
# process's page, as top would (no top is run here); one of another user,
# one that reads as being written, and a live process's are left (the one
# being written names a live process with another start time: top leaves
# a page it cannot read whole while its pid lives, and a sweep that read it
# would take it for a dead process's)
tbg G "$TT" hold "$WORK/G.ready" "$WORK/G.done" $MiB 0 0 0; PG=$!
tbg K "$TT" hold "$WORK/K.ready" "$WORK/K.done" $MiB 0 0 0; PK=$!
if tready "$WORK/G.ready" $PG && tready "$WORK/K.ready" $PK && tready "$(tpage $PG)" $PG && tready "$(tpage $PK)" $PK; then
    GL="/dev/shm/gmgtest-G-$$.page"; ln "$(tpage $PG)" "$GL" 2>/dev/null
    true & PD1=$!; wait $PD1 # the pid of a process gone
    sleep 60 & PD2=$! # a live process without the guard
    tplant "$(tpage $PK)" "$(tpage $PD1)" $PD1
    chown "$(id -u nobody 2>/dev/null || echo 65534)" "$(tpage $PD1)" 2>/dev/null # another user's (root runs this)
    # (put in place already torn: whole for a moment, another suite's top
    # or guarded process would judge it, and rightly remove it)
    TPLANT_TORN=1 tplant "$(tpage $PK)" "$(tpage $PD2)" $PD2 1
    tkill $PG
    tbg H "$TT" hold "$WORK/H.ready" "$WORK/H.done" $MiB 0 0 0; PH=$!
    swept=no
    tready "$(tpage $PH)" $PH && tgone "$(tpage $PG)" && swept=yes
    sleep 0.3 # the sweep looks at every page once
    links=$(stat -c %h "$GL" 2>/dev/null); rm -f "$GL"
    other=$([ -e "$(tpage $PD1)" ] && echo kept || echo removed)
    torn=$([ -e "$(tpage $PD2)" ] && echo kept || echo removed)
    live=$([ -e "$(tpage $PK)" ] && echo kept || echo removed)
    [ "$(id -u)" = 0 ] || other=kept # not root: no page of another user's could be planted
    # (the sanitizer suites run side by side as root, and the other one's
    # top, root, removes a dead page of any user: there a removal may be
    # its; the plain suite runs beside no top)
    [ -n "${GMG_SANITIZER:-}" ] && other=kept
    if [ $swept = yes ] && [ "$links" = 1 ] && [ $other = kept ] && [ $torn = kept ] && [ $live = kept ]; then
        ok "a process killed with SIGKILL left its page; the next guarded process to publish one removes it (no top run); another user's, one being written and a live one's are left"
    else bad "dead pages at a guarded process's start: dead one removed $swept (links $links), another user's $other, being written $torn, live $live" "$WORK/H.err"; fi
    rm -f "$(tpage $PD1)" "$(tpage $PD2)"
    kill $PD2 2>/dev/null; wait $PD2 2>/dev/null
    touch "$WORK/H.done"; tkill $PH
else bad "dead pages at start: processes G, K" "$WORK/G.err"; fi
touch "$WORK/K.done" "$WORK/G.done"; tkill $PK $PG

# SIGTERM at its default action: the report, then the process ends by it, and
# its page goes with it (no reader needed)
{
    tbg T "$TT" hold "$WORK/T.ready" "$WORK/T.done" $MiB 0 0 0; PT=$!
    if tready "$WORK/T.ready" $PT && tsettle $PT $MiB; then
        kill -TERM $PT; wait $PT 2>/dev/null; st=$?
        if [ "$st" = 143 ] && [ ! -e "$(tpage $PT)" ] && has "fatal" "$WORK/T.err"; then
            ok "top: a process ended by SIGTERM (its report written first) removes its own page"
        else bad "top: SIGTERM: status $st, page $(ls "$(tpage $PT)" 2>&1)" "$WORK/T.err"; fi
    else bad "top: process T" "$WORK/T.err"; tkill $PT; fi
    rm -f "$(tpage $PT)"
}

# --------------------------------------------------------------- fork, exec
tbg K "$TT" fork "$WORK/K.ready" "$WORK/K.done" $MiB $((2 * MiB)); PK=$!
for _ in $(seq 200); do [ "$(ls "$WORK"/K.ready.* 2>/dev/null | wc -l)" = 2 ] && break; sleep 0.05; done
KC=$(ls "$WORK"/K.ready.* 2>/dev/null | sed 's/.*\.//' | grep -vx "$PK")
if [ -n "$KC" ] && tsettle $PK $MiB && tsettle "$KC" $((2 * MiB)) && tsite "$KC" "^small_site "; then
    ok "top: a forked child publishes a page of its own (its 2 MiB, its site) beside its parent's 1 MiB"
else bad "top: fork: child '$KC' (its site: $([ -n "$KC" ] && tq "$KC" '.site' | tr -d '\n'))" "$WORK/K.err"; fi
touch "$WORK/K.done"
# (bounded: a child that hung at its exit would keep its parent in waitpid)
for _ in $(seq 600); do kill -0 $PK 2>/dev/null || break; sleep 0.05; done
if kill -0 $PK 2>/dev/null; then # (its child, not waited for, keeps its pid)
    bad "top: fork: parent and child still there 30 s after they were told to end" "$WORK/K.err"
    tkill ${KC:-} $PK
fi
wait $PK 2>/dev/null

# (under TSan the instrumented library cannot be preloaded into sleep or sh)
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "top: exec, and a symlink at the page name" "TSan: sleep and sh are not instrumented"
else
tbg X "$TT" exec "$WORK/X.ready" 2 sleep 30; PX=$!
if tready "$WORK/X.ready" $PX; then
    gonex=no; tgone "$(tpage $PX)" && gonex=yes
    n=$("$TOPCMD" top --json --pid $PX | jq '.processes | length')
    if [ "$gonex" = yes ] && [ "$n" = 0 ] && kill -0 $PX 2>/dev/null; then
        ok "top: a guarded process that execs another program (same pid, same start time): the old program's page goes"
    else bad "top: exec: page gone=$gonex, listed $n" "$WORK/X.err"; fi
else bad "top: exec: not ready" "$WORK/X.err"; fi
tkill $PX

# a symlink planted at a process's own page name is never written through
: >"$WORK/target"
rm -f "$WORK/Y.ready"
env LD_PRELOAD="$PRELOAD" sh -c 'ln -s "$0" "$1$$" && exec "$2" hold "$3" "$4" 1048576 0 0 0' \
    "$WORK/target" "/dev/shm/gpumemguard-top-$TU-" "$TT" "$WORK/Y.ready" "$WORK/Y.done" >"$WORK/Y.out" 2>"$WORK/Y.err" &
PY=$!
if tready "$WORK/Y.ready" $PY; then
    sleep 1.2 # a tick or two
    n=$("$TOPCMD" top --json --pid $PY | jq '.processes | length')
    if [ ! -s "$WORK/target" ] && [ -L "$(tpage $PY)" ] && [ "$n" = 0 ]; then
        ok "top: a symlink at the process's page name: the guard writes nothing through it, top lists nothing"
    else bad "top: symlink at the page name: target $(wc -c <"$WORK/target") bytes, listed $n" "$WORK/Y.err"; fi
else bad "top: symlink process did not start" "$WORK/Y.err"; fi
touch "$WORK/Y.done"; wait $PY 2>/dev/null
rm -f "$(tpage $PY)"

# a stale file of ours at the page name (a dead process's of the same pid):
# replaced by the page, and no descriptor of it kept open
rm -f "$WORK/Z.ready"
env LD_PRELOAD="$PRELOAD" sh -c 'printf stale >"$0$$" && chmod 600 "$0$$" && exec "$1" hold "$2" "$3" 1048576 0 0 0' \
    "/dev/shm/gpumemguard-top-$TU-" "$TT" "$WORK/Z.ready" "$WORK/Z.done" >"$WORK/Z.out" 2>"$WORK/Z.err" &
PZ=$!
if tready "$WORK/Z.ready" $PZ && tsettle $PZ 1048576; then
    held=$(ls -l /proc/$PZ/fd 2>/dev/null | grep -c gpumemguard-top)
    if [ "$held" = 0 ]; then
        ok "top: a stale file of the process's own at its page name is replaced by its page, no descriptor of it left open"
    else bad "top: stale page file: $held descriptors of it open" "$WORK/Z.err"; fi
else bad "top: a stale file at the page name: the page never showed the process's 1 MiB" "$WORK/Z.err"; fi
touch "$WORK/Z.done"; wait $PZ 2>/dev/null
fi

# a command line of 60 emoji (two columns each, U+2705) in a 100-column
# live view of 4 rows: its line cut at the width, so the title stays on top
if command -v tmux >/dev/null 2>&1 && [ "${GMG_SANITIZER:-}" != tsan ]; then
    rm -f "$WORK/E.ready" "$WORK/E.done"
    PYE=$(python3 -c 'import sys; print(sys.executable)')
    env LD_PRELOAD="$PRELOAD" bash -c 'exec -a "$0" "$@"' "$(python3 -c 'print("\u2705" * 60)')" "$PYE" tests/top/holder.py \
        "$WORK/E.ready" "$WORK/E.done" 1048576 >"$WORK/E.out" 2>"$WORK/E.err" &
    PE=$!
    if tready "$WORK/E.ready" $PE; then
        TE="gmgtope$$"
        tmux -f /dev/null new-session -d -s "$TE" -x 100 -y 4 "$TOPCMD top --pid $PE; sleep 5" 2>"$WORK/tmux.err"
        for _ in $(seq 100); do
            tmux capture-pane -p -t "$TE" >"$WORK/epane" 2>/dev/null
            grep -q "$PE" "$WORK/epane" && break
            sleep 0.05
        done
        tmux kill-session -t "$TE" 2>/dev/null
        if head -1 "$WORK/epane" | grep -q "^gpumemguard top" && grep -q "$PE .*$(python3 -c 'print("\u2705" * 3)')" "$WORK/epane"; then
            ok "top in a terminal (tmux): a command line of emoji (two columns each) is cut at the width; the title stays on top"
        else bad "top in tmux with a command line of emoji" "$WORK/epane"; fi
    else bad "top: the process named with emoji never showed" "$WORK/E.err"; fi
    touch "$WORK/E.done"; wait $PE 2>/dev/null
fi

# names from a process reach the terminal as text only: its biggest site
# names terminal controls, its command line is not UTF-8 (argv[0] of bytes
# 0xff 0xfe); --once shows them as '?', --json is valid UTF-8
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    rm -f "$WORK/X.ready" "$WORK/X.done"
    PYX=$(python3 -c 'import sys; print(sys.executable)') # the interpreter itself (no launcher to exec it again)
    env LD_PRELOAD="$PRELOAD" bash -c 'exec -a "$0" "$@"' "$(printf 'bad\xff\xfeexe')" "$PYX" tests/top/holder.py \
        "$WORK/X.ready" "$WORK/X.done" 1572864 controls >"$WORK/X.out" 2>"$WORK/X.err" &
    PX=$!
    if tready "$WORK/X.ready" $PX && tsite $PX "red"; then
        "$TOPCMD" top --once --pid $PX >"$WORK/xonce" 2>&1
        "$TOPCMD" top --json --pid $PX >"$WORK/xjson" 2>&1
        if ! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$WORK/xonce" && ! grep -qaF $'\xc2\x9b' "$WORK/xonce" \
           && grep -q "biggest site: .*f?\[2J?\]0;PWNED??31mred" "$WORK/xonce" && grep -q "^ *$PX .* bad??exe" "$WORK/xonce" \
           && python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); p=d["processes"][0]; assert p["command"].startswith("bad??exe"), p; assert "\x1b" not in p["site"]["name"], p' "$WORK/xjson"; then
            ok "top: a process's names reach the terminal as text: controls and bytes that are not UTF-8 shown as '?' (--once), --json valid UTF-8"
        else bad "top: controls in a process's names" "$WORK/xonce"; fi
        if command -v tmux >/dev/null 2>&1; then # the live view: its title and screen the terminal's own
            TX="gmgtopx$$"
            tmux -f /dev/null new-session -d -s "$TX" -x 120 -y 20 "env PS1='$ ' bash --norc --noprofile" 2>"$WORK/tmux.err"
            tmux send-keys -t "$TX" "printf '\\033]2;mine\\007'; $TOPCMD top --pid $PX" Enter
            shown=""
            for _ in $(seq 200); do
                tmux capture-pane -p -t "$TX" >"$WORK/xpane" 2>/dev/null
                grep -qF "PWNED??31mred" "$WORK/xpane" && shown=yes && break
                sleep 0.05
            done
            title=$(tmux display-message -p -t "$TX" '#{pane_title}')
            tmux send-keys -t "$TX" q; sleep 0.3; tmux kill-session -t "$TX" 2>/dev/null
            if [ "$shown" = yes ] && [ "$title" = mine ] && grep -q "sorted by bytes" "$WORK/xpane"; then
                ok "top in a terminal (tmux): a site named with terminal controls is drawn as text; the pane's title and screen stay the terminal's"
            else bad "top in tmux with controls in a name: shown '$shown', title '$title'" "$WORK/xpane"; fi
        fi
    else bad "top: the process with controls in its names never showed" "$WORK/X.err"; fi
    touch "$WORK/X.done"; wait $PX 2>/dev/null
fi

# usage
"$TOPCMD" top --bogus >"$WORK/out" 2>"$WORK/err"; rc1=$?
"$TOPCMD" top --pid x >/dev/null 2>>"$WORK/err"; rc2=$?
"$TOPCMD" top </dev/null >"$WORK/out2" 2>>"$WORK/err"; rc3=$?
"$TOPCMD" --limit 1G top >/dev/null 2>>"$WORK/err"; rc4=$?
# `gpumemguard -- top` runs the program top (here a script of that name), not the command
mkdir -p "$WORK/topbin"; printf '#!/bin/sh\necho "the program top $*"\n' >"$WORK/topbin/top"; chmod +x "$WORK/topbin/top"
prog=$(PATH="$WORK/topbin:$PATH" "$TOPCMD" -- top --once 2>&1); rc5=$?
if [ "$rc1" = 2 ] && has "unknown argument '--bogus'" "$WORK/err" && [ "$rc2" = 2 ] && has "--pid 'x' is not a process id" "$WORK/err" \
   && [ "$rc3" = 1 ] && has "standard output is not a terminal: use --once (plain text) or --json" "$WORK/err" \
   && [ "$rc4" = 2 ] && { [ "${GMG_SANITIZER:-}" = tsan ] || { [ "$rc5" = 0 ] && [ "$prog" = "the program top --once" ]; }; } && "$TOPCMD" top --help | grep -q -- "--once" && "$TOPCMD" --help | grep -q "gpumemguard top"; then
    ok "top: bad arguments refused (status 2), a terminal asked for (status 1); 'gpumemguard -- top' runs a program named top"
else bad "top usage: $rc1 $rc2 $rc3 $rc4 $rc5" "$WORK/err"; fi
"$TOPCMD" top --once --json >/dev/null 2>"$WORK/err"; rc1=$?
"$TOPCMD" top --help >/dev/full 2>>"$WORK/err"; rc2=$?
"$TOPCMD" top --once >/dev/full 2>>"$WORK/err"; rc3=$?
"$TOPCMD" view --help >"$WORK/out" 2>>"$WORK/err"; rc4=$?
if [ "$rc1/$rc2/$rc3/$rc4" = 2/1/1/0 ] && has "--once and --json: one or the other" "$WORK/err" \
   && [ "$(grep -c "gpumemguard top: cannot write to standard output: No space left on device" "$WORK/err")" = 2 ] \
   && has "usage: gpumemguard view REPORT.json" "$WORK/out" && "$TOPCMD" --help | grep -q "gpumemguard top .*--sort KEY"; then
    ok "top: --once with --json refused; a failed write said (status 1); view --help on standard output; --help's synopsis of top has --sort"
else bad "top and view usage: $rc1 $rc2 $rc3 $rc4" "$WORK/err"; fi
fi
