# growth.sh - the text growth header counts the stacks it lists
# (tests/dumps/growth.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
build growth_header tests/dumps/growth.c -L"$B/sim" -l:libcuda.so.1

# the text growth header counts the stacks it lists (reserved ranges and
# mappings are listed under their own heading, not as growth)
guarded "$T/growth_header"
if has "Growth since the previous dump (new and still live): 2 stacks" "$WORK/err" \
   && [ "$(sed -n '/^Growth since/,/^Live at the peak\|^Fragmentation/p' "$WORK/err" | grep -c 'allocated from:')" = 2 ]; then
    ok "the text growth header counts the stacks listed under it"
else bad "growth header count" "$WORK/err"; fi
