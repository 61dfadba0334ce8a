/*
 * self.h - which process the guard's state belongs to (base layer).
 *
 * The guard's memory (its live table, the dump signal's recorded handler,
 * the group membership) belongs to the process that loaded it, and to each
 * child made by fork(), whose fork handler takes it over. A child made
 * without fork handlers (glibc's _Fork, a raw clone system call) or by
 * vfork (which shares the parent's memory) is another process with the
 * same memory: it must neither act on that state nor change it. Every
 * place that acts on it asks gmg_self_owns() first. getpid() is a system
 * call (glibc keeps no copy): not for the allocation path of a process
 * without a group.
 */
#ifndef GMG_BASE_SELF_H
#define GMG_BASE_SELF_H

/* Start-up, and a fork handler's child: the calling process owns the state. */
void gmg_self_take(void);

/* Is the calling process the one that owns the guard's state? */
int gmg_self_owns(void);

/* Is the calling process another one that shares the owner's memory (a
 * vfork or CLONE_VM child), not a copy of it (_Fork, a raw clone without
 * CLONE_VM)? Whatever it changed, it would change for the owner too. */
int gmg_self_shares_memory(void);

#endif
