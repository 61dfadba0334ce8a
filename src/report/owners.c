/*
 * owners.c - who made each allocation, and which allocations are caching
 * pools' segments (report layer, at report time only).
 *
 * Frameworks keep freed memory in caching pools: the driver sees their
 * segments, not their tensors. A group's stack says who asked: its owner is
 * the library that reached the driver past the CUDA runtime (the first frame,
 * innermost first, outside the driver, the runtime and the call glue of
 * ctypes and cuda-python), named by the one table below, or "program"; and
 * it is a pool's segment when any frame is the segment-growing code of a
 * known caching allocator (the table's pool rows, under GPUMEM_POOLS=auto)
 * or matches a `pool:PATTERN` line of GPUMEM_SUPPRESSIONS. A pool's segment
 * live at exit is retained by that pool, not leaked: it is kept in its list
 * (marked), taken out of the list's totals, and so out of GPUMEM_EXITCODE.
 *
 * Nothing here runs on the allocation path: frames are named by the report's
 * symbolizer (which caches per address), and each frame's verdict is cached
 * per report by address.
 */
#define _GNU_SOURCE
#include "report/report.h"

#include "base/config.h"
#include "base/suppress.h"
#include "core/heaps.h"
#include "core/pyframes.h"
#include "core/record.h"
#include "core/stacks.h"
#include "report/pcmap.h"
#include "report/sites.h"

#include <stdlib.h>
#include <string.h>

/* The one table of known owners and caching pools (docs/pools.md shows it).
 * A native frame matches a row when the row's function pattern matches its
 * function (or the row has none) and its module pattern matches its module
 * path (or it has none); a Python frame when `pyfile` matches its file.
 * Patterns are GPUMEM_SUPPRESSIONS templates: '*' any text, '^' anchors at
 * the start. Rows are tried in order: the first that matches names the
 * owner. `pool` rows are the frames through which a caching allocator grows
 * itself by a segment (never a per-tensor path such as PyTorch's
 * cudaMallocAsync backend, whose allocations are each a tensor), and those
 * through which a library handle takes the memory it keeps for its life.
 * Module and Python-file patterns see a path from its package on when it
 * lies in site-packages (package_path). */
struct rule {
    const char *owner;
    const char *function;
    const char *module;
    const char *pyfile;
    int pool;
};

static const struct rule rules[] = {
    /* PyTorch's caching allocator grows by a segment in DeviceCachingAllocator::
     * malloc / alloc_block (under CUDACachingAllocator::Native:: in 2.x,
     * directly under CUDACachingAllocator:: in 1.x), ExpandableSegment::map
     * (expandable_segments:True), THCCachingAllocator (1.x). Not
     * NativeCachingAllocator::allocate itself: under
     * PYTORCH_NO_CUDA_MEMORY_CACHING=1 it calls cudaMalloc per tensor. */
    { "PyTorch", "^c10::cuda::CUDACachingAllocator::*DeviceCachingAllocator::", NULL, NULL, 1 },
    { "PyTorch", "^c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc$", NULL, NULL, 1 },
    { "PyTorch", "^c10::cuda::CUDACachingAllocator::Native::ExpandableSegment::", NULL, NULL, 1 },
    { "PyTorch", "^c10::cuda::CUDACachingAllocator::THCCachingAllocator::", NULL, NULL, 1 },
    /* TSL's best-fit-with-coalescing allocator (BFCAllocator::Extend grows it;
     * JAX preallocates 75 % through it): TensorFlow's copy, or XLA's */
    { "TensorFlow", "^tensorflow::BFCAllocator::", NULL, NULL, 1 },
    { "TensorFlow", "^tsl::BFCAllocator::", "*tensorflow*", NULL, 1 },
    { "XLA", "^tsl::BFCAllocator::", NULL, NULL, 1 },
    /* PyTorch's pinned host memory cache (CachingHostAllocator), and the
     * cuBLAS workspaces it keeps per handle and stream: under its
     * cudaMallocAsync backend each is an allocation of its own */
    { "PyTorch", "^at::cuda::*CUDACachingHostAllocatorImpl::", NULL, NULL, 1 },
    { "PyTorch", "^at::CachingHostAllocatorImpl::", NULL, NULL, 1 },
    { "PyTorch", "^at::cuda::setWorkspaceForHandle$", NULL, NULL, 1 },
    { "PyTorch", "^at::cuda::getCUDABlasLtWorkspace$", NULL, NULL, 1 },
    /* CuPy's memory pool (Cython: __pyx_..._SingleDeviceMemoryPool_...), and
     * its pinned host memory pool. The wheels are stripped of the pool's
     * names: what is left is cupy.cuda.memory.Memory, through which the pool
     * takes each segment (as cupy.cuda.set_allocator(None) takes each array) */
    { "CuPy", "*_4cupy_4cuda_6memory_22SingleDeviceMemoryPool_*", NULL, NULL, 1 },
    { "CuPy", "*_4cupy_4cuda_13pinned_memory_16PinnedMemoryPool_*", NULL, NULL, 1 },
    { "CuPy", "*_4cupy_4cuda_6memory_6Memory_*", NULL, NULL, 1 },
    /* what a library handle allocates when it is made, kept until the handle
     * is destroyed: frameworks keep theirs for the process's life */
    { "cuBLAS", "^cublasCreate", NULL, NULL, 1 },
    { "cuBLASLt", "^cublasLtCreate$", NULL, NULL, 1 },
    { "cuDNN", "^cudnnCreate$", NULL, NULL, 1 },
    /* RMM's sub-allocating resources: pool_memory_resource<Upstream> (and
     * detail::pool_memory_resource_impl), arena, fixed_size, and the base
     * that pool and fixed_size grow through (detail::stream_ordered_memory_
     * resource<PoolResource, FreeList>: where the header-only code is
     * inlined, its do_allocate may be the frame that is left) */
    { "RMM", "^rmm::*mr::*pool_memory_resource", NULL, NULL, 1 },
    { "RMM", "^rmm::*mr::*stream_ordered_memory_resource::", NULL, NULL, 1 },
    { "RMM", "^rmm::*mr::*arena", NULL, NULL, 1 },
    { "RMM", "^rmm::*mr::*fixed_size_memory_resource", NULL, NULL, 1 },
    /* MXNet's pooled storage: GPUPooledStorageManager,
     * GPUPooledRoundedStorageManager, PooledStorageManager<...> */
    { "MXNet", "^mxnet::storage::*Pooled*StorageManager", NULL, NULL, 1 },

    /* owners, by function name first (a library linked into another keeps
     * its names), then by module, then by Python file */
    { "NCCL", "^nccl", NULL, NULL, 0 },
    { "NCCL", "^pnccl", NULL, NULL, 0 },
    { "cuBLASLt", "^cublasLt", NULL, NULL, 0 },
    { "cuBLAS", "^cublas", NULL, NULL, 0 },
    { "cuDNN", "^cudnn", NULL, NULL, 0 },
    { "PyTorch", "^c10::", NULL, NULL, 0 },
    { "PyTorch", "^at::", NULL, NULL, 0 },
    { "PyTorch", "^torch::", NULL, NULL, 0 },
    { "TensorFlow", "^tensorflow::", NULL, NULL, 0 },
    { "TensorFlow", "^tsl::", "*tensorflow*", NULL, 0 },
    { "XLA", "^xla::", NULL, NULL, 0 },
    { "XLA", "^stream_executor::", NULL, NULL, 0 },
    { "XLA", "^tsl::", NULL, NULL, 0 },
    { "RMM", "^rmm::", NULL, NULL, 0 },
    { "MXNet", "^mxnet::", NULL, NULL, 0 },
    { "NCCL", NULL, "*/libnccl.so*", NULL, 0 },
    { "cuBLASLt", NULL, "*/libcublasLt.so*", NULL, 0 },
    { "cuBLAS", NULL, "*/libcublas.so*", NULL, 0 },
    { "cuDNN", NULL, "*/libcudnn*", NULL, 0 },
    { "cuFFT", NULL, "*/libcufft*", NULL, 0 },
    { "cuSPARSE", NULL, "*/libcusparse*", NULL, 0 },
    { "cuSOLVER", NULL, "*/libcusolver*", NULL, 0 },
    { "cuRAND", NULL, "*/libcurand*", NULL, 0 },
    { "PyTorch", NULL, "*/libc10*", NULL, 0 },
    { "PyTorch", NULL, "*/libtorch*", NULL, 0 },
    { "PyTorch", NULL, "*/torch/*", NULL, 0 },
    { "TensorFlow", NULL, "*tensorflow*", NULL, 0 },
    { "XLA", NULL, "*/jaxlib/*", NULL, 0 },
    { "XLA", NULL, "*xla_extension*", NULL, 0 },
    { "XLA", NULL, "*/jax_plugins/*", NULL, 0 },
    { "CuPy", NULL, "*/cupy/*", NULL, 0 },
    { "CuPy", NULL, "*/cupy_backends/*", NULL, 0 },
    { "RMM", NULL, "*/librmm*", NULL, 0 },
    { "RMM", NULL, "*/rmm/*", NULL, 0 },
    { "MXNet", NULL, "*/libmxnet*", NULL, 0 },
    { "numba", NULL, "*/numba/*", NULL, 0 },
    { "PyTorch", NULL, NULL, "*/torch/*", 0 },
    { "XLA", NULL, NULL, "*/jax/*", 0 },
    { "XLA", NULL, NULL, "*/jaxlib/*", 0 },
    { "TensorFlow", NULL, NULL, "*/tensorflow/*", 0 },
    { "CuPy", NULL, NULL, "*/cupy/*", 0 },
    { "CuPy", NULL, NULL, "*/cupyx/*", 0 },
    { "RMM", NULL, NULL, "*/rmm/*", 0 },
    { "MXNet", NULL, NULL, "*/mxnet/*", 0 },
    { "numba", NULL, NULL, "*/numba/*", 0 },
    { "numba", NULL, NULL, "*/numba_cuda/*", 0 },
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

/* What stands between a library and the driver and names no owner: the
 * driver, the CUDA runtime (shared, or linked in: cudart::, __cudart*,
 * cudaMalloc...), libffi and ctypes, cuda-python's bindings. */
static const char *const glue_modules[] = { "*/libcuda.so*", "*/libcudart.so*", "*/libffi.so*", "*/_ctypes.*",
                                            "*/cuda/bindings/*", "*/cuda/ccuda*", "*/cuda/core/*" };
static const char *const glue_pyfiles[] = { "*/ctypes/*", "*/cuda/bindings/*", "*/cuda/core/*", "*/cuda/cuda.py*" };

static int upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static int glue_function(const char *f)
{
    return strncmp(f, "cudart::", 8) == 0 || strncmp(f, "__cudart", 8) == 0 ||
           (strncmp(f, "cuda", 4) == 0 && upper(f[4])) || (f[0] == 'c' && f[1] == 'u' && upper(f[2])) ||
           strncmp(f, "ffi_", 4) == 0;
}

static int any_match(const char *const *pats, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (gmg_template_match(pats[i], s))
            return 1;
    return 0;
}

#define O_GLUE (-2)     /* frame verdicts: an owner rule, or these */
#define O_NONE (-1)
#define P_NONE (-1)     /* pools: a rule index, or GMG_POOL_LINE + a pool: line */
#define P_LINE 4096

/* A path from its package on when it lies in a Python environment: what
 * follows the last site-packages or dist-packages directory
 * ("/cupy/_core/core.so"), so that a directory above it (a venv under
 * /opt/torch) names no package. Any other path whole. */
static const char *package_path(const char *p)
{
    const char *from = p;
    for (const char *q = p; q && (q = strstr(q, "-packages/")) != NULL; q += 9)
        if (q - p >= 5 && (strncmp(q - 5, "/site", 5) == 0 || strncmp(q - 5, "/dist", 5) == 0))
            from = q + 9; /* the '/' after "site-packages" */
    return from;
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of the operator's symbols at p (after "operator"). */
static size_t operator_len(const char *p)
{
    static const char *const ops[] = { "()", "[]", "->*", "->", "<=>", "<<=", ">>=", "<<", ">>", "<=", ">=", "==",
                                       "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                       "^=", "\"\"" };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strncmp(p, ops[i], strlen(ops[i])) == 0)
            return strlen(ops[i]);
    if (*p == ' ') /* new, delete, a conversion: up to the parameter list */
        return strcspn(p, "(");
    return *p ? 1 : 0;
}

/* A demangled C++ name as the table's function patterns see it: its scope
 * and name alone, without template arguments, parameter list or a function
 * template's return type ("unsigned long app::upload<rmm::mr::x>(rmm::mr::
 * pool_memory_resource<...>&)" is "app::upload"), so that a type a function
 * takes or is instantiated with never makes it that type's code. The
 * entity a local one lies in keeps its name ("f(int)::{lambda()#1}::
 * operator()()" is "f"); "{...}" and "(anonymous namespace)" are copied
 * whole, an operator's symbols are its name (and skipped inside template
 * arguments, where their '<' and '>' count for nothing), a return type that
 * declares a pointer to function ("void (*f())(int)") or is a decltype is
 * left out. A C name is itself. Cut to the buffer. */
static const char *scope_of(const char *fn, char *out, size_t cap)
{
    size_t n = 0, from = 0;
    int angle = 0;
    for (const char *p = fn; *p && n + 1 < cap; p++) {
        size_t whole = 0, gap = 0;
        if (strncmp(p, "(anonymous namespace)", 21) == 0) {
            whole = 21;
        } else if (*p == '{') { /* {lambda(int)#1}, {unnamed type#1} */
            const char *q = strchr(p, '}');
            whole = q ? (size_t)(q - p) + 1 : strlen(p);
        } else if (strncmp(p, "operator", 8) == 0 && !ident_char(p[8]) && (p == fn || !ident_char(p[-1]))) {
            whole = 8 + operator_len(p + 8);
            gap = p[whole] == ' ' && p[whole + 1] == '<'; /* "operator<< <int>": its template arguments follow */
        } else if (!angle && strncmp(p, "decltype", 8) == 0 && !ident_char(p[8])) {
            const char *q = p + 8; /* a return type: left out, parentheses and all */
            q += *q == ' ';
            for (int depth = 0; *q; q++)
                if (*q == '(')
                    depth++;
                else if (*q == ')' && --depth <= 0)
                    break;
            p = *q ? q : q - 1;
            from = n;
            continue;
        }
        if (whole) {
            for (size_t k = 0; k < whole && n + 1 < cap; k++)
                if (!angle)
                    out[n++] = p[k];
            p += whole - 1 + gap;
            continue;
        }
        if (*p == '<') {
            angle++;
        } else if (*p == '>' && angle) {
            angle--;
        } else if (!angle && *p == '(' && n == from && (p[1] == '*' || p[1] == '&')) {
            p++; /* "void (*name(...))(int)": the declarator's name follows */
        } else if (!angle && *p == '(') {
            break; /* the parameter list */
        } else if (!angle && *p == ' ') {
            from = n + 1; /* what came before was a return type */
            out[n++] = ' ';
        } else if (!angle) {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return out + (from <= n ? from : n);
}

static int rule_match(const struct rule *u, const struct gmg_frame_info *fi, const char *scope)
{
    if (fi->python)
        return u->pyfile && fi->file && gmg_template_match(u->pyfile, package_path(fi->file));
    if (u->pyfile || (!u->function && !u->module))
        return 0;
    if (u->function && !gmg_template_match(u->function, scope))
        return 0;
    return !u->module || (fi->module_path && gmg_template_match(u->module, package_path(fi->module_path)));
}

static void verdict(const struct gmg_frame_info *fi, int16_t *owner, int16_t *pool)
{
    *owner = O_NONE;
    *pool = P_NONE;
    char buf[1024];
    const char *scope = fi->function && !fi->python ? scope_of(fi->function, buf, sizeof buf) : NULL;
    if (fi->python ? any_match(glue_pyfiles, sizeof glue_pyfiles / sizeof *glue_pyfiles, fi->file)
                   : (!fi->function && !fi->module_path) || (fi->function && glue_function(fi->function)) ||
                         any_match(glue_modules, sizeof glue_modules / sizeof *glue_modules, fi->module_path))
        *owner = O_GLUE;
    for (int k = 0; *owner == O_NONE && k < NRULES; k++)
        if (rule_match(&rules[k], fi, scope))
            *owner = (int16_t)k;
    if (!gmg_cfg.pools)
        return;
    const struct gmg_suppressions *sp = &gmg_cfg.suppressions;
    for (size_t k = 0; k < sp->npools && k < 20000; k++) /* the user's lines first: they name their own pools */
        if (gmg_template_match(sp->pools[k], fi->function) || gmg_template_match(sp->pools[k], fi->file) ||
            gmg_template_match(sp->pools[k], fi->module_path)) {
            *pool = (int16_t)(P_LINE + k);
            return;
        }
    if (*owner >= 0 && rules[*owner].pool)
        *pool = *owner;
    for (int k = 0; *pool == P_NONE && k < NRULES && rules[k].pool; k++) /* a pool row behind an earlier owner row */
        if (rule_match(&rules[k], fi, scope))
            *pool = (int16_t)k;
}

/* Each frame's verdict, by address, for one report (report/pcmap.h: a
 * frame is looked up once however many stacks share it): the owner rule in
 * the low 16 bits, the pool in the next 16. */
static void frame_verdict(struct gmg_pcmap *c, struct gmg_symbolizer *sym, const struct gmg_stack *s, uint32_t i,
                          int16_t *owner, int16_t *pool)
{
    uintptr_t pc = s->frames[i];
    const struct gmg_module *mod = gmg_stack_module(s, i);
    uint64_t v;
    if (c && gmg_pcmap_get(c, pc, mod, &v)) {
        *owner = (int16_t)(uint16_t)v;
        *pool = (int16_t)(uint16_t)(v >> 16);
        return;
    }
    struct gmg_frame_info fi;
    gmg_symbolize(sym, pc, mod, &fi);
    verdict(&fi, owner, pool);
    if (c)
        gmg_pcmap_put(c, pc, mod, (uint64_t)(uint16_t)*owner | (uint64_t)(uint16_t)*pool << 16);
}

static const char *pool_name(int16_t p)
{
    if (p == P_NONE)
        return NULL;
    if (p >= P_LINE)
        return gmg_cfg.suppressions.pools[p - P_LINE];
    return rules[p].owner;
}

/* A stack's owner (first deciding frame: native ones innermost first, then
 * Python ones innermost first) and pool (the innermost frame that is one). */
static const char *stack_owner(struct gmg_pcmap *c, struct gmg_symbolizer *sym, uint32_t stack, const char **pool)
{
    *pool = NULL;
    const struct gmg_stack *s = gmg_stack_get(stack);
    if (!s)
        return "unknown";
    uint32_t np = 0;
    while (np < s->depth && gmg_is_pyframe(s->frames[np]))
        np++;
    const char *owner = NULL;
    int16_t p = P_NONE;
    for (uint32_t pass = 0; pass < 2 && !(owner && (p != P_NONE || !gmg_cfg.pools)); pass++) {
        uint32_t from = pass ? 0 : np, to = pass ? np : s->depth;
        for (uint32_t i = from; i < to; i++) {
            if (gmg_stack_is_internal(s->frames[i]))
                continue;
            int16_t o, fp;
            frame_verdict(c, sym, s, i, &o, &fp);
            if (p == P_NONE)
                p = fp;
            if (!owner && o != O_GLUE)
                owner = o >= 0 ? rules[o].owner : "program";
            if (owner && (p != P_NONE || !gmg_cfg.pools))
                break;
        }
    }
    *pool = pool_name(p);
    return owner ? owner : "program";
}

const char *gmg_report_stack_owner(struct gmg_symbolizer *sym, uint32_t stack, const char **pool)
{
    return stack_owner(NULL, sym, stack, pool);
}

static void sum_add(struct gmg_report *r, size_t cap, const struct gmg_group *g)
{
    size_t i = 0;
    while (i < r->nowners && r->owners[i].owner != g->owner && strcmp(r->owners[i].owner, g->owner) != 0)
        i++;
    if (i == r->nowners) {
        if (i == cap)
            return;
        r->owners[r->nowners++].owner = g->owner;
    }
    r->owners[i].bytes += g->bytes;
    r->owners[i].count += g->count;
    if (g->pool) {
        r->owners[i].retained_bytes += g->bytes;
        r->owners[i].retained_count += g->count;
    }
}

static int by_owner_bytes(const void *a, const void *b)
{
    const struct gmg_owner_sum *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->owner, y->owner);
}

/* NVTX heaps: a copy of those live now, in the order they were registered.
 * A group holding a heap's segment (its site, family and device) is that
 * heap's pool's: named by the heap's NVTX message, or "NVTX heap".
 * (Allocations made at the very call site of a heap's segment are taken for
 * segments of that pool too: groups are by site.) */
struct heap_copy { struct gmg_report *r; size_t cap; };

static void heap_copy(const struct gmg_heap_info *h, void *arg)
{
    struct heap_copy *c = arg;
    if (c->r->nheaps < c->cap) /* heaps registered since the count: left out */
        c->r->heaps[c->r->nheaps++] = *h;
}

static int by_serial(const void *x, const void *y)
{
    const struct gmg_heap_info *a = x, *b = y;
    return a->serial < b->serial ? -1 : a->serial > b->serial;
}

static void heaps_take(struct gmg_report *r)
{
    if (!gmg_cfg.pools || !gmg_heaps_live())
        return;
    struct heap_copy c = { r, gmg_heaps_live() + 16 };
    r->heaps = calloc(c.cap, sizeof *r->heaps);
    r->heapv = calloc(c.cap, sizeof *r->heapv);
    if (!r->heaps || !r->heapv) {
        free(r->heaps);
        free(r->heapv);
        r->heaps = NULL;
        r->heapv = NULL;
        return;
    }
    gmg_heaps_each(heap_copy, &c);
    qsort(r->heaps, r->nheaps, sizeof *r->heaps, by_serial);
}

/* A heap's segment's stack as the report's groups have it: the groups are
 * merged by call site (sites.h), each keeping one of its stacks, so the
 * segment's own stack id may be another of its site's. One stack per site
 * across every list, the heaps' segments' included. */
static void heaps_unify_sites(struct gmg_report *r)
{
    size_t ns = 0, nl = 0;
    uint32_t *stacks = malloc((r->nheaps ? r->nheaps : 1) * sizeof *stacks);
    struct gmg_group **lists = malloc((3 + r->nat_peak + r->nsince_peak) * sizeof *lists);
    size_t *counts = malloc((3 + r->nat_peak + r->nsince_peak) * sizeof *counts);
    for (size_t k = 0; stacks && k < r->nheaps; k++)
        if (gmg_heap_tracked(&r->heaps[k]) && r->heaps[k].seg_stack)
            stacks[ns++] = r->heaps[k].seg_stack;
    if (stacks && lists && counts && ns) {
        lists[nl] = r->groups, counts[nl++] = r->ngroups;
        lists[nl] = r->reclaimed, counts[nl++] = r->nreclaimed;
        lists[nl] = r->growth, counts[nl++] = r->ngrowth;
        for (size_t i = 0; i < r->nat_peak; i++)
            lists[nl] = r->at_peak[i].groups, counts[nl++] = r->at_peak[i].ngroups;
        for (size_t i = 0; i < r->nsince_peak; i++)
            lists[nl] = r->since_peak[i].groups, counts[nl++] = r->since_peak[i].ngroups;
        if (gmg_sites_unify(r->sym, lists, counts, nl, stacks, ns) == 0)
            for (size_t k = 0, j = 0; k < r->nheaps; k++)
                if (gmg_heap_tracked(&r->heaps[k]) && r->heaps[k].seg_stack)
                    r->heaps[k].seg_stack = stacks[j++];
    }
    free(stacks);
    free(lists);
    free(counts);
}

/* The tracked heaps' keys (heaps_name): sorted by segment, or by the group
 * a segment falls in (its stack, family and device); by registration
 * (index) within either. */
struct heap_key {
    uint64_t value;
    uint32_t seq, stack;
    int device, family;
    size_t k;
};

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }
static int cmp_int(int a, int b) { return a < b ? -1 : a > b; }

static int by_segment(const void *x, const void *y)
{
    const struct heap_key *a = x, *b = y;
    int c = cmp_int(a->device, b->device);
    if (!c)
        c = cmp_u64(a->value, b->value);
    if (!c)
        c = cmp_u64(a->seq, b->seq);
    return c ? c : cmp_u64(a->k, b->k);
}

static int by_site(const void *x, const void *y)
{
    const struct heap_key *a = x, *b = y;
    int c = cmp_u64(a->stack, b->stack);
    if (!c)
        c = cmp_int(a->family, b->family);
    if (!c)
        c = cmp_int(a->device, b->device);
    return c ? c : cmp_u64(a->k, b->k);
}

static int same_segment(const struct heap_key *a, const struct heap_key *b)
{
    return a->device == b->device && a->value == b->value && a->seq == b->seq;
}

/* Each heap's pool and share of its segment (r->heapv). Several heaps may
 * lie over one segment (one inside another, or two at one address): the
 * first registered is the segment's, and holds what the regions of all of
 * them hold (at most the segment); the others count nothing again. A
 * segment's pool is its stack's pool pattern, or else the name of the
 * first heap over any segment of its group (a report groups by site, and
 * every segment of a group is one pool's); a segment without a stack is a
 * group of its own (split_unstacked), named by its first heap. Runs in
 * O(n log n) of the heaps; out of memory, every heap keeps its own name
 * and counts as first (the report may then count a byte twice). */
static void heaps_name(struct gmg_report *r, struct gmg_pcmap *c)
{
    heaps_unify_sites(r);
    size_t n = 0, *first_of = malloc((r->nheaps ? r->nheaps : 1) * sizeof *first_of);
    struct heap_key *ix = malloc((r->nheaps ? r->nheaps : 1) * sizeof *ix);
    for (size_t k = 0; k < r->nheaps; k++) {
        const struct gmg_heap_info *h = &r->heaps[k];
        r->heapv[k] = (struct gmg_heap_view){ .pool = h->name ? h->name : "NVTX heap", .first = gmg_heap_tracked(h),
                                              .held = h->region_bytes };
        if (gmg_heap_tracked(h) && ix)
            ix[n++] = (struct heap_key){ h->seg_value, h->seg_seq, h->seg_stack, h->device, h->seg_family, k };
    }
    if (!ix || !first_of)
        goto settle;
    qsort(ix, n, sizeof *ix, by_segment);
    for (size_t i = 0; i < n;) { /* each segment: its first heap holds what all of its heaps' regions hold */
        size_t e = i;
        for (; e < n && same_segment(&ix[e], &ix[i]); e++) {
            first_of[ix[e].k] = ix[i].k;
            if (e > i) {
                r->heapv[ix[e].k].first = 0;
                r->heapv[ix[i].k].held += r->heaps[ix[e].k].region_bytes;
            }
        }
        i = e;
    }
    size_t m = 0; /* the first heaps with a stack, by group: one pool each */
    for (size_t i = 0; i < n; i++)
        if (r->heapv[ix[i].k].first && ix[i].stack)
            ix[m++] = ix[i];
    qsort(ix, m, sizeof *ix, by_site);
    for (size_t i = 0; i < m;) {
        const char *pool = NULL;
        stack_owner(c, r->sym, ix[i].stack, &pool);
        if (!pool)
            pool = r->heapv[ix[i].k].pool;
        size_t e = i;
        for (; e < m && ix[e].stack == ix[i].stack && ix[e].family == ix[i].family && ix[e].device == ix[i].device;
             e++)
            r->heapv[ix[e].k].pool = pool;
        i = e;
    }
    for (size_t k = 0; k < r->nheaps; k++) /* a later heap over a segment: the segment's pool */
        if (gmg_heap_tracked(&r->heaps[k]) && !r->heapv[k].first)
            r->heapv[k].pool = r->heapv[first_of[k]].pool;
settle:
    free(ix);
    free(first_of);
    for (size_t k = 0; k < r->nheaps; k++) {
        struct gmg_heap_view *v = &r->heapv[k];
        uint64_t seg = r->heaps[k].seg_size;
        v->held = v->first ? (v->held < seg ? v->held : seg) : 0;
        v->retained = v->first ? seg - v->held : 0;
    }
}

int gmg_report_heap_group(const struct gmg_report *r, size_t k, const struct gmg_group *g)
{
    const struct gmg_heap_info *h = &r->heaps[k];
    return r->heapv[k].first && g->pool == r->heapv[k].pool && g->stack == h->seg_stack &&
           g->family == h->seg_family && g->device == h->device;
}

uint64_t gmg_report_group_regions(const struct gmg_report *r, const struct gmg_group *g)
{
    uint64_t held = 0;
    for (size_t k = 0; g->pool && k < r->nheaps; k++)
        if (gmg_report_heap_group(r, k, g))
            held += r->heapv[k].held;
    return held < g->bytes ? held : g->bytes;
}

static const char *heap_pool(const struct gmg_report *r, const struct gmg_group *g)
{
    for (size_t i = 0; i < r->nheaps; i++) {
        const struct gmg_heap_info *h = &r->heaps[i];
        if (r->heapv[i].first && h->seg_stack && h->seg_stack == g->stack && h->seg_family == g->family &&
            h->device == g->device)
            return r->heapv[i].pool;
    }
    return NULL;
}

/* A heap's segment without a stack (GPUMEM_STACK_DEPTH=0, or a stack that
 * could not be taken) is in the group of stack 0 with every other
 * allocation of its family and device, so the group cannot be its pool's
 * whole: the segment's own bytes leave it for a group of their own, the
 * pool's (one per pool name), and the rest stays what it was. A list
 * without the segment (freed, or reclaimed: then in the other list) keeps
 * its group. Returns 0, or -1 when out of memory (nothing is split). */
static int split_unstacked(struct gmg_report *r, struct gmg_group **list, size_t *n)
{
    size_t extra = 0;
    for (size_t k = 0; k < r->nheaps; k++)
        extra += r->heapv[k].first && !r->heaps[k].seg_stack;
    if (!extra)
        return 0;
    struct gmg_group *v = realloc(*list, (*n + extra) * sizeof *v);
    if (!v)
        return -1;
    *list = v;
    size_t m = *n;
    for (size_t k = 0; k < r->nheaps; k++) {
        const struct gmg_heap_info *h = &r->heaps[k];
        if (!r->heapv[k].first || h->seg_stack) /* a segment once, however many heaps lie over it */
            continue;
        struct gmg_group *base = NULL, *own = NULL;
        for (size_t i = 0; i < m; i++) {
            if (v[i].stack || v[i].family != h->seg_family || v[i].device != h->device)
                continue;
            if (!v[i].pool)
                base = &v[i];
            else if (v[i].pool == r->heapv[k].pool)
                own = &v[i];
        }
        if (!base || base->bytes < h->seg_size || !base->count)
            continue;
        if (!own) {
            own = &v[m++];
            *own = (struct gmg_group){ .stack = 0, .family = h->seg_family, .device = h->device,
                                       .pool = r->heapv[k].pool };
        }
        base->bytes -= h->seg_size;
        base->count--;
        own->bytes += h->seg_size;
        own->count++;
    }
    size_t k = 0; /* a group all of whose allocations were segments is gone */
    for (size_t i = 0; i < m; i++)
        if (v[i].count)
            v[k++] = v[i];
    if (k > 1)
        qsort(v, k, sizeof *v, gmg_group_by_bytes);
    *n = k;
    return 0;
}

/* Memory the driver handed out: an allocation's family, not an NVTX region
 * (what a pool handed out of its segment, which holds its bytes). */
static int driver_memory(int family)
{
    return gmg_group_is_allocation(family) && family != GMG_FAM_NVTX_REGION;
}

/* Mark a list's groups; pools' segments leave the list's totals. */
static void mark(struct gmg_report *r, struct gmg_pcmap *c, struct gmg_group *g, size_t n, uint64_t *bytes,
                 uint64_t *allocs)
{
    for (size_t i = 0; i < n; i++) {
        const char *pool;
        g[i].owner = stack_owner(c, r->sym, g[i].stack, &pool);
        /* a region a pool registered is what its pool handed out: never a
         * pool's; a group split_unstacked made is its heap's pool's already */
        if (!g[i].pool && driver_memory(g[i].family))
            g[i].pool = pool ? pool : heap_pool(r, &g[i]);
        if (!g[i].pool || !bytes)
            continue;
        *bytes -= g[i].bytes < *bytes ? g[i].bytes : *bytes;
        *allocs -= g[i].count < *allocs ? g[i].count : *allocs;
        r->retained_bytes += g[i].bytes;
        r->retained_allocs += g[i].count;
    }
}

void gmg_report_owners(struct gmg_report *r)
{
    struct gmg_pcmap c = { 0 };
    heaps_take(r);
    heaps_name(r, &c);
    if (gmg_report_dev.mempools && (r->mempools = calloc(GMG_MEMPOOLS_MAX, sizeof *r->mempools)))
        r->nmempools = gmg_report_dev.mempools(r->mempools, GMG_MEMPOOLS_MAX);
    if (split_unstacked(r, &r->groups, &r->ngroups) == 0)
        split_unstacked(r, &r->reclaimed, &r->nreclaimed);
    mark(r, &c, r->groups, r->ngroups, &r->live_bytes, &r->live_allocs);
    mark(r, &c, r->reclaimed, r->nreclaimed, &r->reclaimed_bytes, &r->reclaimed_allocs);
    mark(r, &c, r->growth, r->ngrowth, NULL, NULL);
    for (size_t i = 0; i < r->nat_peak; i++) /* groups as in the live list: their owner, and pool if a pool's */
        mark(r, &c, r->at_peak[i].groups, r->at_peak[i].ngroups, NULL, NULL);
    for (size_t i = 0; i < r->nsince_peak; i++)
        mark(r, &c, r->since_peak[i].groups, r->since_peak[i].ngroups, NULL, NULL);
    gmg_pcmap_free(&c);
    /* the summary: each owner once (a few dozen at most) */
    size_t cap = (size_t)NRULES + gmg_cfg.suppressions.npools + 2;
    if ((r->owners = calloc(cap, sizeof *r->owners))) {
        /* an NVTX region lies in its heap's segment, which is counted: the
         * summary is memory the process holds, each byte once */
        for (size_t i = 0; i < r->ngroups; i++)
            if (driver_memory(r->groups[i].family))
                sum_add(r, cap, &r->groups[i]);
        for (size_t i = 0; i < r->nreclaimed; i++)
            if (r->reclaimed[i].family != GMG_FAM_NVTX_REGION)
                sum_add(r, cap, &r->reclaimed[i]);
    }
    /* what regions hold of a segment is leaks or in use, not what its pool
     * retains: out of the retained totals and its owner's */
    for (size_t k = 0; k < r->nheaps; k++)
        for (size_t i = 0; r->heapv[k].first && i < r->ngroups + r->nreclaimed; i++) {
            const struct gmg_group *g = i < r->ngroups ? &r->groups[i] : &r->reclaimed[i - r->ngroups];
            if (!gmg_report_heap_group(r, k, g))
                continue;
            uint64_t held = r->heapv[k].held;
            r->retained_bytes -= held < r->retained_bytes ? held : r->retained_bytes;
            for (size_t o = 0; r->owners && o < r->nowners; o++)
                if (r->owners[o].owner == g->owner) {
                    uint64_t *rb = &r->owners[o].retained_bytes;
                    *rb -= held < *rb ? held : *rb;
                }
            break;
        }
    if (r->owners && r->nowners > 1)
        qsort(r->owners, r->nowners, sizeof *r->owners, by_owner_bytes);
}
