/* unwrelload.c - a loader for tests/unwind/unwreload.c: opens a plug-in,
 * calls its plug(cb), notes where the plug-in was mapped (loader_base,
 * loader_len), closes it. Loaded with RTLD_DEEPBIND, its dlclose binds to
 * the C library's own, not the guard's export. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>

uintptr_t loader_base, loader_len;

static int extent(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)arg)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD &&
            info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz > loader_len)
            loader_len = info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
    return 1;
}

__attribute__((noinline)) void loader_run(const char *lib, void (*cb)(void))
{
    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return;
    }
    void (*plug)(void (*)(void)) = (void (*)(void (*)(void)))dlsym(h, "plug");
    printf("%s: plug at %p\n", lib, (void *)plug);
    plug(cb);
    __asm__ volatile("");
    Dl_info di;
    loader_base = loader_len = 0;
    if (dladdr((void *)plug, &di)) {
        loader_base = (uintptr_t)di.dli_fbase;
        dl_iterate_phdr(extent, di.dli_fbase);
    }
    dlclose(h);
}
