/*
 * grouptest.c - GPUMEM_GROUP against the simulated driver, one
 * mode per case; tests/group.sh runs several of these at once as the
 * members of a group and checks what they print.
 *
 *   grouptest hammer FILE NPROC ITERS   4 threads alloc/free near the group's limit, after a
 *                                       barrier of NPROC processes; FILE (shared, made by the
 *                                       script) sums the live bytes of every process at every
 *                                       instant and keeps the most it ever was
 *   grouptest maxlive FILE              print that most
 *   grouptest hold BYTES                allocate BYTES, print "held", wait to be killed
 *   grouptest spike BYTES               allocate BYTES and free them (the group's peak, and
 *                                       this member stays), print "freed", wait to be killed
 *   grouptest take BYTES MS             allocate BYTES, trying again until MS milliseconds
 *                                       passed; print "took after N ms" or "refused"
 *   grouptest member HOLD TRIG TAKE MS  hold HOLD bytes, print "joined"; when file TRIG exists,
 *                                       take TAKE bytes as `take` does (a member that was
 *                                       there when another died)
 *   grouptest watch HOLD TRIG FREE MS   hold HOLD bytes, print "joined"; when TRIG exists, ask
 *                                       cuMemGetInfo until it says FREE bytes free (no
 *                                       allocation of its own on the way): "free after N ms"
 *   grouptest info                      print cuMemGetInfo and cuDeviceTotalMem
 *   grouptest leak BYTES                print cuMemGetInfo, allocate BYTES, exit without freeing
 *   grouptest peek NAME                 read /dev/shm/NAME from outside (no guard needed):
 *                                       device 0's used (the sum of the slots), peak, budget, live members
 *   grouptest size                      the segment's size in bytes
 *   grouptest spikefork BYTES           allocate BYTES and free them (the group's peak), fork at
 *                                       once: the child holds 1 MiB and exits (its report
 *                                       written), printing "child pid PID"
 *   grouptest forkjoin BYTES            allocate, fork: the child allocates BYTES too and
 *                                       exits; both print cuMemGetInfo
 *   grouptest execinfo BYTES            allocate BYTES, then exec itself as `info`
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "cluster/group_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

static CUcontext ctx;

static void setup(void) { ctx = tl_setup(0); }

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------- hammer */

struct shared { uint64_t live, max, ready, refusals; };
static struct shared *sh;

static struct shared *map_shared(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0 || ftruncate(fd, sizeof(struct shared)) != 0) {
        perror(path);
        exit(1);
    }
    void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    close(fd);
    return p;
}

struct worker { unsigned seed; int iters; uint64_t refusals; };

static void *work(void *arg)
{
    struct worker *w = arg;
    CHECK(cuCtxSetCurrent(ctx));
    enum { SLOTS = 16 };
    CUdeviceptr p[SLOTS] = { 0 };
    size_t sz[SLOTS] = { 0 };
    for (int i = 0; i < w->iters; i++) {
        int k = rand_r(&w->seed) % SLOTS;
        if (p[k]) {
            /* out of the sum before the driver frees it */
            __atomic_fetch_sub(&sh->live, sz[k], __ATOMIC_SEQ_CST);
            CHECK(rand_r(&w->seed) % 2 ? cuMemFree_v2(p[k]) : cuMemFreeAsync(p[k], NULL));
            p[k] = 0;
            continue;
        }
        size_t n = 65536 + (size_t)(rand_r(&w->seed) % 65536);
        CUresult r = rand_r(&w->seed) % 2 ? cuMemAlloc_v2(&p[k], n) : cuMemAllocAsync(&p[k], n, NULL);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            w->refusals++;
            p[k] = 0;
            continue;
        }
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "alloc failed %d\n", (int)r);
            exit(1);
        }
        /* into the sum once the driver granted it */
        sz[k] = n;
        uint64_t now = __atomic_add_fetch(&sh->live, n, __ATOMIC_SEQ_CST);
        uint64_t m = __atomic_load_n(&sh->max, __ATOMIC_RELAXED);
        while (now > m && !__atomic_compare_exchange_n(&sh->max, &m, now, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            ;
    }
    for (int k = 0; k < SLOTS; k++)
        if (p[k]) {
            __atomic_fetch_sub(&sh->live, sz[k], __ATOMIC_SEQ_CST);
            CHECK(cuMemFree_v2(p[k]));
        }
    return NULL;
}

static void hammer(const char *file, int nproc, int iters)
{
    sh = map_shared(file);
    /* every process in before any starts, so that they overlap */
    __atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
    long long until = now_ms() + 20000;
    while (__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) < (uint64_t)nproc && now_ms() < until)
        sleep_ms(1);
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){ .seed = (unsigned)getpid() * 7919u + (unsigned)i, .iters = iters };
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    uint64_t refusals = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        refusals += w[i].refusals;
    }
    __atomic_add_fetch(&sh->refusals, refusals, __ATOMIC_SEQ_CST);
    printf("refusals %llu\n", (unsigned long long)refusals);
}

/* ----------------------------------------------------------- one member */

static int take(size_t bytes, int ms)
{
    CUdeviceptr p;
    long long t0 = now_ms();
    for (;;) {
        CUresult r = cuMemAlloc_v2(&p, bytes);
        if (r == CUDA_SUCCESS) {
            printf("took after %lld ms\n", now_ms() - t0);
            return 0;
        }
        if (r != CUDA_ERROR_OUT_OF_MEMORY || now_ms() - t0 > ms) {
            printf("refused (%d) after %lld ms\n", (int)r, now_ms() - t0);
            return 1;
        }
        sleep_ms(5);
    }
}

static void hold(size_t bytes)
{
    CUdeviceptr p;
    if (bytes)
        CHECK(cuMemAlloc_v2(&p, bytes));
}

static void wait_file(const char *f)
{
    while (access(f, F_OK) != 0)
        sleep_ms(2);
}

static void info(void)
{
    size_t f = 0, t = 0, dt = 0;
    CHECK(cuMemGetInfo_v2(&f, &t));
    CHECK(cuDeviceTotalMem_v2(&dt, 0));
    printf("free %zu total %zu devtotal %zu\n", f, t, dt);
}

static int watch(const char *trig, size_t want, int ms)
{
    wait_file(trig);
    long long t0 = now_ms();
    size_t f = 0, t = 0;
    for (;;) {
        CHECK(cuMemGetInfo_v2(&f, &t));
        if (f == want) {
            printf("free after %lld ms\n", now_ms() - t0);
            return 0;
        }
        if (now_ms() - t0 > ms) {
            printf("free still %zu after %lld ms\n", f, now_ms() - t0);
            return 1;
        }
        sleep_ms(10);
    }
}

/* --------------------------------------------------------------- outside */

static int peek(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    int fd = open(path, O_RDWR | O_NOFOLLOW);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    struct gmg_group_seg *s = mmap(NULL, sizeof *s, PROT_READ, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    int live = 0, slots = 0;
    uint64_t used = 0; /* the group's bytes: the sum of its slots */
    for (int i = 0; i < GMG_GROUP_SLOTS; i++)
        used += __atomic_load_n(&s->slot[i].bytes[0], __ATOMIC_ACQUIRE);
    for (int i = 0; i < GMG_GROUP_SLOTS; i++) {
        if (__atomic_load_n(&s->slot[i].state, __ATOMIC_ACQUIRE) != 1)
            continue;
        slots++;
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = GMG_GROUP_LOCK_SLOT(i), .l_len = 1 };
        if (fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
            live++;
    }
    uint64_t budget = s->dev[0].budget;
    printf("used %llu peak %llu budget %lld members %d slots %d starts %u\n",
           (unsigned long long)used,
           (unsigned long long)s->dev[0].peak, budget == GMG_GROUP_NOLIMIT ? -1 : (long long)budget, live, slots,
           s->starts);
    return 0;
}

/* ------------------------------------------------------------------ fork */

static void spikefork(size_t bytes)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, bytes));
    CHECK(cuMemFree_v2(p));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        CHECK(cuCtxSetCurrent(ctx));
        hold(1u << 20);
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child pid %d\n", (int)pid);
}

static void forkjoin(size_t bytes)
{
    hold(bytes);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* a child of a CUDA process uses no context of its parent's; the
         * simulated driver lets it allocate, and the guard counts it as a
         * new member of the group */
        CHECK(cuCtxSetCurrent(ctx));
        hold(bytes);
        info();
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    info();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: grouptest MODE ARGS...\n");
        return 2;
    }
    const char *m = argv[1];
    if (!strcmp(m, "peek") && argc > 2)
        return peek(argv[2]);
    if (!strcmp(m, "size")) {
        printf("%zu\n", sizeof(struct gmg_group_seg));
        return 0;
    }
    if (!strcmp(m, "maxlive") && argc > 2) {
        sh = map_shared(argv[2]);
        printf("max %llu live %llu ready %llu refusals %llu\n", (unsigned long long)sh->max,
               (unsigned long long)sh->live, (unsigned long long)sh->ready, (unsigned long long)sh->refusals);
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    setup();
    int rc = 0;
    if (!strcmp(m, "hammer") && argc > 4) {
        hammer(argv[2], atoi(argv[3]), atoi(argv[4]));
    } else if (!strcmp(m, "hold") && argc > 2) {
        hold(strtoull(argv[2], NULL, 0));
        printf("held\n");
        for (;;)
            pause();
    } else if (!strcmp(m, "spike") && argc > 2) {
        CUdeviceptr p;
        CHECK(cuMemAlloc_v2(&p, strtoull(argv[2], NULL, 0)));
        CHECK(cuMemFree_v2(p));
        printf("freed\n");
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(m, "take") && argc > 3) {
        rc = take(strtoull(argv[2], NULL, 0), atoi(argv[3]));
    } else if (!strcmp(m, "member") && argc > 5) {
        hold(strtoull(argv[2], NULL, 0));
        printf("joined\n");
        wait_file(argv[3]);
        rc = take(strtoull(argv[4], NULL, 0), atoi(argv[5]));
    } else if (!strcmp(m, "watch") && argc > 5) {
        hold(strtoull(argv[2], NULL, 0));
        printf("joined\n");
        rc = watch(argv[3], strtoull(argv[4], NULL, 0), atoi(argv[5]));
    } else if (!strcmp(m, "info")) {
        info();
    } else if (!strcmp(m, "leak") && argc > 2) {
        info();
        hold(strtoull(argv[2], NULL, 0));
    } else if (!strcmp(m, "execinfo") && argc > 2) {
        hold(strtoull(argv[2], NULL, 0));
        fflush(stdout);
        execl("/proc/self/exe", "grouptest", "info", (char *)NULL);
        perror("exec");
        rc = 1;
    } else if (!strcmp(m, "spikefork") && argc > 2) {
        spikefork(strtoull(argv[2], NULL, 0));
    } else if (!strcmp(m, "forkjoin") && argc > 2) {
        forkjoin(strtoull(argv[2], NULL, 0));
    } else {
        fprintf(stderr, "grouptest: bad mode or arguments\n");
        return 2;
    }
    fflush(stdout);
    return rc;
}
