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
rm -f "$WORK/W.ready" "$WORK/W.done"
env LD_PRELOAD="$PRELOAD" "$WT" hold "$WORK/W.ready" "$WORK/W.done" 3145728 0 0 0 >"$WORK/W.out" 2>"$WORK/W.err" &
PW=$!
wpage="/dev/shm/gpumemguard-top-$(id -u)-$PW"
unwatched="" named="" kept=""
for _ in $(seq 200); do [ -e "$WORK/W.ready" ] && [ -e "$wpage" ] && break; sleep 0.05; done
if [ -e "$wpage" ]; then
    sleep 2.5 # two writes of the page, nobody reading it
    unwatched=$(wsite "$wpage")
    named=$("$B/gpumemguard" top --json --pid $PW | jq -r '.processes[0].site.name')
    sleep 1.2
    kept=$(wsite "$wpage")
fi
touch "$WORK/W.done"; wait $PW 2>/dev/null
if [ "$unwatched" = "3145728 " ] && [[ "$named" =~ ^big_site\  ]] && [[ "$kept" =~ ^3145728\ big_site\  ]]; then
    ok "top: a page nobody reads has its biggest site's bytes, not its name; top --json marks it and waits for the name ($named)"
else
    bad "top: naming while watched: unwatched '$unwatched', top '$named', after '$kept'" "$WORK/W.err"
fi
fi
