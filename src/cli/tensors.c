/* tensors.c - see tensors.h. */
#define _GNU_SOURCE
#include "cli/tensors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PyTorch reads PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF as "key:value" entries separated by
 * commas (c10/cuda/CUDAAllocatorConfig.cpp); backend is one of them. */
int gmg_tensors_torch_conf(const char *user, char *out, size_t outlen)
{
    size_t n = 0;
    int w = snprintf(out, outlen, "backend:cudaMallocAsync");
    if (w < 0 || (size_t)w >= outlen)
        return -1;
    n = (size_t)w;
    for (const char *p = user ? user : ""; *p;) {
        size_t len = strcspn(p, ",");
        const char *e = p;
        size_t el = len;
        while (el && (*e == ' ' || *e == '\t')) { /* PyTorch skips blanks around keys too */
            e++;
            el--;
        }
        int backend = el >= 7 && strncmp(e, "backend", 7) == 0 && strspn(e + 7, " \t") + 7 < el &&
                      e[7 + strspn(e + 7, " \t")] == ':';
        if (el && !backend) {
            w = snprintf(out + n, outlen - n, ",%.*s", (int)el, e);
            if (w < 0 || (size_t)w >= outlen - n)
                return -1;
            n += (size_t)w;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* name's value merged, set again; a name unset is left so unless `always` */
static int torch_merge(const char *name, int always)
{
    char conf[8192];
    const char *user = getenv(name);
    if (!user && !always)
        return 0;
    if (gmg_tensors_torch_conf(user, conf, sizeof conf) < 0) {
        errno = E2BIG;
        return -1;
    }
    return setenv(name, conf, 1);
}

int gmg_tensors_setenv(void)
{
    /* PyTorch 2.9 and later read PYTORCH_ALLOC_CONF first, and
     * PYTORCH_CUDA_ALLOC_CONF only without it; earlier ones only the latter */
    if (torch_merge("PYTORCH_ALLOC_CONF", 0) != 0 || torch_merge("PYTORCH_CUDA_ALLOC_CONF", 1) != 0 ||
        setenv("TF_GPU_ALLOCATOR", "cuda_malloc_async", 1) != 0 ||
        setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "platform", 1) != 0)
        return -1;
    return 0;
}
