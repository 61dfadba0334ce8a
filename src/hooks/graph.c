/*
 * graph.c - graph memory nodes (SPEC §2: reported, not counted). An
 * allocation node's address is fixed when the node is added, and the
 * memory behind it exists only from a launch until it is freed: by a free
 * node of a graph, or by the program with cuMemFree/cuMemFreeAsync. So the
 * guard records the address, with the stack of the call that added the
 * node, as a "cuGraphAddMemAllocNode" allocation that never counts against
 * the quota, and drops it when a free node for it is added (the graph then
 * frees it on every launch) or when the program frees it. Limits, in the
 * README: an allocation freed by the program comes back at the graph's next
 * launch unseen.
 *
 * Stream capture makes the same nodes of cuMemAllocAsync calls: while a
 * stream captures, an allocation on it is a graph's, not memory. The
 * wrappers of cuStreamBeginCapture* and cuStreamEndCapture keep a count of
 * captures under way; only while it is above zero does an asynchronous
 * allocation ask the driver whether its stream captures (a stream can join
 * another's capture through an event, which no count sees), so that the
 * allocation path pays one read of the count otherwise.
 */
#include "hooks/graph.h"

#include "hooks/intercept.h"
#include "hooks/mempool.h"

/* The alloc node parameters of the v1 call and of the CUgraphNodeParams
 * union share their layout up to dptr (cuda.h: _v1_st and _v2_st). */
_Static_assert(__builtin_offsetof(CUDA_MEM_ALLOC_NODE_PARAMS_v1, dptr) ==
               __builtin_offsetof(CUDA_MEM_ALLOC_NODE_PARAMS_v2, dptr), "alloc node params differ");

static void alloc_begin(struct gmg_op *op, const CUmemPoolProps *props, size_t bytes)
{
    gmg_begin(op, GMG_FAM_GRAPH, gmg_location_device(&props->location), bytes, 0); /* uncounted: never refused */
}

static void alloc_end(struct gmg_op *op, CUresult r, CUdeviceptr dptr, size_t bytes)
{
    gmg_end(op, r, GMG_SPACE_DEVPTR, r == CUDA_SUCCESS ? dptr : 0, bytes, bytes);
}

GMG_EXPORT CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                   size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    gmg_enter(H_cuGraphAddMemAllocNode);
    if (!nodeParams)
        return CALL_REAL(cuGraphAddMemAllocNode, phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
    struct gmg_op op;
    alloc_begin(&op, &nodeParams->poolProps, nodeParams->bytesize);
    CUresult r = CALL_REAL(cuGraphAddMemAllocNode, phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
    alloc_end(&op, r, nodeParams->dptr, nodeParams->bytesize);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                  size_t numDependencies, CUdeviceptr dptr)
{
    gmg_enter(H_cuGraphAddMemFreeNode);
    struct gmg_free f;
    gmg_free_take_devptr(&f, dptr, 0);
    CUresult r = CALL_REAL(cuGraphAddMemFreeNode, phGraphNode, hGraph, dependencies, numDependencies, dptr);
    gmg_free_done(&f, r);
    return r;
}

/* cuGraphAddNode's two ABIs: one call, with or without edge data. */
static CUresult add_node(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                         CUgraphNodeParams *p, int v2)
{
#define ADD_NODE() (v2 ? CALL_REAL(cuGraphAddNode_v2, ph, g, deps, edges, n, p) : CALL_REAL(cuGraphAddNode, ph, g, deps, n, p))
    if (p && p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
        struct gmg_op op;
        alloc_begin(&op, &p->alloc.poolProps, p->alloc.bytesize);
        CUresult r = ADD_NODE();
        alloc_end(&op, r, p->alloc.dptr, p->alloc.bytesize);
        return r;
    }
    if (p && p->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
        struct gmg_free f;
        gmg_free_take_devptr(&f, p->free.dptr, 0);
        CUresult r = ADD_NODE();
        gmg_free_done(&f, r);
        return r;
    }
    return ADD_NODE();
#undef ADD_NODE
}

GMG_EXPORT CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                           size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    gmg_enter(H_cuGraphAddNode);
    return add_node(phGraphNode, hGraph, dependencies, NULL, numDependencies, nodeParams, 0);
}

GMG_EXPORT CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                              const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                              CUgraphNodeParams *nodeParams)
{
    gmg_enter(H_cuGraphAddNode_v2);
    return add_node(phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams, 1);
}

/* ---------------------------------------------------------- stream capture */

int gmg_captures_under_way;

int gmg_stream_captured(CUstream s, int ptsz)
{
    gmg_pfn_cuStreamIsCapturing is = REAL(cuStreamIsCapturing);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!s && ptsz) /* the _ptsz calls' default stream is the thread's own */
        s = CU_STREAM_PER_THREAD;
    return is && is(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static CUresult began(CUresult r)
{
    if (r == CUDA_SUCCESS)
        __atomic_fetch_add(&gmg_captures_under_way, 1, __ATOMIC_RELAXED);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    gmg_enter(H_cuStreamBeginCapture);
    return began(CALL_REAL(cuStreamBeginCapture, hStream));
}

GMG_EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    gmg_enter(H_cuStreamBeginCapture_ptsz);
    return began(CALL_REAL(cuStreamBeginCapture_ptsz, hStream));
}

GMG_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    gmg_enter(H_cuStreamBeginCapture_v2);
    return began(CALL_REAL(cuStreamBeginCapture_v2, hStream, mode));
}

GMG_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    gmg_enter(H_cuStreamBeginCapture_v2_ptsz);
    return began(CALL_REAL(cuStreamBeginCapture_v2_ptsz, hStream, mode));
}

GMG_EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                                        const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                                        CUstreamCaptureMode mode)
{
    gmg_enter(H_cuStreamBeginCaptureToGraph);
    return began(CALL_REAL(cuStreamBeginCaptureToGraph, hStream, hGraph, dependencies, dependencyData, numDependencies, mode));
}

GMG_EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                             const CUgraphNode *dependencies,
                                                             const CUgraphEdgeData *dependencyData,
                                                             size_t numDependencies, CUstreamCaptureMode mode)
{
    gmg_enter(H_cuStreamBeginCaptureToGraph_ptsz);
    return began(CALL_REAL(cuStreamBeginCaptureToGraph_ptsz, hStream, hGraph, dependencies, dependencyData,
                           numDependencies, mode));
}

/* Did this call end a capture? The driver's answer says so: success, or the
 * capture's own failure (invalidated, a fork not joined back), after which
 * the stream no longer captures. Asking the stream before and after is not
 * enough: two threads ending one capture at once both see it capturing
 * before and not after, and the one the driver refused (CUDA_ERROR_ILLEGAL_
 * STATE: no capture when its call got there) would end a second capture in
 * the count, whose allocations would then be counted against the quota. An
 * answer not listed leaves the count high, which costs a query per
 * asynchronous allocation, never a wrong count. */
static int ends_capture(CUresult r)
{
    return r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED || r == CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
}

static CUresult end_capture(CUstream s, CUgraph *pg, int ptsz)
{
    int was = gmg_stream_captured(s, ptsz);
    CUresult r = ptsz ? CALL_REAL(cuStreamEndCapture_ptsz, s, pg) : CALL_REAL(cuStreamEndCapture, s, pg);
    if (was && ends_capture(r) && !gmg_stream_captured(s, ptsz)) {
        int n = __atomic_load_n(&gmg_captures_under_way, __ATOMIC_RELAXED);
        while (n > 0 && !__atomic_compare_exchange_n(&gmg_captures_under_way, &n, n - 1, 1, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED))
            ;
    }
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    gmg_enter(H_cuStreamEndCapture);
    return end_capture(hStream, phGraph, 0);
}

GMG_EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    gmg_enter(H_cuStreamEndCapture_ptsz);
    return end_capture(hStream, phGraph, 1);
}
