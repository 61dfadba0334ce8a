/* self.c - see self.h. */
#define _GNU_SOURCE
#include "base/self.h"

#include <sys/mman.h>
#include <unistd.h>

static pid_t owner;

/* A page the kernel empties in every child that gets a copy of this
 * memory (fork, _Fork, a clone without CLONE_VM: MADV_WIPEONFORK), and
 * leaves as it is in one that shares it (vfork, CLONE_VM): its word is
 * 1 in the owner. NULL where the kernel cannot (before Linux 4.14). */
static volatile unsigned *mark;

void gmg_self_take(void)
{
    __atomic_store_n(&owner, getpid(), __ATOMIC_RELAXED);
    if (!mark) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED && madvise(p, 4096, MADV_WIPEONFORK) != 0) {
            munmap(p, 4096);
            p = MAP_FAILED;
        }
        if (p != MAP_FAILED)
            mark = p;
    }
    if (mark)
        *mark = 1;
}

int gmg_self_owns(void) { return getpid() == __atomic_load_n(&owner, __ATOMIC_RELAXED); }

int gmg_self_shares_memory(void) { return !gmg_self_owns() && mark && *mark == 1; }
