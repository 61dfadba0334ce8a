/*
 * top.h - `gpumemguard top`: the guarded processes of this machine, live,
 * from the status pages they publish (cluster/status_layout.h).
 */
#ifndef GMG_CLI_TOP_H
#define GMG_CLI_TOP_H

/* argv: the arguments after "top". Returns the command's exit status. */
int gmg_top_main(int argc, char **argv);

#endif
