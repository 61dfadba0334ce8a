/*
 * symbolize.h - turning return addresses into names, at report time only
 * (report layer).
 * dladdr gives module, base and exported names; DWARF (elfutils libdwfl)
 * adds static functions and file:line; C++ names are demangled with the
 * C++ runtime's __cxa_demangle when the process has one.
 */
#ifndef GMG_REPORT_SYMBOLIZE_H
#define GMG_REPORT_SYMBOLIZE_H

#include <stdint.h>

struct gmg_frame_info {
    uintptr_t pc;
    const char *function;   /* NULL if unknown */
    const char *file;       /* NULL if unknown */
    int line;
    const char *module;     /* basename of the object, NULL if unknown */
    uintptr_t offset;       /* pc - module base */
};

struct gmg_symbolizer;

struct gmg_symbolizer *gmg_symbolizer_new(void);
/* The returned strings live until gmg_symbolizer_free. */
void gmg_symbolize(struct gmg_symbolizer *s, uintptr_t pc, struct gmg_frame_info *out);
void gmg_symbolizer_free(struct gmg_symbolizer *s);

#endif
