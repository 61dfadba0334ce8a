/*
 * test_resident.c - base/resident.h: a mapping's pages that are still its
 * file's own are given back, a page the mapping wrote (a private copy) is
 * kept with what was written, and every page reads as before.
 * A file of 64 pages is mapped privately, read whole, and its page 5 and
 * page 40 written; the mapping is given back. Then: the 62 pages read are
 * no longer resident, the two written ones still hold what was written,
 * and every other page reads the file's bytes again. A mapping not picked
 * keeps its pages. Prints "resident: N of M pages given back, 2 written
 * kept" and exits 0, or says what was wrong and exits 1.
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
    printf("resident: %zu of %d pages given back, 2 written kept\n", gone / pg, PAGES);
    return 0;
}
