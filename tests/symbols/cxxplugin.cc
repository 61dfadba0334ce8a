// cxxplugin.cc - a small C++ plugin that a C host dlopens RTLD_LOCAL (as a
// Python extension is loaded): libstdc++ comes in privately, not in the
// global scope, and the guard must still demangle the plugin's frames.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <string>

namespace plugin {
struct Model {
    __attribute__((noinline)) void load_weights(const std::string &name)
    {
        CUdeviceptr d;
        cuMemAlloc_v2(&d, 333 * 1024 + name.size());
    }
};
} // namespace plugin

extern "C" void plugin_run(void)
{
    plugin::Model m;
    m.load_weights("w");
    __asm__ volatile("" ::: "memory");
}
