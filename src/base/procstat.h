/*
 * procstat.h - the fields of a /proc/PID/stat line (base layer), for the
 * status page's start time (cluster/status_layout.h, shared with the
 * command) and the reporter's heap size (report/reporter.c).
 */
#ifndef GMG_BASE_PROCSTAT_H
#define GMG_BASE_PROCSTAT_H

#include <string.h>

/* Where field `field` (3 or more, numbered as proc(5) does) begins in the
 * text of /proc/PID/stat, or NULL when the line has fewer. The command
 * name (field 2) may hold spaces and parentheses: the fields are counted
 * from its last ')'. */
static inline const char *gmg_proc_stat_field(const char *text, int field)
{
    const char *p = strrchr(text, ')');
    if (!p || p[1] != ' ' || !p[2] || field < 3)
        return NULL;
    p += 2; /* field 3 */
    for (int f = 3; f < field; f++) {
        p = strchr(p, ' ');
        if (!p)
            return NULL;
        p++;
    }
    return p;
}

#endif
