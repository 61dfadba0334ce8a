# exports.sh - the names the library exports. Sourced by tests/run.sh (its
# helpers, $ROOT, $B).

# what the library exports besides the driver's names: dlsym, dlclose
# (hooks/unload.c), the installers of a signal handler (report/dumpsig.c),
# the public API and NVTX's injection entry points (hooks/nvtx.c), nothing
# else (-fvisibility=hidden, base/export.h)
exports=$(nm -D --defined-only "$ROOT/$B/libgpumemguard.so" | awk '{print $3}' | grep -v '^cu[A-Z]' | LC_ALL=C sort | tr '\n' ' ')
[ "$exports" = "InitializeInjectionNvtx2 InitializeInjectionNvtxExtension __sysv_signal bsd_signal dlclose dlsym gpumemguard_dump gpumemguard_leaked_bytes gpumemguard_limit gpumemguard_live_bytes gpumemguard_mark gpumemguard_mark_release gpumemguard_parse_size gpumemguard_peak gpumemguard_peak_growth gpumemguard_peak_reset gpumemguard_peak_text gpumemguard_refusals gpumemguard_retained_bytes gpumemguard_since gpumemguard_since_text gpumemguard_version sigaction sigignore signal sigset ssignal sysv_signal " ] \
    && ok "exports: the driver's names, dlsym, dlclose, the eight signal installers, the public API and the two NVTX injection entry points, nothing else" \
    || bad "exports beyond the driver's names: $exports"
