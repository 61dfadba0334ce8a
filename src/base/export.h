/*
 * export.h - GMG_EXPORT marks the few symbols the library exports (base
 * layer): the CUDA entry points, dlsym, sigaction and signal, and the public
 * API. Everything else is hidden (-fvisibility=hidden).
 */
#ifndef GMG_BASE_EXPORT_H
#define GMG_BASE_EXPORT_H

#define GMG_EXPORT __attribute__((visibility("default")))

#endif
