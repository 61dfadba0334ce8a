/* libclosing.c - a program's own shared library whose destructor writes
 * the last line of its log and closes it (tests/exitcode/closing.sh): it is
 * finalized after the guard, which is loaded first. */
#include <stdio.h>
#include <stdlib.h>

static FILE *log_file;

__attribute__((constructor)) static void open_log(void)
{
    const char *path = getenv("CLOSING_LOG");
    log_file = path ? fopen(path, "w") : NULL;
}

void closing_log(const char *line)
{
    if (log_file)
        fprintf(log_file, "%s\n", line);
}

__attribute__((destructor)) static void close_log(void)
{
    if (log_file) {
        fprintf(log_file, "closing line, written by the library's destructor\n");
        fclose(log_file);
    }
}
