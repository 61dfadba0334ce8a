/* self.c - see self.h. */
#define _GNU_SOURCE
#include "base/self.h"

#include <unistd.h>

static pid_t owner;

void gmg_self_take(void) { __atomic_store_n(&owner, getpid(), __ATOMIC_RELAXED); }

int gmg_self_owns(void) { return getpid() == __atomic_load_n(&owner, __ATOMIC_RELAXED); }
