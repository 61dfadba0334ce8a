# budget.sh - GPUMEM_GROUP: the budget holds to the byte. Members together
# get exactly the budget, not a byte more; what a member gives back (here by
# dying) is exactly what the next one can take. Sourced by run.sh (uses its
# helpers and those of group.sh); the segment made here is removed at the end.

G="gmgbyte$$"
B8=8388608
gbg a GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold 5000000; apid=$!
await "$WORK/a.out" held
gbg b GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" hold $((B8 - 5000000)); bpid=$!
await "$WORK/b.out" held; held_b=$?
read -r _ used1 _ _ _ _ _ members1 _ <<<"$(peek $G)"
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take 1 0; one=$?; cp "$WORK/out" "$WORK/one.out"
reap $bpid
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take $((B8 - 5000000 + 1)) 0; over=$?; cp "$WORK/out" "$WORK/over.out"
guarded GPUMEM_GROUP=$G GPUMEM_LIMIT=8M "$GT" take $((B8 - 5000000)) 2000; fits=$?
if [ $held_b = 0 ] && [ "$used1" = $B8 ] && [ "$members1" = 2 ] && [ $one = 1 ] && has refused "$WORK/one.out" \
   && [ $over = 1 ] && has refused "$WORK/over.out" && [ $fits = 0 ] && has "took after" "$WORK/out"; then
    ok "group: the budget holds to the byte: two members hold exactly 8 MiB of 8 (5000000 + 3388608), one byte more is refused; the dead member's 3388608 bytes are exactly what the next can take, 3388609 refused"
else
    bad "group budget to the byte: b held $held_b, used $used1 of $B8, members $members1, one byte rc $one, 3388609 rc $over, 3388608 rc $fits" "$WORK/out"
fi
reap $apid
rm -f "$SHM/$(seg "$G")"
