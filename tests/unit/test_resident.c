/*
 * test_resident.c - base/resident.h: a mapping's pages that are still its
 * file's own are given back, a page the mapping wrote (a private copy) is
 * kept with what was written, and every page reads as before.
 * A file of 64 pages is mapped privately, read whole, and its page 5 and
 * page 40 written; the mapping is given back. Then: the 62 pages read are
 * no longer resident, the two written ones still hold what was written,
 * and every other page reads the file's bytes again. A mapping not picked
 * keeps its pages. Then a read of pagemap that fails half way (built with
 * -Wl,--wrap=pread): only the pages looked at before it are given back,
 * and written ones beyond it keep what was written. Prints "resident: N of
 * M pages given back, 2 written kept" and exits 0, or says what was wrong
 * and exits 1.
 */
#define _GNU_SOURCE
#include "base/resident.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 64

static uintptr_t picked;

static int pick(const struct gmg_mapping *m, void *arg)
{
    (void)arg;
    return m->lo == picked && m->ino != 0 && m->offset == 0;
}

static int fail(const char *what)
{
    fprintf(stderr, "resident: %s\n", what);
    return 1;
}

/* pread, failing its fail_at-th call from now (0: never) */
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
static int fail_at;
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
    if (fail_at && --fail_at == 0)
        return -1;
    return __real_pread(fd, buf, n, off);
}

/* 1024 pages, pages 700 and 900 written, the second read of pagemap fails
 * (its first covers 512 pages): 0 when right. */
static int failed_read_check(int fd, size_t pg)
{
    size_t len = 1024 * pg;
    if (ftruncate(fd, (off_t)len) != 0)
        return fail("cannot grow the file");
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (a == MAP_FAILED)
        return fail("cannot map the file");
    volatile char sink = 0;
    for (size_t i = 0; i < len; i += pg)
        sink += a[i];
    (void)sink;
    a[700 * pg] = 'P';
    a[900 * pg] = 'Q';
    picked = (uintptr_t)a;
    fail_at = 2;
    size_t gone = gmg_resident_give_back(pick, NULL);
    fail_at = 0;
    if (a[700 * pg] != 'P' || a[900 * pg] != 'Q')
        return fail("a failed read of pagemap: written pages past it were given back");
    if (gone != 512 * pg || gmg_resident_file_bytes((uintptr_t)a + 512 * pg, (uintptr_t)a + len) != 510 * pg) {
        fprintf(stderr, "resident: a failed read of pagemap: %zu bytes given back, not those looked at (%zu)\n", gone,
                512 * pg);
        return 1;
    }
    return 0;
}

int main(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = PAGES * pg;
    char path[] = "/tmp/gmg-resident-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return fail("no temporary file");
    unlink(path);
    char *want = malloc(len);
    for (size_t i = 0; i < len; i++)
        want[i] = (char)(i * 7 + i / pg);
    if (write(fd, want, len) != (ssize_t)len)
        return fail("cannot write the file");
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    char *b = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (a == MAP_FAILED || b == MAP_FAILED)
        return fail("cannot map the file");
    volatile char sink = 0;
    for (size_t i = 0; i < len; i += pg)
        sink += a[i] + b[i];
    (void)sink;
    a[5 * pg + 3] = 'X';
    a[40 * pg] = 'Y';
    size_t before = gmg_resident_file_bytes((uintptr_t)a, (uintptr_t)a + len);
    if (before == 0)
        return fail("/proc/self/pagemap shows no page of the file resident (cannot be read here?)");
    if (before != (PAGES - 2) * pg)
        return fail("the written pages read as the file's");
    picked = (uintptr_t)a;
    size_t gone = gmg_resident_give_back(pick, NULL);
    if (gone != (PAGES - 2) * pg) {
        fprintf(stderr, "resident: %zu bytes given back, not %zu\n", gone, (PAGES - 2) * pg);
        return 1;
    }
    if (gmg_resident_file_bytes((uintptr_t)a, (uintptr_t)a + len) != 0)
        return fail("pages of the file are still resident after it was given back");
    if (gmg_resident_file_bytes((uintptr_t)b, (uintptr_t)b + len) != len)
        return fail("a mapping not picked lost pages");
    if (a[5 * pg + 3] != 'X' || a[40 * pg] != 'Y')
        return fail("a written page lost what was written");
    want[5 * pg + 3] = 'X';
    want[40 * pg] = 'Y';
    if (memcmp(a, want, len) != 0 || memcmp(b, want, 5 * pg + 3) != 0)
        return fail("a page given back reads otherwise than before");
    munmap(a, len);
    if (failed_read_check(fd, pg))
        return 1;
    printf("resident: %zu of %d pages given back, 2 written kept; a failed read of pagemap gives back only what "
           "was looked at\n", gone / pg, PAGES);
    return 0;
}
