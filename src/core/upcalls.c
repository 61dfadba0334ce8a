/* upcalls.c - see upcalls.h. */
#include "core/upcalls.h"

#include <stddef.h>

static struct gmg_upcalls up;

void gmg_upcalls_install(const struct gmg_upcalls *u)
{
    /* installed once, by the constructor, before any other thread of ours */
    up = *u;
}

int gmg_upcalls_installed(void) { return up.first_use != NULL; }

void gmg_upcall_first_use(void)
{
    if (up.first_use)
        up.first_use();
}

int gmg_upcall_refused(const struct gmg_refusal *r)
{
    return up.refused ? up.refused(r) : 1;
}

void gmg_upcall_marked(const struct gmg_refusal *r)
{
    if (up.marked)
        up.marked(r);
}
