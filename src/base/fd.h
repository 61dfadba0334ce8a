/*
 * fd.h - the guard's own descriptors, kept out of the program's way (base
 * layer).
 *
 * A program may close every descriptor from 3 up (a daemon's closefrom) and
 * take the numbers back at once, for a pipe or a file of its own. A
 * descriptor the guard held at such a number across a read, a write or its
 * close was then the program's: the guard read the program's pipe, wrote
 * into its file, closed it. So each file the guard opens while the program
 * runs (the symbolizer's, reports, the metrics file, the live view's page)
 * is moved, at once, to GMG_FD_FLOOR or above, where a program that closed
 * all of its own gets none back before hundreds of others, and never one
 * of 0, 1 or 2 (a program started with one of them closed writes its
 * output there). (The group's segment keeps its descriptor, raised too,
 * and checks it is still its own before each use: cluster/group.c.)
 */
#ifndef GMG_BASE_FD_H
#define GMG_BASE_FD_H

#include <sys/types.h>

#define GMG_FD_FLOOR 512

/* fd, just opened on path, as a descriptor at GMG_FD_FLOOR or above (its
 * low number closed); -1 when the number is no longer path's file (the
 * program closed it, and may have taken it back, in between: then it is
 * the program's, never read or closed here). fd itself, where it is, when
 * nothing can be checked (no path, or none that stat finds) or no number
 * up there is free (the limit). The copy is checked before the low number
 * is closed: a program that closes and takes back that very number between
 * the open and the copy (one system call) still loses it to the guard. */
int gmg_fd_raise(int fd, const char *path);

/* open(2), the descriptor raised; a number lost to the program is opened
 * again, once (a file O_CREAT | O_EXCL made is then opened as it is). */
int gmg_open_high(const char *path, int flags, mode_t mode);

/* A small file (procfs: /proc/self/stat, cmdline) read whole, once,
 * through a raised descriptor, into buf (cap bytes, NUL-terminated after
 * what was read): its length, or -1 when it could not be read. */
long gmg_read_small(const char *path, char *buf, size_t cap);

#endif
