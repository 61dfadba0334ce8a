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
 * launch unseen; allocations that stream capture turns into nodes are
 * counted as the cuMemAllocAsync calls they were made with.
 */
#include "hooks/intercept.h"

static int node_device(const CUmemPoolProps *p)
{
    return p->location.type == CU_MEM_LOCATION_TYPE_DEVICE && p->location.id >= 0 ? p->location.id : -1;
}

/* The alloc node parameters of the v1 call and of the CUgraphNodeParams
 * union share their layout up to dptr (cuda.h: _v1_st and _v2_st). */
_Static_assert(__builtin_offsetof(CUDA_MEM_ALLOC_NODE_PARAMS_v1, dptr) ==
               __builtin_offsetof(CUDA_MEM_ALLOC_NODE_PARAMS_v2, dptr), "alloc node params differ");

static void alloc_begin(struct gmg_op *op, const CUmemPoolProps *props, size_t bytes)
{
    gmg_begin(op, GMG_FAM_GRAPH, node_device(props), bytes, 0); /* uncounted: never refused */
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
