/*
 * races.c - a graph allocation freed by free nodes of two graphs, or by a
 * free node and cuMemFree, on two threads at once: nothing left listed,
 * nothing counted.
 *
 *   graph_races N   N rounds
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>

struct gjob {
    pthread_barrier_t *go;
    CUgraph g;
    CUdeviceptr p;
    int op; /* 0 free node, 1 cuMemFree_v2 */
    CUresult r;
};

static void *graph_worker(void *p)
{
    struct gjob *j = p;
    TL_CHECK(cuCtxSetCurrent(tl_ctx));
    pthread_barrier_wait(j->go);
    CUgraphNode n;
    j->r = j->op == 0 ? cuGraphAddMemFreeNode(&n, j->g, NULL, 0, j->p) : cuMemFree_v2(j->p);
    return NULL;
}

/* A graph allocation freed by a free node in another graph on one thread
 * and by cuMemFree on another, at once; and two free nodes for it in two
 * graphs at once (the driver takes one). Nothing may stay listed, nothing
 * be counted. */
static void graph_races(int rounds)
{
    int left = 0;
    for (int i = 0; i < rounds; i++) {
        CUgraph a, b, c;
        CUgraphNode n;
        TL_CHECK(cuGraphCreate(&a, 0));
        TL_CHECK(cuGraphCreate(&b, 0));
        TL_CHECK(cuGraphCreate(&c, 0));
        CUDA_MEM_ALLOC_NODE_PARAMS x = tl_graph_params(65536, 0);
        TL_CHECK(cuGraphAddMemAllocNode(&n, a, NULL, 0, &x));
        struct gjob j0 = { .g = b, .p = x.dptr, .op = 0 }, j1 = { .g = c, .p = x.dptr, .op = i % 2 };
        pthread_barrier_t go;
        pthread_t t[2];
        pthread_barrier_init(&go, NULL, 2);
        j0.go = j1.go = &go;
        pthread_create(&t[0], NULL, graph_worker, &j0);
        pthread_create(&t[1], NULL, graph_worker, &j1);
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
        pthread_barrier_destroy(&go);
        TL_CHECK(cuGraphDestroy(c));
        TL_CHECK(cuGraphDestroy(b));
        TL_CHECK(cuGraphDestroy(a));
    }
    (void)left;
    printf("graph races: %d rounds; guard %llu sim %llu\n", rounds, tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    tl_setup(0);
    graph_races(argc > 1 ? atoi(argv[1]) : 100);
    fflush(stdout);
    return 0;
}
