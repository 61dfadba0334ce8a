// allocbench.cu - GPU suite case 6: median latency of cuMemAlloc+cuMemFree
// pairs of 1 KiB, 1 MiB and 256 MiB on the real driver (run with and without
// the guard, and under compute-sanitizer).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cuda.h>
#include <vector>

int main()
{
    CUdevice d;
    CUcontext c;
    cuInit(0);
    cuDeviceGet(&d, 0);
    cuDevicePrimaryCtxRetain(&c, d);
    cuCtxSetCurrent(c);
    for (size_t sz : { size_t(1) << 10, size_t(1) << 20, size_t(256) << 20 }) {
        std::vector<double> t;
        for (int i = 0; i < 2000; i++) {
            CUdeviceptr p;
            auto a = std::chrono::steady_clock::now();
            cuMemAlloc(&p, sz);
            cuMemFree(p);
            auto b = std::chrono::steady_clock::now();
            t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
        }
        std::sort(t.begin(), t.end());
        printf("pair %zu bytes: median %.2f us\n", sz, t[t.size() / 2]);
    }
    return 0;
}
