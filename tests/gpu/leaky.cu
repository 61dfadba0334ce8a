// leaky.cu - GPU suite case 1/2: leaks at named sites, quota refusals through
// the runtime, cudaMemGetInfo under a limit, cudaDeviceReset, a SIGUSR1 dump.
//   leaky leaks          3 leaks (1 MiB, 2 MiB x2), 1 freed; exit
//   leaky limit BYTES    cudaMalloc / cudaMallocAsync over the limit
//   leaky info           cudaMemGetInfo
//   leaky reset          leak, cudaDeviceReset
//   leaky signal         leak, raise SIGUSR1, keep running
//   leaky host           pinned host memory, cudaDeviceReset, cudaFreeHost
//   leaky graph          graph memory nodes: 3 MiB not freed in the graph,
//                        launched; 1 MiB freed in it; 2 MiB freed by cudaFree
//   leaky oom            cudaMalloc of twice the device's memory, no quota:
//                        the driver's own out of memory
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <unistd.h>

__attribute__((noinline)) static void leak_one_mib() { void *p; cudaMalloc(&p, 1 << 20); }
__attribute__((noinline)) static void leak_two_mib() { void *p; cudaMalloc(&p, 2 << 20); }
__attribute__((noinline)) static cudaError_t oom_past_device(size_t bytes)
{
    void *p = nullptr;
    return cudaMalloc(&p, bytes);
}
__attribute__((noinline)) static void *pinned_mib() { void *p = nullptr; cudaMallocHost(&p, 1 << 20); return p; }

static cudaMemAllocNodeParams graph_params(size_t bytes)
{
    cudaMemAllocNodeParams a;
    memset(&a, 0, sizeof a);
    a.poolProps.allocType = cudaMemAllocationTypePinned;
    a.poolProps.location.type = cudaMemLocationTypeDevice;
    a.poolProps.location.id = 0;
    a.bytesize = bytes;
    return a;
}

__attribute__((noinline)) static void *leak_graph_node(cudaGraph_t g, cudaGraphNode_t *n)
{
    cudaMemAllocNodeParams a = graph_params(3 << 20);
    cudaError_t e = cudaGraphAddMemAllocNode(n, g, nullptr, 0, &a);
    if (e != cudaSuccess)
        printf("cudaGraphAddMemAllocNode %s\n", cudaGetErrorName(e));
    return a.dptr;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "leaks";
    cudaFree(0);
    if (!strcmp(mode, "leaks")) {
        leak_one_mib();
        for (volatile int i = 0; i < 2; i++)
            leak_two_mib();
        void *p;
        cudaMalloc(&p, 4 << 20);
        cudaFree(p);
        printf("leaks done\n");
    } else if (!strcmp(mode, "limit")) {
        size_t L = strtoull(argv[2], nullptr, 0);
        void *p = nullptr;
        cudaError_t e1 = cudaMalloc(&p, L + (1 << 20));
        cudaGetLastError();
        cudaStream_t s;
        cudaStreamCreate(&s);
        cudaError_t e2 = cudaMallocAsync(&p, L + (1 << 20), s);
        cudaGetLastError();
        printf("cudaMalloc %s cudaMallocAsync %s\n", cudaGetErrorName(e1), cudaGetErrorName(e2));
    } else if (!strcmp(mode, "info")) {
        size_t f, t;
        cudaMemGetInfo(&f, &t);
        printf("free %zu total %zu\n", f, t);
    } else if (!strcmp(mode, "reset")) {
        leak_one_mib();
        cudaDeviceReset();
        printf("reset done\n");
    } else if (!strcmp(mode, "host")) {
        void *h = pinned_mib();
        cudaDeviceReset();
        cudaError_t e = cudaFreeHost(h);
        printf("host free after reset %s\n", cudaGetErrorName(e));
    } else if (!strcmp(mode, "signal")) {
        leak_two_mib();
        raise(SIGUSR1);
        sleep(1);
        printf("still running\n");
    } else if (!strcmp(mode, "oom")) {
        size_t f, t;
        cudaMemGetInfo(&f, &t);
        void *held = nullptr;
        cudaMalloc(&held, 64 << 20);
        cudaError_t e = oom_past_device(2 * t);
        cudaGetLastError();
        printf("oom %s total %zu\n", cudaGetErrorName(e), t);
    } else if (!strcmp(mode, "graph")) {
        cudaGraph_t g;
        cudaGraphNode_t leaked, n, f;
        cudaGraphCreate(&g, 0);
        leak_graph_node(g, &leaked);
        cudaMemAllocNodeParams a = graph_params(1 << 20), b = graph_params(2 << 20);
        cudaGraphAddMemAllocNode(&n, g, &leaked, 1, &a);
        cudaGraphAddMemFreeNode(&f, g, &n, 1, a.dptr);
        cudaGraphAddMemAllocNode(&n, g, &f, 1, &b);
        cudaGraphExec_t x;
        cudaError_t e1 = cudaGraphInstantiate(&x, g, 0);
        cudaError_t e2 = cudaGraphLaunch(x, 0);
        cudaError_t e3 = cudaStreamSynchronize(0);
        cudaError_t e4 = cudaFree(b.dptr);
        printf("graph %s %s %s %s\n", cudaGetErrorName(e1), cudaGetErrorName(e2), cudaGetErrorName(e3), cudaGetErrorName(e4));
    }
    return 0;
}
