// fakepools.cc - a library whose functions carry the real names of the
// caching allocators' segment-growing code and of the libraries that own
// allocations (PyTorch, XLA, TensorFlow, CuPy, RMM, MXNet, NCCL, cuBLAS,
// cuBLASLt, cuDNN, their handles), each allocating with cuMemAlloc: so that
// every built-in pattern is tested against a stack that has it. Built at -O0: no frame is
// inlined or turned into a tail call. fake_CASE(bytes) is the entry point.
#include <cuda.h>
#include <stddef.h>

#define ALLOC(n)                                                                                                       \
    do {                                                                                                               \
        CUdeviceptr p = 0;                                                                                             \
        if (cuMemAlloc(&p, (n)) != CUDA_SUCCESS)                                                                       \
            return 0;                                                                                                  \
        return p;                                                                                                      \
    } while (0)

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {
namespace Native {
struct DeviceCachingAllocator { // 2.x: c10/cuda/CUDACachingAllocator.cpp
    __attribute__((noinline)) static CUdeviceptr alloc_block(size_t n) { ALLOC(n); }
};
struct ExpandableSegment { // expandable_segments:True
    __attribute__((noinline)) static CUdeviceptr map(size_t n) { ALLOC(n); }
};
struct NativeCachingAllocator {
    // PYTORCH_NO_CUDA_MEMORY_CACHING=1: allocate() calls cudaMalloc per tensor, no segment
    __attribute__((noinline)) static CUdeviceptr allocate(size_t n) { ALLOC(n); }
    // the cached path (DeviceCachingAllocator's frames inlined into it)
    __attribute__((noinline)) static CUdeviceptr malloc(size_t n) { ALLOC(n); }
};
} // namespace Native
struct THCCachingAllocator { // 1.x
    __attribute__((noinline)) static CUdeviceptr malloc(size_t n) { ALLOC(n); }
};
namespace CudaMallocAsync { // the cudaMallocAsync backend: each tensor to the driver, no segment
__attribute__((noinline)) CUdeviceptr mallocAsync(size_t n) { ALLOC(n); }
} // namespace CudaMallocAsync
} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10

namespace tsl {
struct BFCAllocator { // xla/tsl/framework/bfc_allocator.cc
    __attribute__((noinline)) static CUdeviceptr Extend(size_t n) { ALLOC(n); }
};
} // namespace tsl
namespace tensorflow {
struct BFCAllocator { // older TensorFlow: tensorflow/core/common_runtime/bfc_allocator.cc
    __attribute__((noinline)) static CUdeviceptr Extend(size_t n) { ALLOC(n); }
};
} // namespace tensorflow

namespace rmm {
namespace mr {
struct cuda_memory_resource {};
template <class Upstream> struct pool_memory_resource {
    __attribute__((noinline)) static CUdeviceptr block_from_upstream(size_t n) { ALLOC(n); }
    // a return type that declares a pointer to function: "void (*rmm::mr::pool_memory_resource<...>::grow(...))(int)"
    __attribute__((noinline)) static void (*grow(size_t n))(int)
    {
        CUdeviceptr p = 0;
        cuMemAlloc(&p, n);
        return nullptr;
    }
};
template struct pool_memory_resource<cuda_memory_resource>;
} // namespace mr
} // namespace rmm

// RMM's pool and fixed-size resources grow through this base; where its
// header-only code is inlined its do_allocate is the frame left
namespace rmm {
namespace mr {
namespace detail {
template <class Resource, class FreeList> struct stream_ordered_memory_resource {
    __attribute__((noinline)) static CUdeviceptr do_allocate(size_t n) { ALLOC(n); }
};
template struct stream_ordered_memory_resource<pool_memory_resource<cuda_memory_resource>, int>;
} // namespace detail
} // namespace mr
} // namespace rmm

// A program's own code whose parameter and template argument types, or
// whose class names, contain a pool's names: none of it is a pool
struct SingleDeviceMemoryPoolStats {};
namespace app {
__attribute__((noinline)) CUdeviceptr upload(rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> &, size_t n)
{
    ALLOC(n);
}
template <class Resource> __attribute__((noinline)) CUdeviceptr fill(size_t n) { ALLOC(n); }
template CUdeviceptr fill<rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>>(size_t);
__attribute__((noinline)) CUdeviceptr report_stats(const SingleDeviceMemoryPoolStats &, size_t n) { ALLOC(n); }
struct PinnedMemoryPoolTuner {
    __attribute__((noinline)) static CUdeviceptr scratch(size_t n) { ALLOC(n); }
};
} // namespace app

namespace mxnet {
namespace storage {
struct GPUPooledStorageManager { // src/storage/pooled_storage_manager.h
    __attribute__((noinline)) static CUdeviceptr Alloc(size_t n) { ALLOC(n); }
};
} // namespace storage
} // namespace mxnet

namespace at {
namespace cuda {
__attribute__((noinline)) CUdeviceptr setWorkspaceForHandle(size_t n) { ALLOC(n); } // its cuBLAS workspaces
namespace {
struct CUDACachingHostAllocatorImpl { // the pinned host memory cache
    __attribute__((noinline)) static CUdeviceptr allocate_host_memory_slowpath(size_t n) { ALLOC(n); }
};
} // namespace
__attribute__((noinline)) CUdeviceptr host_pool(size_t n) { return CUDACachingHostAllocatorImpl::allocate_host_memory_slowpath(n); }
} // namespace cuda
} // namespace at

extern "C" {
// Cython's names for cupy.cuda.memory.Memory.__init__ (all a stripped wheel
// leaves of the pool) and for cupy.cuda.memory.SingleDeviceMemoryPool._malloc
__attribute__((noinline)) CUdeviceptr __pyx_pw_4cupy_4cuda_6memory_6Memory_1__init__(size_t n) { ALLOC(n); }
// cuBLAS, cuBLASLt, cuDNN allocating in a call that is no handle's creation
__attribute__((noinline)) CUdeviceptr cublasSgemm_v2(size_t n) { ALLOC(n); }
__attribute__((noinline)) CUdeviceptr cublasLtMatmul(size_t n) { ALLOC(n); }
__attribute__((noinline)) CUdeviceptr cudnnConvolutionForward(size_t n) { ALLOC(n); }
// a function no row names (its module's path decides)
__attribute__((noinline)) CUdeviceptr plain_alloc(size_t n) { ALLOC(n); }
// Cython's name for cupy.cuda.memory.SingleDeviceMemoryPool._malloc
__attribute__((noinline)) CUdeviceptr __pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc(size_t n) { ALLOC(n); }
__attribute__((noinline)) CUdeviceptr ncclCudaCalloc(size_t n) { ALLOC(n); }
__attribute__((noinline)) CUdeviceptr cublasCreate_v2(size_t n) { ALLOC(n); }
__attribute__((noinline)) CUdeviceptr cublasLtCreate(size_t n) { ALLOC(n); }
__attribute__((noinline)) CUdeviceptr cudnnCreate(size_t n) { ALLOC(n); }

#define FAKE(name, call)                                                                                               \
    __attribute__((noinline)) CUdeviceptr fake_##name(size_t n)                                                        \
    {                                                                                                                  \
        CUdeviceptr p = call(n);                                                                                       \
        return p ? p : 0;                                                                                              \
    }
FAKE(torch, c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block)
FAKE(torch1, c10::cuda::CUDACachingAllocator::THCCachingAllocator::malloc)
FAKE(torch_exp, c10::cuda::CUDACachingAllocator::Native::ExpandableSegment::map)
FAKE(torch_uncached, c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate)
FAKE(torch_native, c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc)
FAKE(torch_async, c10::cuda::CUDACachingAllocator::CudaMallocAsync::mallocAsync)
FAKE(tsl, tsl::BFCAllocator::Extend)
FAKE(tf, tensorflow::BFCAllocator::Extend)
FAKE(rmm, rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>::block_from_upstream)
FAKE(mxnet, mxnet::storage::GPUPooledStorageManager::Alloc)
FAKE(cupy, __pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc)
FAKE(nccl, ncclCudaCalloc)
FAKE(cublas, cublasCreate_v2)
FAKE(cublaslt, cublasLtCreate)
FAKE(cudnn, cudnnCreate)
FAKE(cupy_memory, __pyx_pw_4cupy_4cuda_6memory_6Memory_1__init__)
FAKE(torch_ws, at::cuda::setWorkspaceForHandle)
FAKE(torch_host, at::cuda::host_pool)
FAKE(sgemm, cublasSgemm_v2)
FAKE(ltmatmul, cublasLtMatmul)
FAKE(conv, cudnnConvolutionForward)
FAKE(plain, plain_alloc)
FAKE(rmm_base, (rmm::mr::detail::stream_ordered_memory_resource<rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>,
                                                             int>::do_allocate))
static rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> a_pool;
static CUdeviceptr upload_to_pool(size_t n) { return app::upload(a_pool, n); }
FAKE(app_param, upload_to_pool)
FAKE(app_template, app::fill<rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>>)
static CUdeviceptr stats(size_t n) { return app::report_stats(SingleDeviceMemoryPoolStats(), n); }
FAKE(app_stats, stats)
FAKE(app_class, app::PinnedMemoryPoolTuner::scratch)
static CUdeviceptr grow_pool(size_t n)
{
    rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>::grow(n);
    return 1;
}
FAKE(rmm_fnptr, grow_pool)
}
