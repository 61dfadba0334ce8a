// allocbench.cu - GPU suite case 6: median latency of allocation+free pairs
// of 1 KiB, 1 MiB and 256 MiB on the real driver (run with and without the
// guard, and under compute-sanitizer).
//   allocbench          cuMemAlloc + cuMemFree
//   allocbench async    cuMemAllocAsync + cuMemFreeAsync on one stream, from
//                       the device's default stream-ordered pool (what every
//                       tensor does under gpumemguard --tensors)
//   allocbench ctx      ns per cuCtxGetCurrent and per cuCtxGetDevice (what
//                       the guard asks the driver on each allocation)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <vector>

int main(int argc, char **argv)
{
    bool async = argc > 1 && !strcmp(argv[1], "async");
    CUdevice d;
    CUcontext c;
    CUstream s = nullptr;
    cuInit(0);
    cuDeviceGet(&d, 0);
    cuDevicePrimaryCtxRetain(&c, d);
    cuCtxSetCurrent(c);
    if (argc > 1 && !strcmp(argv[1], "ctx")) {
        for (int which = 0; which < 2; which++) {
            double best = 1e30;
            for (int round = 0; round < 20; round++) {
                auto a = std::chrono::steady_clock::now();
                for (int i = 0; i < 100000; i++) {
                    CUcontext cur;
                    CUdevice dev;
                    if (which == 0)
                        cuCtxGetCurrent(&cur);
                    else
                        cuCtxGetDevice(&dev);
                }
                auto b = std::chrono::steady_clock::now();
                best = std::min(best, std::chrono::duration<double, std::nano>(b - a).count() / 100000);
            }
            printf("%s: %.1f ns per call (best of 20 rounds of 100,000)\n", which ? "cuCtxGetDevice" : "cuCtxGetCurrent", best);
        }
        return 0;
    }
    if (async)
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    for (size_t sz : { size_t(1) << 10, size_t(1) << 20, size_t(256) << 20 }) {
        std::vector<double> t;
        int failed = 0;
        for (int i = 0; i < 2000; i++) {
            CUdeviceptr p;
            auto a = std::chrono::steady_clock::now();
            if (async) {
                failed += cuMemAllocAsync(&p, sz, s) != CUDA_SUCCESS;
                cuMemFreeAsync(p, s);
            } else {
                failed += cuMemAlloc(&p, sz) != CUDA_SUCCESS;
                cuMemFree(p);
            }
            auto b = std::chrono::steady_clock::now();
            t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
        }
        if (async)
            cuStreamSynchronize(s);
        std::sort(t.begin(), t.end());
        printf("%s %zu bytes: median %.2f us%s\n", async ? "async pair" : "pair", sz, t[t.size() / 2],
               failed ? " (some failed)" : "");
    }
    return 0;
}
