/* exe.c - see exe.h. */
#include "base/exe.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define CMDLINE_MAX 4096

static char exe_path[PATH_MAX];
static pthread_once_t exe_once = PTHREAD_ONCE_INIT;
static char cmdline[CMDLINE_MAX];
static pthread_once_t cmdline_once = PTHREAD_ONCE_INIT;

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

/* Does an argument need quotes to read as one (empty, a blank, a quote)? */
static int needs_quotes(const char *a, size_t n)
{
    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (a[i] == ' ' || a[i] == '\t' || a[i] == '\n' || a[i] == '\'' || a[i] == '"' || a[i] == '\\')
            return 1;
    return 0;
}

/* /proc/self/cmdline's arguments, NUL-separated, as one line: blanks
 * between them, an argument with a blank or a quote in single quotes (a
 * single quote in it as '\''), "..." where it is cut at CMDLINE_MAX. */
static void read_cmdline(void)
{
    char raw[CMDLINE_MAX];
    size_t n = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (n < sizeof raw && (r = read(fd, raw + n, sizeof raw - n)) > 0)
            n += (size_t)r;
        close(fd);
    }
    int cut = n == sizeof raw;
    size_t k = 0, room = sizeof cmdline - 8; /* for "..." and the NUL */
    for (size_t i = 0; i < n && k < room;) {
        const char *a = raw + i;
        size_t len = strnlen(a, n - i);
        if (k)
            cmdline[k++] = ' ';
        int q = needs_quotes(a, len);
        if (q && k < room)
            cmdline[k++] = '\'';
        for (size_t j = 0; j < len && k + 4 < room; j++) {
            if (q && a[j] == '\'') {
                memcpy(cmdline + k, "'\\''", 4);
                k += 4;
            } else {
                cmdline[k++] = a[j] == '\n' || a[j] == '\t' ? ' ' : a[j];
            }
        }
        if (q && k < room)
            cmdline[k++] = '\'';
        i += len + 1;
        if (k + 4 >= room)
            cut = 1;
    }
    if (cut) {
        memcpy(cmdline + k, "...", 3);
        k += 3;
    }
    cmdline[k] = 0;
    if (!k) { /* no arguments readable: the path names the program */
        const char *path = gmg_exe_path();
        size_t n = strnlen(path, sizeof cmdline - 1);
        memcpy(cmdline, path, n);
        cmdline[n] = 0;
    }
}

const char *gmg_exe_cmdline(void)
{
    pthread_once(&cmdline_once, read_cmdline);
    return cmdline;
}
