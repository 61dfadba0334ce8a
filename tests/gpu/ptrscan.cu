// ptrscan.cu - GPU suite case 11, a measurement: after a program drops every
// copy of a device pointer, do copies of it stay in the process's own
// memory (libcuda's data, heap arenas, other mappings)? It decides whether a
// reachability scan of host memory, as LeakSanitizer makes for heap
// pointers, could ever call a device allocation "definitely lost".
//
//   ptrscan runtime|driver [N]
//
// Makes N allocations of 1 MiB (cudaMalloc or cuMemAlloc), keeps each
// pointer only as value ^ MASK, and scans every readable, writable mapping
// (read through /proc/self/mem, so nothing faults) for the plain values, in
// three phases: while the program still holds plain copies in a global
// array (a check that the scan finds what is there), after it overwrote
// them, and after it freed the allocations. Prints, per phase, how many of
// the N values were found anywhere, and where the hits lie by mapping.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

static const uint64_t MASK = 0x5a5aa5a5c3c33c3cull;
static uint64_t hidden[4096];           // value ^ MASK: never the plain value
static volatile uint64_t plain[4096];   // the program's own copies, phase 1 only

struct Map { uint64_t lo, hi; std::string name; };

static std::vector<Map> writable_maps()
{
    std::vector<Map> v;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8] = "", path[3000] = "";
        unsigned long off;
        int n = sscanf(line, "%lx-%lx %7s %lx %*s %*s %2999[^\n]", &lo, &hi, perms, &off, path);
        if (n < 4 || perms[0] != 'r' || perms[1] != 'w')
            continue;
        std::string p = n == 5 ? path : "";
        if (p.rfind("/dev/", 0) == 0 || p == "[vvar]" || p == "[vsyscall]" || p == "[vvar_vclock]")
            continue;   // device apertures and the kernel's pages: not the process's data
        if (p.empty())
            p = "anonymous";
        else if (p[0] == '/')
            p = p.substr(p.rfind('/') + 1);
        v.push_back({ lo, hi, p });
    }
    if (f)
        fclose(f);
    return v;
}

// Hits of the N values, by mapping name; how many of the N were found.
static void scan(const char *phase, int n, bool skip_plain)
{
    std::vector<uint64_t> want(n);
    for (int i = 0; i < n; i++)
        want[i] = hidden[i] ^ MASK;
    std::sort(want.begin(), want.end());
    std::vector<char> found(n, 0);
    std::map<std::string, long> hits;
    uint64_t scanned = 0;
    int fd = open("/proc/self/mem", O_RDONLY);
    std::vector<uint64_t> buf(1 << 17);
    const uint64_t pl = (uint64_t)(uintptr_t)plain, ph = pl + sizeof plain;
    const uint64_t wl = (uint64_t)(uintptr_t)want.data(), wh = wl + want.size() * 8;
    const uint64_t bl = (uint64_t)(uintptr_t)buf.data(), bh = bl + buf.size() * 8;
    for (const Map &m : writable_maps()) {
        // a mapping is scanned up to its first GiB (CUDA's host-side mappings can be large and mostly untouched)
        for (uint64_t a = m.lo; a < m.hi && a - m.lo < (1ull << 30); a += buf.size() * 8) {
            size_t len = std::min<uint64_t>(buf.size() * 8, m.hi - a);
            ssize_t got = pread(fd, buf.data(), len, (off_t)a);
            if (got <= 0)
                continue;
            scanned += (uint64_t)got;
            for (size_t k = 0; k < (size_t)got / 8; k++) {
                uint64_t v = buf[k], at = a + k * 8;
                if (!std::binary_search(want.begin(), want.end(), v))
                    continue;
                if ((at >= wl && at < wh) || (at >= bl && at < bh) || (skip_plain && at >= pl && at < ph))
                    continue;   // the scanner's own copies
                found[std::lower_bound(want.begin(), want.end(), v) - want.begin()] = 1;
                std::string where = m.name;
                if (at >= pl && at < ph)
                    where += " (the program's own array)";
                hits[where]++;
            }
        }
    }
    close(fd);
    int nfound = 0;
    for (char c : found)
        nfound += c;
    printf("%s: %d of %d pointers found, %.1f MiB scanned; hits:", phase, nfound, n, scanned / 1048576.0);
    if (hits.empty())
        printf(" none");
    for (auto &h : hits)
        printf(" %s %ld;", h.first.c_str(), h.second);
    printf("\n");
}

int main(int argc, char **argv)
{
    bool runtime = argc < 2 || strcmp(argv[1], "driver");
    int n = argc > 2 ? atoi(argv[2]) : 256;
    n = std::max(1, std::min(n, 4096));
    if (runtime) {
        cudaFree(nullptr);
    } else {
        CUdevice d;
        CUcontext c;
        cuInit(0);
        cuDeviceGet(&d, 0);
        cuDevicePrimaryCtxRetain(&c, d);
        cuCtxSetCurrent(c);
    }
    for (int i = 0; i < n; i++) {
        uint64_t v = 0;
        if (runtime) {
            void *p = nullptr;
            if (cudaMalloc(&p, 1 << 20) != cudaSuccess) { printf("cudaMalloc failed at %d\n", i); return 1; }
            v = (uint64_t)(uintptr_t)p;
            p = nullptr;
        } else {
            CUdeviceptr p = 0;
            if (cuMemAlloc(&p, 1 << 20) != CUDA_SUCCESS) { printf("cuMemAlloc failed at %d\n", i); return 1; }
            v = p;
            p = 0;
        }
        plain[i] = v;
        hidden[i] = v ^ MASK;
        v = 0;
    }
    printf("%s, %d allocations of 1 MiB\n", runtime ? "cudaMalloc" : "cuMemAlloc", n);
    scan("1 the program holds its copies", n, false);
    for (int i = 0; i < n; i++)
        plain[i] = 0;
    scan("2 the program overwrote its copies", n, true);
    for (int i = 0; i < n; i++) {
        uint64_t v = hidden[i] ^ MASK;
        if (runtime)
            cudaFree((void *)(uintptr_t)v);
        else
            cuMemFree((CUdeviceptr)v);
    }
    scan("3 after every free", n, true);
    return 0;
}
