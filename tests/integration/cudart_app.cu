// cudart_app.cu - a real CUDA runtime program: built by nvcc with the static
// runtime (the default) and with -cudart shared. Against the simulated
// driver it gets through all its driver lookups, then stops at the runtime's
// private handshake; the guard's log must show the lookups of the memory
// functions routed to its wrappers.
#include <cstdio>
#include <cuda_runtime.h>

int main()
{
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, 1 << 20);
    std::printf("cudaMalloc: %s\n", cudaGetErrorName(e));
    if (e == cudaSuccess)
        cudaFree(p);
    return 0;
}
