/* buildid.c - see buildid.h. */
#include "base/buildid.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

/* Is [p, p + n) inside [start, end)? */
static int inside(uintptr_t start, uintptr_t end, uintptr_t p, uint64_t n)
{
    return p >= start && p <= end && n <= end - p;
}

/* The GNU build ID among the notes at [p, p + len), into out: its length,
 * or 0. */
static size_t notes_build_id(const uint8_t *p, uint64_t len, uint8_t out[GMG_BUILD_ID_MAX])
{
    const uint8_t *stop = p + len;
    while ((size_t)(stop - p) >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        memcpy(&nh, p, sizeof nh);
        uint64_t name = ((uint64_t)nh.n_namesz + 3u) & ~(uint64_t)3, desc = ((uint64_t)nh.n_descsz + 3u) & ~(uint64_t)3;
        if (name + desc > (size_t)(stop - p) - sizeof nh)
            break;
        const uint8_t *nm = p + sizeof nh;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(nm, "GNU", 4) == 0 && nh.n_descsz > 0) {
            size_t n = nh.n_descsz < GMG_BUILD_ID_MAX ? nh.n_descsz : GMG_BUILD_ID_MAX;
            memcpy(out, nm + name, n);
            return n;
        }
        p += sizeof nh + name + desc;
    }
    return 0;
}

/* Does a loaded segment that is readable hold [p, p + n)? (The range
 * between segments may be mapped inaccessible.) */
static int readable(const Elf64_Phdr *phs, unsigned n, uintptr_t bias, uintptr_t p, uint64_t len)
{
    for (unsigned i = 0; i < n; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, &phs[i], sizeof ph);
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) && p >= bias + ph.p_vaddr &&
            p - (bias + ph.p_vaddr) <= ph.p_filesz && len <= ph.p_filesz - (p - (bias + ph.p_vaddr)))
            return 1;
    }
    return 0;
}

size_t gmg_build_id_phdrs(const void *phdrs, unsigned n, uintptr_t bias, uint8_t out[GMG_BUILD_ID_MAX])
{
    const Elf64_Phdr *phs = phdrs;
    for (unsigned i = 0; phs && i < n; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, &phs[i], sizeof ph);
        uintptr_t p = bias + ph.p_vaddr;
        if (ph.p_type != PT_NOTE || p < bias || !readable(phs, n, bias, p, ph.p_filesz))
            continue;
        size_t got = notes_build_id((const uint8_t *)p, ph.p_filesz, out);
        if (got)
            return got;
    }
    return 0;
}

size_t gmg_build_id(uintptr_t start, uintptr_t end, uintptr_t bias, uint8_t out[GMG_BUILD_ID_MAX])
{
    Elf64_Ehdr eh;
    if (!start || end <= start || !inside(start, end, start, sizeof eh))
        return 0;
    memcpy(&eh, (const void *)start, sizeof eh);
    /* the program headers within the first page: mapped with the header
     * wherever the first segment is (glibc also takes objects whose
     * headers lie elsewhere, maybe in no segment: no ID is read for them) */
    uint64_t phlen = (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256 || eh.e_phoff > 4096 ||
        phlen > 4096 - eh.e_phoff || !inside(start, end, start + eh.e_phoff, phlen))
        return 0;
    const Elf64_Phdr *phs = (const Elf64_Phdr *)(start + eh.e_phoff);
    for (unsigned i = 0; i < eh.e_phnum; i++) { /* every note within the object's extent */
        Elf64_Phdr ph;
        memcpy(&ph, &phs[i], sizeof ph);
        if (ph.p_type == PT_NOTE && !inside(start, end, bias + ph.p_vaddr, ph.p_filesz))
            return 0;
    }
    return gmg_build_id_phdrs(phs, eh.e_phnum, bias, out);
}

size_t gmg_build_id_of_file(int fd, uint8_t out[GMG_BUILD_ID_MAX])
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
        eh.e_phnum > 256)
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) { /* one at a time: little stack (a report may run on a small one) */
        Elf64_Phdr ph;
        uint8_t notes[1024];
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph ||
            ph.p_type != PT_NOTE || ph.p_filesz > sizeof notes ||
            pread(fd, notes, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
            continue;
        size_t n = notes_build_id(notes, ph.p_filesz, out);
        if (n)
            return n;
    }
    return 0;
}
