/*
 * nodwfl.c - preloaded beside the guard: libdw cannot read the process's
 * modules, as where /proc/PID/maps cannot be read (a hardened /proc, a
 * sandbox). Its dwfl_linux_proc_report, found before libdw's, answers
 * GMGTEST_DWFL=fail with EACCES (nothing reported) and GMGTEST_DWFL=none
 * with success having reported no module; otherwise it is libdw's. The
 * guard's symbolizer must then name frames from the loader alone, and its
 * reports say so, for tests/reports.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dwfl_linux_proc_report(Dwfl *dwfl, pid_t pid)
{
    const char *how = getenv("GMGTEST_DWFL");
    if (how && !strcmp(how, "fail"))
        return EACCES;
    if (how && !strcmp(how, "none"))
        return 0;
    int (*real)(Dwfl *, pid_t) = (int (*)(Dwfl *, pid_t))dlsym(RTLD_NEXT, "dwfl_linux_proc_report");
    return real ? real(dwfl, pid) : ENOSYS;
}
