/*
 * view.h - `gpumemguard view REPORT.json [-o OUT.html]`: the HTML page of a
 * saved JSON report (base/page.h), after checking that the file is one.
 */
#ifndef GMG_CLI_VIEW_H
#define GMG_CLI_VIEW_H

/* argv: the arguments after "view"; returns the command's exit status. */
int gmg_view_main(int argc, char **argv);

#endif
