/*
 * export.h - GMG_EXPORT marks the few symbols the library exports (base
 * layer): the CUDA entry points, dlsym, dlclose (hooks/unload.c), the installers of a signal handler
 * (sigaction, signal, bsd_signal, ssignal, sysv_signal, __sysv_signal,
 * sigset, sigignore: report/dumpsig.c), and the public API. Everything else
 * is hidden (-fvisibility=hidden).
 */
#ifndef GMG_BASE_EXPORT_H
#define GMG_BASE_EXPORT_H

#define GMG_EXPORT __attribute__((visibility("default")))

#endif
