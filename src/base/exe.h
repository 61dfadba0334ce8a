/*
 * exe.h - the program's own path (base layer), as /proc/self/exe names it:
 * read once per process (a forked child runs the same program; an exec
 * loads a new guard) into one static buffer, for the reports' headers and
 * the metrics file's label, so that no report or metrics write carries
 * PATH_MAX bytes on its stack (some run on the program's own threads).
 */
#ifndef GMG_BASE_EXE_H
#define GMG_BASE_EXE_H

/* The whole path; "" if it cannot be read. Never NULL. */
const char *gmg_exe_path(void);

#endif
