/*
 * symbolize.h - turning return addresses into names, at report time only
 * (report layer).
 * dladdr gives module, base and exported names; DWARF (elfutils libdwfl)
 * adds static functions and file:line; C++ names are demangled with the
 * C++ runtime's __cxa_demangle when the process has one. Frames of a
 * library unloaded since they were captured are read from its file.
 * Python frames (tagged words in a stack) come back as they were interned.
 */
#ifndef GMG_REPORT_SYMBOLIZE_H
#define GMG_REPORT_SYMBOLIZE_H

#include "core/stacks.h"

#include <stdint.h>

struct gmg_frame_info {
    uintptr_t pc;
    const char *function;   /* NULL if unknown */
    const char *file;       /* NULL if unknown */
    int line;
    const char *module;     /* basename of the object, NULL if unknown */
    const char *module_path; /* its path as loaded, NULL if unknown */
    uintptr_t offset;       /* pc - module base */
    int unloaded;           /* its library was unloaded since (dlclose) */
    int python;             /* a Python frame (core/pyframes.h): function,
                               file and line only */
    int left_out;           /* a Python mark: this many frames of a long
                               stack left out here (function says so, file
                               "", line 0) */
};

struct gmg_symbolizer;

struct gmg_symbolizer *gmg_symbolizer_new(void);
/* The returned strings live until gmg_symbolizer_free. `mod` is the module
 * the frame pointed into when captured (gmg_stack_module), or NULL: a frame
 * whose module is gone is named from that module's file, never from
 * whatever is mapped at its address now. `s` may be NULL (a get out of
 * memory): the frame is then named by the loader alone (dladdr). */
void gmg_symbolize(struct gmg_symbolizer *s, uintptr_t pc, const struct gmg_module *mod, struct gmg_frame_info *out);
void gmg_symbolizer_free(struct gmg_symbolizer *s);
/* How many names s could not keep (out of memory) since it was made; the
 * frames concerned are not cached, so a later call tries again. 0 for
 * NULL (which names frames by the loader alone). */
unsigned long gmg_symbolizer_lost(const struct gmg_symbolizer *s);
/* How many frames s named from the loader alone (dladdr: the modules'
 * dynamic symbol tables; no file:line, no static function) because libdw
 * could not read the process's modules, since it was made; *why (if why is
 * not NULL) says why, or is NULL while it could. 0 for NULL. */
unsigned long gmg_symbolizer_dynamic_only(const struct gmg_symbolizer *s, const char **why);

/* The shared symbolizer (see symbolize.c), or a new one while it is in use;
 * NULL when none can be made. Hand it back with put, and use its strings
 * only until then. */
struct gmg_symbolizer *gmg_symbolizer_get(void);
void gmg_symbolizer_put(struct gmg_symbolizer *s);
/* Make the shared symbolizer's view of the process now (the reporter
 * thread, idle at start): the first refusal message then reads no
 * /proc/self/maps and finds libdw's code already paged in. It is made
 * again, when next needed, if objects were loaded or unloaded since. */
void gmg_symbolizer_warm(void);
/* A library the guard loads itself while it holds s (NVML, opened for a
 * report's device free memory): mark = gmg_symbolizer_loads() before the
 * load, gmg_symbolizer_own_loads(s, mark) after it. When nothing was
 * unloaded meanwhile and s, the shared one, knew every object before, it
 * stays the shared one: the next get does not make it anew (its Dwfl read
 * again, its files opened again just after a report, when a daemon may
 * close every descriptor). A library another thread loads during the
 * guard's own load is then named from its dynamic symbols until the next
 * load or unload. */
struct gmg_loads { unsigned long long adds, subs; };
struct gmg_loads gmg_symbolizer_loads(void);
void gmg_symbolizer_own_loads(struct gmg_symbolizer *s, struct gmg_loads mark);
void gmg_symbolizer_atfork_child(void);

#endif
