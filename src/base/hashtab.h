/*
 * hashtab.h - uthash, as every table of the guard builds it (base layer).
 *
 * uthash's default on out of memory is exit(-1): the program we are loaded
 * into would die, silently, of one of the guard's tables. Non-fatal, an add
 * that cannot make or grow its table is undone instead (the item's hh.tbl
 * is NULL after it), and every HASH_ADD site checks that (core/track.c's
 * add_locked, report/symbolize.c). Include this, never <uthash.h> itself,
 * so that no table is built the other way.
 */
#ifndef GMG_BASE_HASHTAB_H
#define GMG_BASE_HASHTAB_H

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#endif
