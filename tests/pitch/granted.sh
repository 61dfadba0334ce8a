# granted.sh - a pitched allocation counts the pitch the driver grants
# (actual pitch x height), not the guard's 512-byte guess: a wider pitch
# (2048), a narrower one (256), both ABIs, at the limit and one byte over it
# (tests/pitch/granted.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
build pitch tests/pitch/granted.c -L"$B/sim" -l:libcuda.so.1

# a pitch above the guess (2048 for 1000-byte rows)
guarded GPUSIM_PITCH=2048 "$T/pitch" pitch
r1=$(cat "$WORK/out")
guarded GPUSIM_PITCH=2048 GPUMEM_LIMIT=150K "$T/pitch" pitch
if [ "$r1" = "pitch: 0, pitch 2048, guard 204800 sim 204800" ] && has "pitch: 2, pitch 2048, guard 0 sim 0" "$WORK/out"; then
    ok "a pitch of 2048 (not the guard's 512 guess): counted as granted, refused and freed when it does not fit"
else bad "pitch 2048: $r1 / $(cat "$WORK/out")"; fi

# a pitch below the guard's 512-byte guess (256: 700 bytes -> 768): the
# reservation shrinks to what the driver granted, both ABIs
tguarded 60 GPUSIM_PITCH=256 "$T/pitch" pitch_small
has "pitch_small: 0 pitch 768 guard 76800 sim 76800; legacy 0 pitch 768 guard 153600 sim 153600" "$WORK/out" \
    && ok "a pitch of 768 where the guard guessed 1024: counted as granted (_v2 and legacy)" \
    || bad "pitch below the guess" "$WORK/out"

# a pitched allocation counts actual pitch x height. A driver whose pitch is
# finer than 512 bytes grants 256 x 10 here: it fits a limit of exactly
# that, and the peak is the grant, never the up-front estimate
guarded GPUSIM_PITCH=256 GPUMEM_LIMIT=2560 "$T/pitch" sized 100 10
if has "pitch: 0, pitch 256, guard 2560" "$WORK/out" && has "limit 2.5 KiB (2560 bytes), in use 2.5 KiB (2560 bytes), peak 2.5 KiB (2560 bytes), refused 0" "$WORK/err"; then
    ok "a pitched allocation whose actual pitch x height (2560) fits the limit exactly is granted"
else bad "pitched allocation within the limit refused by the 512-byte estimate" "$WORK/err"; fi
guarded GPUSIM_PITCH=256 "$T/pitch" sized 100 10
has "in use 2.5 KiB (2560 bytes), peak 2.5 KiB (2560 bytes), refused 0" "$WORK/err" \
    && ok "a pitched allocation's peak is its grant (2560), not the 512-byte estimate (5120)" \
    || bad "pitched allocation's peak" "$WORK/err"
guarded GPUSIM_PITCH=1024 GPUMEM_LIMIT=10239 "$T/pitch" sized 100 10
has "pitch: 2, pitch 1024, guard 0" "$WORK/out" && has "refused cuMemAllocPitch of 10.0 KiB (10240 bytes)" "$WORK/err" \
    && ok "a pitched allocation whose grant (1024 x 10) is one byte over the limit is refused, naming the grant" \
    || bad "pitched allocation over the limit" "$WORK/err"

# a driver whose grant has shown its pitch to be the estimate (the real
# driver's): a pitched allocation whose estimate does not fit is refused
# before the driver makes it, so the driver never holds more than the limit
guarded GPUMEM_LIMIT=64M "$T/pitch" near
if has "near: 2, driver's most 62914560" "$WORK/out" && has "refused cuMemAllocPitch of 4.4 MiB (4608000 bytes)" "$WORK/err"; then
    ok "a pitched allocation refused near the limit, once the driver's pitch is known: the driver never holds more than the limit"
else bad "a pitched allocation near the limit made past it for a moment" "$WORK/out"; fi
# a grant of a width that is a multiple of 512 says nothing of the driver's
# alignment: a finer driver's grant that fits the limit is still granted
guarded GPUSIM_PITCH=256 GPUMEM_LIMIT=76800 "$T/pitch" aligned
has "aligned: 0, pitch 768, guard 76800" "$WORK/out" \
    && ok "after a 1024-byte-wide grant, a finer driver's 768 x 100 that fits the limit exactly is granted" \
    || bad "a finer pitch refused after an aligned width's grant" "$WORK/out"
