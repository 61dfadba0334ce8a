/*
 * trust.c - make stress's program: scripts/stress.sh builds this path, as
 * one file, into `trust`. Its code is tests/stress/stress.c (which says
 * where each mode lives); this file only keeps the path and the name that
 * script uses.
 */
#include "../stress/stress.c"
