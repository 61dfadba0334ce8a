# demangle.sh - C++ frames demangled when libstdc++ came in privately
# (tests/symbols/demangle.c loads tests/symbols/cxxplugin.cc RTLD_LOCAL).
# Sourced by tests/run.sh (its helpers, $ROOT, $T, $WORK, $CXX).
build demangle tests/symbols/demangle.c -L"$B/sim" -l:libcuda.so.1
$CXX -O1 -g $SAN_FLAGS -fPIC -shared -I"$CUDA_INC" -o "$T/libcxxplugin.so" tests/symbols/cxxplugin.cc \
    -L"$B/sim" -l:libcuda.so.1 || exit 1

# C++ frames demangled when libstdc++ came in privately (a C host dlopens a
# C++ plugin RTLD_LOCAL, as Python loads extensions)
guarded "$T/demangle" "$ROOT/$T/libcxxplugin.so"
if grep -q "in plugin::Model::load_weights(std::" "$WORK/err" && ! has "_ZN6plugin" "$WORK/err"; then
    ok "C++ frames are demangled when libstdc++ is loaded RTLD_LOCAL (found with RTLD_NOLOAD)"
else bad "demangling with a private libstdc++" "$WORK/err"; fi

# the guard closes its own RTLD_NOLOAD handles (the C++ runtime's, found
# for the demangler; the driver's at start) by the C library's dlclose:
# with another dlclose ahead of the guard's in the global scope (a
# sanitizer's interceptor, here a shim that hands each call on), those
# closes came back to the guard's exported dlclose as the program's own,
# and every thread's unwind rules were forgotten for nothing (4 times here)
$CC -shared -fPIC -o "$T/libdlclose_shim.so" tests/symbols/dlclose_shim.c -ldl || exit 1
guarded LD_PRELOAD="${PRELOAD%"$ROOT/$B/libgpumemguard.so"}$ROOT/$T/libdlclose_shim.so $ROOT/$B/libgpumemguard.so" \
    GMG_STACK_STATS=1 "$T/demangle" "$ROOT/$T/libcxxplugin.so"
if grep -q "in plugin::Model::load_weights(std::" "$WORK/err" && has "unwind rules forgotten 0 times" "$WORK/err"; then
    ok "the guard's own dlclose calls reach the C library's, not an interposer's ahead of it: no unwind rules forgotten"
else bad "the guard's own dlclose through an interposer: $(grep -o 'unwind rules forgotten [0-9]* times' "$WORK/err")" "$WORK/err"; fi
