/* demo_leaky.c - the demo's program: a "training loop" that leaks a buffer
 * per step and finally asks for more than its quota allows. With "oom", the
 * same loop, then a batch larger than the whole device: the driver's own
 * out of memory, no quota involved. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static CUdeviceptr weights;

__attribute__((noinline)) static void load_model(void) { cuMemAlloc_v2(&weights, 64 << 20); }

__attribute__((noinline)) static void train_step(int i)
{
    CUdeviceptr activations, scratch;
    cuMemAlloc_v2(&activations, 16 << 20);
    cuMemAlloc_v2(&scratch, 1 << 20);
    cuMemFree_v2(scratch);
    (void)i; /* activations forgotten: the leak */
}

__attribute__((noinline)) static void big_batch(void)
{
    CUdeviceptr p;
    CUresult r = cuMemAlloc_v2(&p, 200 << 20);
    printf("demo: a 200 MiB batch buffer: %s\n", r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "allocated");
}

__attribute__((noinline)) static void huge_batch(void)
{
    CUdeviceptr p;
    CUresult r = cuMemAlloc_v2(&p, 2ull << 30);
    printf("demo: a 2 GiB batch buffer: %s\n", r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "allocated");
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUdevice dev;
    setvbuf(stdout, NULL, _IONBF, 0); /* in order with the guard's stderr */
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "demo: no CUDA device\n");
        return 1;
    }
    load_model();
    for (volatile int i = 0; i < 5; i++) /* one call site */
        train_step(i);
    if (argc > 1 && strcmp(argv[1], "oom") == 0) {
        huge_batch(); /* more than the device has */
        return 0;
    }
    big_batch();
    size_t freeb, total;
    cuMemGetInfo_v2(&freeb, &total);
    printf("demo: cuMemGetInfo says %zu MiB free of %zu MiB\n", freeb >> 20, total >> 20);
    return 0;
}
