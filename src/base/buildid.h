/*
 * buildid.h - a loaded ELF object's build ID (NT_GNU_BUILD_ID), read from
 * its notes in memory (base layer): what tells a library apart from
 * another mapped later from the same path at the same addresses (a plugin
 * rebuilt and loaded again).
 */
#ifndef GMG_BASE_BUILDID_H
#define GMG_BASE_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define GMG_BUILD_ID_MAX 20

/* The build ID of the object loaded at [start, end) with load bias `bias`
 * (its ELF header at start, as the loader maps it), into out: its length
 * (at most GMG_BUILD_ID_MAX bytes kept), or 0 when it has none or it cannot
 * be read. Reads nothing outside [start, end); no lock, no allocation. */
size_t gmg_build_id(uintptr_t start, uintptr_t end, uintptr_t bias, uint8_t out[GMG_BUILD_ID_MAX]);

/* The same from the object's program headers (dl_iterate_phdr's copy,
 * n of them) and load bias: its notes in readable loaded segments. */
size_t gmg_build_id_phdrs(const void *phdrs, unsigned n, uintptr_t bias, uint8_t out[GMG_BUILD_ID_MAX]);
/* The same, read from an ELF file (its PT_NOTE segments). */
size_t gmg_build_id_of_file(int fd, uint8_t out[GMG_BUILD_ID_MAX]);

#endif
