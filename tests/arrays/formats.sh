# formats.sh - every array format of cuda.h, sized by its bytes per element
# (tests/arrays/formats.c). Sourced by tests/run.sh (its helpers, $T, $WORK,
# $CUDA_INC).
build array_formats tests/arrays/formats.c -L"$B/sim" -l:libcuda.so.1

# every array format the guard knows, sized by its bytes per element: at
# GPUMEM_LIMIT exactly it is the driver's call, one row more the guard refuses
tguarded 60 GPUMEM_LIMIT=1M "$T/array_formats"
# the header's own list (less CU_AD_FORMAT_MAX): a format added there must be added to hooks/array.c
nfmt=$(sed -n '/^typedef enum CUarray_format_enum/,/} CUarray_format;/p' "$CUDA_INC/cuda.h" \
       | grep -c 'CU_AD_FORMAT_[A-Za-z0-9_]* *=')
has "formats: 51, 0 wrong; guard 0 sim 0" "$WORK/out" && [ "$nfmt" = 52 ] \
    && ok "every array format of cuda.h (51): each sized by its element (1, 2, 4 or 8 bytes), refused one row over the limit and not at it; with 4 channels (as cudart passes UNORM_INT8X4) only the classic formats' elements are 4 times as wide" \
    || bad "array formats" "$WORK/out"
