/*
 * resident.h - giving back the pages of this process that a file holds
 * unchanged (base layer): code and data read once, for a warm-up, and read
 * again from the page cache when next touched. A page its mapping wrote
 * (a private copy: relocations, a libelf conversion) is never given back.
 */
#ifndef GMG_BASE_RESIDENT_H
#define GMG_BASE_RESIDENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of the maps file (/proc/thread-self's, else /proc/self's). */
struct gmg_mapping {
    uintptr_t lo, hi;
    char perms[5];            /* "r-xp" */
    unsigned long long offset;
    dev_t dev;
    ino_t ino;                /* 0: not a file's */
};

/* Every mapping `pick` says 1 to: its pages that are resident and still the
 * file's own (the pagemap file: present, file-backed) dropped
 * (MADV_DONTNEED), the others left. Only mappings no thread writes to
 * meanwhile may be picked: read-only ones, or a private one the caller
 * alone uses (a page written between the look and the drop would be
 * lost). Returns the bytes given back; 0 where the maps or pagemap file
 * cannot be read. Allocates (stdio): not in a signal handler. */
size_t gmg_resident_give_back(int (*pick)(const struct gmg_mapping *m, void *arg), void *arg);

/* The mapping's bytes that are resident and the file's own, as the above
 * would count them, without dropping them (tests). */
size_t gmg_resident_file_bytes(uintptr_t lo, uintptr_t hi);

#endif
