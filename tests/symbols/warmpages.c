/*
 * warmpages.c - what the report thread's symbolizer warm-up keeps resident
 * once done: leaks 1 MiB from warmpages_site (with stacks, the guard's
 * reporter warms its symbolizer up meanwhile), then waits, at most 10 s,
 * until libelf has mapped this program's file whole (the warm-up read it),
 * and at most 10 s more for its pages to be given back, and prints, from /proc/self/smaps, the resident kB of that image and of
 * libdw's code as the warm-up left them, and of a mapping of libdw's file
 * the program made itself before its first driver call (read whole, it is
 * the program's: never given back):
 *   image N kB, libdw code M kB, own K of T kB
 * or "no image" when the warm-up never mapped the file. The exit report then
 * names the leak's frame (tests/symbols/warmpages.sh).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
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

static unsigned long own_lo; /* the program's own mapping of libdw's file */

/* -1: no image mapping yet; else its Rss in kB, libdw's r-xp Rss in *dw and
 * the program's own mapping's in *own */
static long look(const struct stat *exe, long *dw, long *own)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[1024];
    long image = -1, *into = NULL;
    *dw = 0;
    *own = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, ino;
        unsigned maj, min;
        char perms[5], path[512] = "";
        if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %511s", &lo, &hi, perms, &off, &maj, &min, &ino, path) >= 7) {
            into = NULL;
            if (off == 0 && ino == exe->st_ino && makedev(maj, min) == exe->st_dev &&
                hi - lo >= (unsigned long)exe->st_size) {
                if (image < 0) /* (each such mapping summed) */
                    image = 0;
                into = &image;
            } else if (lo == own_lo)
                into = own;
            else if (strstr(path, "/libdw") && strcmp(perms, "r-xp") == 0)
                into = dw;
        } else if (into && strncmp(line, "Rss:", 4) == 0)
            *into += strtol(line + 4, NULL, 10);
    }
    if (f)
        fclose(f);
    return image;
}

/* libdw's file, mapped privately and read whole: its size in kB, 0 if not */
static long map_own(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024], path[512] = "";
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "/libdw") && sscanf(line, "%*s %*s %*s %*s %*s %511s", path) == 1)
            break;
    if (f)
        fclose(f);
    int fd = path[0] ? open(path, O_RDONLY) : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return 0;
    char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return 0;
    volatile char sink = 0;
    for (off_t i = 0; i < st.st_size; i += 4096)
        sink += p[i];
    (void)sink;
    own_lo = (unsigned long)p;
    return (long)((st.st_size + 4095) / 4096 * 4);
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    struct stat exe;
    long own_size = map_own();
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        stat("/proc/self/exe", &exe) != 0)
        return 1;
    warmpages_site();
    long image = -1, dw = 0, own = 0;
    for (int i = 0; i < 100 && image < 0; i++) {
        usleep(100000);
        image = look(&exe, &dw, &own);
    }
    if (image < 0) {
        printf("no image\n");
        return 0;
    }
    /* the warm-up gives its pages back as it ends: a while after the image
     * was mapped (at most 10 s more) */
    for (int i = 0; i < 100; i++) {
        usleep(100000);
        image = look(&exe, &dw, &own);
        if (image == 0 && dw <= 64)
            break;
    }
    printf("image %ld kB, libdw code %ld kB, own %ld of %ld kB\n", image, dw, own, own_size);
    return 0;
}
