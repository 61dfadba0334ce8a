/*
 * unload.h - libraries unloaded, seen (hooks layer): the exported dlclose
 * (unload.c), and for unloads that do not go through it (a library loaded
 * with RTLD_DEEPBIND calling dlclose binds to the C library's own; dlmopen
 * namespaces) a look at the loader's unload count from the reporter
 * thread's tick.
 */
#ifndef GMG_HOOKS_UNLOAD_H
#define GMG_HOOKS_UNLOAD_H

/* At the first CUDA use (the first look), then once a second on the
 * reporter thread: when the loader has unloaded a library since the last
 * look, every thread forgets its unwind rules, as the exported dlclose
 * makes them. An unload it does not see is thus walked by old rules for a
 * second at most. Never two at once (first use comes before the reporter). */
void gmg_unload_tick(void);

#endif
