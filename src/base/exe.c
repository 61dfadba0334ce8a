/* exe.c - see exe.h. */
#include "base/exe.h"

#include <limits.h>
#include <pthread.h>
#include <unistd.h>

static char exe_path[PATH_MAX];
static pthread_once_t exe_once = PTHREAD_ONCE_INIT;

static void read_exe(void)
{
    ssize_t len = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[len > 0 ? len : 0] = 0;
}

const char *gmg_exe_path(void)
{
    pthread_once(&exe_once, read_exe);
    return exe_path;
}
