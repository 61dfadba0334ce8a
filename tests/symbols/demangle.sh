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
