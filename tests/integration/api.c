/* api.c - see api.h. */
#define _GNU_SOURCE
#include "api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct api A;

void api_load(const char *route)
{
    void *h = NULL;
    PFN_cuGetProcAddress_v12000 gpa2 = NULL;
    PFN_cuGetProcAddress_v11030 gpa = NULL;
    cuuint64_t flags = 0;
    int direct = strcmp(route, "direct") == 0;
    int deflt = strcmp(route, "default") == 0;
    int via_dlsym = strcmp(route, "dlopen") == 0;

    if (!direct && !deflt) {
        h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
            exit(1);
        }
    }
    if (strcmp(route, "gpa") == 0) {
        gpa = (PFN_cuGetProcAddress_v11030)dlsym(h, "cuGetProcAddress");
    } else if (strncmp(route, "gpa2", 4) == 0) {
        gpa2 = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
        if (strcmp(route, "gpa2_ptsz") == 0)
            flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    } else if (strcmp(route, "gpa_self") == 0) {
        PFN_cuGetProcAddress_v12000 first = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
        void *p = NULL;
        CUdriverProcAddressQueryResult st;
        if (!first || first("cuGetProcAddress", &p, 12000, 0, &st) != CUDA_SUCCESS) {
            fprintf(stderr, "cuGetProcAddress through itself failed\n");
            exit(1);
        }
        gpa2 = (PFN_cuGetProcAddress_v12000)p;
    } else if (!direct && !deflt && !via_dlsym) {
        fprintf(stderr, "unknown route %s\n", route);
        exit(2);
    }

#define LOAD(sym, name, ver, sfx) do { \
        void *p_ = NULL; \
        cuuint64_t fl_ = (sizeof(#sfx) > 1) ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : flags; \
        if (direct) p_ = (void *)&sym; \
        else if (deflt) p_ = dlsym(RTLD_DEFAULT, #sym); \
        else if (via_dlsym) p_ = dlsym(h, #sym); \
        else if (gpa) { if (gpa(#name, &p_, ver, fl_) != CUDA_SUCCESS) p_ = NULL; } \
        else { CUdriverProcAddressQueryResult st_; \
               if (gpa2(#name, &p_, ver, fl_, &st_) != CUDA_SUCCESS) p_ = NULL; } \
        if (!p_) { fprintf(stderr, "route %s: no %s\n", route, #sym); exit(1); } \
        memcpy(&A.sym, &p_, sizeof p_); \
    } while (0);
#define LOADF(sym, name, ver, sfx) LOAD(sym, name, ver, sfx)
    API_LIST(LOADF)
    API_PTSZ_LIST(LOADF)
#undef LOAD
#undef LOADF
}
