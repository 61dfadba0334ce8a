/*
 * graph.h - stream capture as the allocation path needs it (hooks layer):
 * while a stream captures, cuMemAllocAsync on it makes a graph's
 * allocation node (reported, never counted: SPEC §2), not memory.
 * hooks/graph.c has the graph memory nodes' wrappers themselves.
 */
#ifndef GMG_HOOKS_GRAPH_H
#define GMG_HOOKS_GRAPH_H

#include "driver/real.h"

/* Captures begun and not yet ended in the process (never below 0). */
extern int gmg_captures_under_way;

/* Is the stream capturing now (the driver asked)? ptsz: the stream is a
 * _ptsz call's, whose NULL is the thread's own default stream. */
int gmg_stream_captured(CUstream s, int ptsz);

/* Whether an asynchronous allocation on `s` is a captured one: asked of the
 * driver only while some capture is under way. */
static inline int gmg_captured(CUstream s, int ptsz)
{
    return __builtin_expect(__atomic_load_n(&gmg_captures_under_way, __ATOMIC_RELAXED) > 0, 0) &&
           gmg_stream_captured(s, ptsz);
}

#endif
