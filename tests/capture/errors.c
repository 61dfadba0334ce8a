/*
 * errors.c - the driver's refusals of capture calls (a second begin, a NULL
 * graph, no capture, the legacy stream) change nothing: the capture still
 * counts as one.
 *
 *   capture_errors   (GPUMEM_LIMIT=4M)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#define MiB (1024ull * 1024)

/* The driver's refusals of capture calls change nothing: a second begin on
 * a capturing stream, an end with a NULL graph output, an end of a stream
 * that never captured, the legacy stream (cannot capture). Under a 4 MiB
 * limit, 8 MiB goes through while the stream captures, and is refused once
 * the capture has ended. */
static void capture_errors(void)
{
    CUstream s, other;
    CUdeviceptr p, q;
    CUgraph g;
    TL_CHECK(cuStreamCreate(&s, 0));
    TL_CHECK(cuStreamCreate(&other, 0));
    TL_CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUresult again = cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED);
    CUresult legacy = cuStreamBeginCapture(NULL);
    CUresult nullg = cuStreamEndCapture(s, NULL);
    CUresult never = cuStreamEndCapture(other, &g);
    CUresult never_legacy = cuStreamEndCapture(NULL, &g);
    CUresult in = cuMemAllocAsync(&p, 8 * MiB, s);
    TL_CHECK(cuStreamEndCapture(s, &g));
    CUresult out = cuMemAllocAsync(&q, 8 * MiB, s);
    printf("capture errors: again %d legacy %d null graph %d never %d never legacy %d; captured 8 MiB %d, after 8 MiB %d; "
           "guard %llu sim %llu\n", (int)again, (int)legacy, (int)nullg, (int)never, (int)never_legacy, (int)in, (int)out,
           tl_guard_live(0), tl_sim_live(0));
    if (in == CUDA_SUCCESS)
        TL_CHECK(cuMemFree_v2(p));
    if (out == CUDA_SUCCESS)
        TL_CHECK(cuMemFree_v2(q));
    TL_CHECK(cuGraphDestroy(g));
    TL_CHECK(cuStreamDestroy_v2(s));
    TL_CHECK(cuStreamDestroy_v2(other));
}

int main(void)
{
    tl_setup(0);
    capture_errors();
    fflush(stdout);
    return 0;
}
