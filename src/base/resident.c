/*
 * resident.c - see resident.h. The pagemap file holds a 64-bit word per
 * virtual page: bit 63 present, bit 62 swapped, bit 61 a file's page (or
 * shared anonymous memory). A private mapping's page that was written is
 * an anonymous copy (bit 61 clear): dropping it would lose the write, so
 * only runs of pages that are absent or the file's are dropped; the next
 * touch of one maps the file's page again from the page cache (a minor
 * fault, as a library's first call pays).
 */
#define _GNU_SOURCE
#include "base/resident.h"

#include "base/fd.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_FILE (1ull << 61)
#define CHUNK 512 /* pagemap words read at once */

/* A run of pages to give back ends at `end`: its resident bytes, counted
 * when given back (or, without drop, when they could be). */
static size_t run_end(int drop, int in_run, uintptr_t run, uintptr_t end, size_t run_bytes)
{
    if (!in_run || !run_bytes)
        return 0;
    if (!drop)
        return run_bytes;
    return madvise((void *)run, end - run, MADV_DONTNEED) == 0 ? run_bytes : 0;
}

/* Walks [lo, hi): with drop, gives back each run of pages that are absent
 * or the file's and holds at least one present page. The file's resident
 * bytes. */
static size_t walk(int fd, uintptr_t lo, uintptr_t hi, size_t pg, int drop)
{
    uint64_t w[CHUNK];
    size_t bytes = 0, run_bytes = 0;  /* the run's resident bytes */
    uintptr_t run = 0;
    int in_run = 0;
    for (uintptr_t a = lo; a < hi;) {
        size_t n = (hi - a) / pg;
        if (n > CHUNK)
            n = CHUNK;
        ssize_t got = pread(fd, w, n * sizeof w[0], (off_t)(a / pg * sizeof w[0]));
        if (got < (ssize_t)sizeof w[0]) { /* what was looked at only */
            hi = a;
            break;
        }
        n = (size_t)got / sizeof w[0];
        for (size_t i = 0; i < n; i++, a += pg) {
            int present = (w[i] & PM_PRESENT) != 0, mine = present ? (w[i] & PM_FILE) == 0 : (w[i] & PM_SWAPPED) != 0;
            if (!mine) {
                if (!in_run) {
                    run = a;
                    in_run = 1;
                }
                run_bytes += present ? pg : 0;
                continue;
            }
            bytes += run_end(drop, in_run, run, a, run_bytes);
            in_run = 0;
            run_bytes = 0;
        }
    }
    return bytes + run_end(drop, in_run, run, hi, run_bytes);
}

/* /proc/thread-self's: /proc/self is the main thread's, whose maps read
 * empty once it has ended by pthread_exit while others run on. */
static int open_proc(const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/thread-self/%s", name);
    int fd = gmg_open_high(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) { /* before Linux 3.17 */
        snprintf(path, sizeof path, "/proc/self/%s", name);
        fd = gmg_open_high(path, O_RDONLY | O_CLOEXEC, 0);
    }
    return fd;
}

size_t gmg_resident_file_bytes(uintptr_t lo, uintptr_t hi)
{
    long pg = sysconf(_SC_PAGESIZE);
    int fd = open_proc("pagemap");
    if (fd < 0 || pg <= 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t n = walk(fd, lo, hi, (size_t)pg, 0);
    close(fd);
    return n;
}

/* "lo-hi perms offset major:minor inode path" */
static int parse(const char *line, struct gmg_mapping *m)
{
    unsigned long long lo, hi, off, ino;
    unsigned maj, min;
    if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu", &lo, &hi, m->perms, &off, &maj, &min, &ino) != 7)
        return 0;
    m->lo = (uintptr_t)lo;
    m->hi = (uintptr_t)hi;
    m->offset = off;
    m->dev = makedev(maj, min);
    m->ino = (ino_t)ino;
    return 1;
}

size_t gmg_resident_give_back(int (*pick)(const struct gmg_mapping *m, void *arg), void *arg)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0)
        return 0;
    int mfd = open_proc("maps");
    FILE *f = mfd >= 0 ? fdopen(mfd, "r") : NULL;
    if (!f) {
        if (mfd >= 0)
            close(mfd);
        return 0;
    }
    int fd = open_proc("pagemap");
    size_t bytes = 0;
    char line[4096 + 128];
    while (fd >= 0 && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        int whole = len > 0 && line[len - 1] == '\n';
        struct gmg_mapping m;
        if (parse(line, &m) && pick(&m, arg))
            bytes += walk(fd, m.lo, m.hi, (size_t)pg, 1);
        while (!whole && fgets(line, sizeof line, f)) { /* the rest of a long path */
            len = strlen(line);
            whole = len > 0 && line[len - 1] == '\n';
        }
    }
    if (fd >= 0)
        close(fd);
    fclose(f);
    return bytes;
}
