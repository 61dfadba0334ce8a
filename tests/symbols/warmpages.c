/*
 * warmpages.c - what the report thread's symbolizer warm-up keeps resident
 * once done: leaks 1 MiB from warmpages_site (with stacks, the guard's
 * reporter warms its symbolizer up meanwhile), then waits, at most 10 s,
 * until libelf has mapped this program's file whole (the warm-up read it)
 * and prints, from /proc/self/smaps, the resident kB of that image and of
 * libdw's code as the warm-up left them:
 *   image N kB, libdw code M kB
 * or "no image" when the warm-up never mapped the file. The exit report then
 * names the leak's frame (tests/symbols/warmpages.sh).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

__attribute__((noinline)) static CUdeviceptr warmpages_site(void)
{
    CUdeviceptr p = 0;
    cuMemAlloc(&p, 1 << 20);
    return p;
}

/* -1: no image mapping yet; else its Rss in kB, and libdw's r-xp Rss in *dw */
static long look(const struct stat *exe, long *dw)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[1024];
    long image = -1, *into = NULL;
    *dw = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, ino;
        unsigned maj, min;
        char perms[5], path[512] = "";
        if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %511s", &lo, &hi, perms, &off, &maj, &min, &ino, path) >= 7) {
            into = NULL;
            if (off == 0 && ino == exe->st_ino && makedev(maj, min) == exe->st_dev &&
                hi - lo >= (unsigned long)exe->st_size) {
                image = 0;
                into = &image;
            } else if (strstr(path, "/libdw") && strcmp(perms, "r-xp") == 0)
                into = dw;
        } else if (into && strncmp(line, "Rss:", 4) == 0)
            *into += strtol(line + 4, NULL, 10);
    }
    if (f)
        fclose(f);
    return image;
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    struct stat exe;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        stat("/proc/self/exe", &exe) != 0)
        return 1;
    warmpages_site();
    long image = -1, dw = 0;
    for (int i = 0; i < 100 && image < 0; i++) {
        usleep(100000);
        image = look(&exe, &dw);
    }
    if (image < 0) {
        printf("no image\n");
        return 0;
    }
    usleep(200000); /* the warm-up gives its pages back as it ends */
    image = look(&exe, &dw);
    printf("image %ld kB, libdw code %ld kB\n", image, dw);
    return 0;
}
