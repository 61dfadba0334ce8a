/*
 * reused.c - descriptors the program closes and reuses after the guard
 * started: the guard never reads, writes or closes them.
 *
 *   reused_fds fd2 FILE           descriptor 2 closed and made the program's
 *                                 data file (dup2)
 *   reused_fds closefrom FILE FIRST DUMP
 *                                 descriptors 3..1023 closed after the guard
 *                                 started (a daemon's closefrom), once the first
 *                                 dump (FIRST) is there; then the program's own
 *                                 pipe and FILE opened, one allocation refused and
 *                                 a dump signalled: its pipe must hold what it
 *                                 wrote, FILE nothing, and DUMP (the signal dump)
 *                                 exist while it runs
 *   reused_fds symfds FILE LIB    a report made (the guard's symbolizer opens ELF
 *                                 files), descriptors 3..1023 closed, FILE opened
 *                                 32 times, LIB loaded (the symbolizer is made
 *                                 anew) and another report made: every one of the
 *                                 32 must still be FILE
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static void fd2(const char *file)
{
    leak_before_exit();
    /* descriptor 2 closed and made the data file in one step: a close, then
     * an open, leaves a moment in which another thread's open (a runtime's:
     * TSan's) takes the number */
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) != 2 || close(fd) != 0)
        exit(3);
    if (write(2, "DATA\n", 5) != 5)
        exit(4);
}

NOINLINE static CUresult refused_after_closefrom(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 1ull << 40); }

/* Descriptors from 3 up to 511 open now on an ELF file (the symbolizer's:
 * the program has none; pread moves no offset). */
static int low_elf_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        struct stat st;
        char magic[4];
        n += fd >= 3 && fd < 512 && fd != dirfd(d) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4);
    }
    closedir(d);
    return n;
}

static void closefrom_case(const char *file, const char *first, const char *dump)
{
    leak_before_exit();
    /* the guard's thread warms its symbolizer up before it writes a dump:
     * once the first is there, that symbolizer keeps its descriptors */
    kill(getpid(), SIGUSR1);
    for (int i = 0; i < 600 && access(first, F_OK) != 0; i++)
        usleep(50000);
    printf("closefrom: ELF files open below descriptor 512: %d\n", low_elf_fds());
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int p[2];
    if (pipe2(p, O_NONBLOCK) != 0)
        exit(3);
    int f = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (f < 0 || write(p[1], "hello", 5) != 5)
        exit(4);
    if (refused_after_closefrom() != CUDA_ERROR_OUT_OF_MEMORY)
        exit(5);
    kill(getpid(), SIGUSR1);
    usleep(1500000); /* longer than GPUMEM_METRICS_INTERVAL=1: the thread's tick runs too */
    for (int i = 0; i < 600 && access(dump, F_OK) != 0; i++) /* and the dump is written, however loaded the machine */
        usleep(50000);
    char buf[64];
    ssize_t n = read(p[0], buf, sizeof buf);
    struct stat st;
    if (fstat(f, &st) != 0)
        exit(6);
    printf("closefrom: pipe %zd bytes '%.*s', file %lld bytes, dump while running: %s\n", n, n > 0 ? (int)n : 0, buf,
           (long long)st.st_size, access(dump, F_OK) == 0 ? "yes" : "no");
}

static void symfds(const char *file, const char *lib)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    leak_before_exit();
    if (dump)
        dump(); /* names its frames: libdw opens the files they are in */
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int f[32];
    struct stat want, st;
    for (int i = 0; i < 32; i++)
        if ((f[i] = open(file, O_RDONLY | O_CREAT, 0600)) < 0)
            exit(3);
    if (fstat(f[0], &want) != 0 || !dlopen(lib, RTLD_NOW))
        exit(4);
    if (dump)
        dump(); /* a library was loaded: the old symbolizer goes, a new one is made */
    int mine = 0;
    for (int i = 0; i < 32; i++)
        mine += fstat(f[i], &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
    printf("symfds: %d of 32 descriptors still the program's file (%s)\n", mine, dump ? "two reports" : "no guard");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: reused_fds fd2|closefrom|symfds ARG...\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "fd2") && argc > 2) fd2(argv[2]);
    else if (!strcmp(m, "closefrom") && argc > 4) closefrom_case(argv[2], argv[3], argv[4]);
    else if (!strcmp(m, "symfds") && argc > 3) symfds(argv[2], argv[3]);
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
