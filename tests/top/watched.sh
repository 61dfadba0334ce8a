# watched.sh - a guarded process names its biggest call site on its status
# page only while `gpumemguard top` watches it (top marks the page's access
# time at each read): a process nobody watches loads no symbolizer for it.
# Sourced by run.sh (uses its helpers and $B, $T, $WORK, $PRELOAD).

build toptest tests/top/toptest.c -L"$B/sim" -l:libcuda.so.1
WT="$T/toptest"

if ! command -v jq >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    skip "top: names only while watched" "no jq or python3"
else
# wsite PAGE: the page's site bytes and name, read without marking it
# (O_NOATIME: as if nobody read it)
wsite() { python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY|os.O_NOATIME); b=os.pread(fd, 4096, 0); os.close(fd); n=b[1168:1424].split(b"\0")[0].decode(); print(int.from_bytes(b[1424:1432],"little"), n)' "$1" 2>/dev/null; }
# watch_try: W started, its page left unread for two writes, then asked
# for by top. Sets unwatched, named, kept; marked_by_other=1 when some
# other top (another test run's, which shows every page) marked the page
# meanwhile, which makes the try say nothing.
watch_try() {
    rm -f "$WORK/W.ready" "$WORK/W.done"
    env LD_PRELOAD="$PRELOAD" "$WT" hold "$WORK/W.ready" "$WORK/W.done" 3145728 0 0 0 >"$WORK/W.out" 2>"$WORK/W.err" &
    local pw=$! page
    page="/dev/shm/gpumemguard-top-$(id -u)-$pw"
    unwatched="" named="" kept="" marked_by_other=0
    for _ in $(seq 200); do [ -e "$WORK/W.ready" ] && [ -e "$page" ] && break; sleep 0.05; done
    if [ -e "$page" ]; then
        sleep 2.5 # two writes of the page, nobody reading it
        unwatched=$(wsite "$page")
        # (a mark changes the change time; nothing else does after the page is made)
        [ "$(stat -c %y "$page" 2>/dev/null)" = "$(stat -c %z "$page" 2>/dev/null)" ] || marked_by_other=1
        named=$("$B/gpumemguard" top --json --pid $pw | jq -r '.processes[0].site.name')
        sleep 1.2
        kept=$(wsite "$page")
    fi
    touch "$WORK/W.done"; wait $pw 2>/dev/null
}
for _ in 1 2 3; do watch_try; [ "$marked_by_other" = 0 ] && break; done
if [ "$marked_by_other" = 1 ]; then
    skip "top: a page nobody reads" "another top marked the page in each of 3 tries"
elif [ "$unwatched" = "3145728 " ] && [[ "$named" =~ ^big_site\  ]] && [[ "$kept" =~ ^3145728\ big_site\  ]]; then
    ok "top: a page nobody reads has its biggest site's bytes, not its name; top --json marks it and waits for the name ($named)"
else
    bad "top: naming while watched: unwatched '$unwatched', top '$named', after '$kept'" "$WORK/W.err"
fi

# a mark made after the clock was set back is older than the page: still a
# mark (the process names its site); a stopped process, which writes no
# page, is not waited for (top --json answers at once, the name left out)
wstart() { rm -f "$WORK/$1.ready" "$WORK/$1.done"; env LD_PRELOAD="$PRELOAD" "$WT" hold "$WORK/$1.ready" "$WORK/$1.done" 3145728 0 0 0 >"$WORK/$1.out" 2>"$WORK/$1.err" & }
wstart WB; PB=$!; wstart WS; PS=$!
pb="/dev/shm/gpumemguard-top-$(id -u)-$PB"; ps_="/dev/shm/gpumemguard-top-$(id -u)-$PS"
for _ in $(seq 200); do [ -e "$WORK/WB.ready" ] && [ -e "$pb" ] && [ -e "$WORK/WS.ready" ] && [ -e "$ps_" ] && break; sleep 0.05; done
sleep 1.2
kill -STOP $PS
python3 -c 'import os,sys; st=os.stat(sys.argv[1]); os.utime(sys.argv[1], ns=(st.st_atime_ns - 1000000000, st.st_mtime_ns))' "$pb" 2>/dev/null
sleep 2.2
back=$(wsite "$pb")
start=$(date +%s%N)
stopped=$("$B/gpumemguard" top --json --pid $PS | jq -r '.processes[0] | "\(.site.bytes) \(.site.name)"')
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT $PS; touch "$WORK/WB.done" "$WORK/WS.done"; wait $PB $PS 2>/dev/null
# (another test run's top may have marked the stopped one first: named)
if [[ "$back" =~ ^3145728\ big_site\  ]] && [[ "$stopped" =~ ^3145728\ (big_site\ .*)?$ ]] && [ $ms -lt 1450 ]; then
    ok "top: a mark older than the page (the clock set back) still names its site; a stopped process is not waited for ($ms ms)"
else
    bad "top: set back '$back'; stopped '$stopped' in $ms ms" "$WORK/WB.err"
fi
fi
