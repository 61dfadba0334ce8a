/*
 * exe.h - the program's own path (base layer), as /proc/self/exe names it,
 * and its command line:
 * read once per process (a forked child runs the same program; an exec
 * loads a new guard) into one static buffer, for the reports' headers and
 * the metrics file's label, so that no report or metrics write carries
 * PATH_MAX bytes on its stack (some run on the program's own threads).
 */
#ifndef GMG_BASE_EXE_H
#define GMG_BASE_EXE_H

/* The whole path; "" if it cannot be read. Never NULL. */
const char *gmg_exe_path(void);

/* The program with its arguments, as one line (python train.py --lr 3e-4),
 * from /proc/self/cmdline, read once (the guard's constructor asks first,
 * before the program can rewrite its argv); cut at 4 KiB with "...". Never
 * NULL; the path when no argument can be read. */
const char *gmg_exe_cmdline(void);

#endif
