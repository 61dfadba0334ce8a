# unloaded.sh - frames of libraries loaded and unloaded with dlopen and
# dlclose keep their names: one unloaded since, another loaded at its
# address, one loaded through a symlink (tests/symbols/unloaded.c,
# tests/integration/module.c). Sourced by tests/run.sh (its helpers, $ROOT,
# $T, $WORK).
# (its program is built by tests/run.sh: other scripts run it too)

# a leak from a library unloaded since, another loaded at its address: the
# frames keep the first library's names
guarded "$T/unloaded" "$ROOT/$T/libgmgmod1.so" "$ROOT/$T/libgmgmod2.so"
gone=$(grep -A2 "(795648 bytes) in 1 allocation" "$WORK/err"); live=$(grep -A2 "(568320 bytes) in 1 allocation" "$WORK/err")
if grep -q "in module_leak_inner .*(libgmgmod1.so+0x[0-9a-f]*, unloaded)" <<<"$gone" && grep -q "in module_leak .*(libgmgmod1.so+" <<<"$gone" \
   && ! grep -q "libgmgmod2\|other_" <<<"$gone" && grep -q "in other_inner .*(libgmgmod2.so+0x[0-9a-f]*)$" <<<"$live" \
   && ! grep -q "libgmgmod1\|module_leak\|unloaded" <<<"$live"; then
    ok "frames of a library unloaded with dlclose keep its names; the library loaded after it keeps its own"
else bad "frames of an unloaded library" "$WORK/err"; fi

# a plugin rebuilt and loaded again from its path (the same link_map and
# addresses): the first build's frames are never named from the second's
# file; left unnamed, with their module and offset
cp "$ROOT/$T/libgmgmod1.so" "$WORK/plug.so"; cp "$ROOT/$T/libgmgmod2.so" "$WORK/plug.new"
guarded "$T/unloaded" "$WORK/plug.so" "$WORK/plug.so" "$WORK/plug.new"
gone=$(grep -m1 -A2 "(795648 bytes) in 1 allocation" "$WORK/err"); live=$(grep -m1 -A2 "(568320 bytes) in 1 allocation" "$WORK/err")
if grep -q "#0 0x[0-9a-f]* in ?? (plug.so+0x[0-9a-f]*, unloaded)$" <<<"$gone" && ! grep -q "other_\|module.c" <<<"$gone" \
   && grep -q " in other_inner .*(plug.so+0x[0-9a-f]*)$" <<<"$live"; then
    ok "a plugin rebuilt and loaded again from its path: the first build's frames are not named from the new file (its build ID differs), the new build's are"
else bad "frames of a plugin rebuilt at its path" "$WORK/err"; fi

# frames name a library as the program loaded it (here through a symlink
# of another name), not by the file it resolves to
ln -sf "$ROOT/$T/libgmgmod2.so" "$WORK/libalias.so"
tguarded 60 "$T/unloaded" "$ROOT/$T/libgmgmod1.so" "$WORK/libalias.so"
grep -A2 "(568320 bytes) in 1 allocation" "$WORK/err" | grep -q " in other_inner .*(libalias.so+0x[0-9a-f]*)$" \
    && ok "a library loaded through a symlink is named as loaded (libalias.so), not as the file it points to" \
    || bad "module name through a symlink" "$WORK/err"

# plug-ins loaded one after another at one address, each its own library
# (its own path to one file), each allocating there: each one's frames are
# named by its own file, and belongs to its own owner (a frame's owner was
# worked out once per address: the first plug-in's for all); 400 of them,
# the report at once (1,000 took 8 s: every plug-in's frames were taken for
# the first one's, then told apart one pair at a time)
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "400 plug-ins loaded one after another at one address" "TSan: the status page's call site, named on the reporter's tick, reads a library's link_map while the program unloads it"
else
$CC -std=gnu11 -O1 -g -shared -fPIC $SAN_FLAGS -I"$CUDA_INC" -o "$WORK/libplug.so" tests/symbols/plugalloc.c \
    -L"$B/sim" -l:libcuda.so.1 || exit 1
build plugins tests/symbols/plugins.c -ldl -L"$B/sim" -l:libcuda.so.1
rm -rf "$WORK/plugs"; mkdir "$WORK/plugs"
ln "$WORK/libplug.so" "$WORK/plugs/libcublas.so.12"
for i in $(seq 1 399); do ln "$WORK/libplug.so" "$WORK/plugs/libp$i.so"; done
tguarded 120 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/plugs.json" "$T/plugins" "$WORK/plugs/libcublas.so.12" \
    $(for i in $(seq 1 399); do echo "$WORK/plugs/libp$i.so"; done); rc=$?
mods=$(jq '[.live[] | .frames[] | select(.function == "plug") | .module] | unique | length' "$WORK/plugs.json" 2>&1)
owners=$(jq -r '[.live[] | select(.bytes == 4096 or .bytes == 4097) | "\(.bytes):\(.owner)"] | sort | join(" ")' \
         "$WORK/plugs.json" 2>&1)
if [ $rc = 0 ] && has "plugins done" "$WORK/out" && [ "$mods" = 400 ] && [ "$owners" = "4096:cuBLAS 4097:program" ] \
   && jq -e '.totals.live_allocations == 400' "$WORK/plugs.json" >/dev/null 2>&1; then
    ok "400 plug-ins loaded one after another at one address: each one's frames named by its own file, each its own owner (cuBLAS, then the program's)"
else bad "400 plug-ins at one address (rc $rc, modules named: $mods, owners: $owners)" "$WORK/err"; fi
rm -rf "$WORK/plugs"
fi
