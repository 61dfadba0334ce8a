/*
 * fmt_size.c - prints gmg_fmt_size (base/buf.c) of each argument, one a
 * line: the sizes the text report writes, for pictures.sh to compare the
 * page's with.
 */
#include "base/buf.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char s[96];
        puts(gmg_fmt_size(s, sizeof s, strtoull(argv[i], NULL, 10)));
    }
    return 0;
}
