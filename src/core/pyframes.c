/*
 * pyframes.c - see pyframes.h. Facts behind the layouts and checks:
 * shared/python-frames.md (measured on CPython 3.10-3.13).
 *
 * The walk, per frame of the calling thread (which cannot run Python while
 * it is inside the driver call, so its chain stands still):
 *   tstate = PyGILState_GetThisThreadState()   (a thread-local read)
 *   frame  = tstate's current _PyInterpreterFrame, then frame->previous
 *            (3.10: tstate->frame, a PyFrameObject, then f_back; trusted
 *            only while its type is &PyFrame_Type)
 *   code   = frame->f_code (f_executable), trusted only if its type is
 *            &PyCode_Type; strings only if exact, compact PyUnicode; the
 *            line table only if PyBytes.
 * The line comes from decoding co_linetable ourselves (3.11's
 * PyCode_Addr2Line races without the GIL). A per-thread cache maps
 * (code, instruction offset, the code's name and file as objects and as
 * text, its first line and line table) to the interned frame, so a warm
 * capture costs a few ns a frame; the thread's last walk, kept frame by
 * frame, is given again whole when every frame reads as it did (memo_take).
 */
#define _GNU_SOURCE
#include "core/pyframes.h"

#include "core/pycodes.h"
#include "core/pylines.h"
#include "core/unwind.h"

#include "base/log.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layouts ------------------------------------------------------------ */

struct py_layout {
    int minor;
    int cframe;           /* tstate -> _PyCFrame*, or -1 (3.10, 3.13: none) */
    int current;          /* -> current frame, in the cframe or tstate  */
    int f_code, f_prev, f_instr, f_owner;  /* 3.10: f_instr is f_lasti, an int */
    int co_adaptive, co_firsttraceable, co_firstlineno;
    int ascii_size, compact_size;   /* PyASCIIObject, PyCompactUnicodeObject */
    int finalizing;       /* in _PyRuntime */
    int owner_cstack;     /* FRAME_OWNED_BY_CSTACK, or -1 */
    int co_filename, co_name, co_linetable; /* co_name: co_qualname from 3.11 */
    int co_code;          /* 3.10: the bytecode, a bytes object; else -1 */
};

/* 3.10 has frame objects (PyFrameObject), no owners, no incomplete frames
 * and no qualified names: the walk reads f_back, f_code and f_lasti (in
 * code units: x2 for bytes) and names a function by co_name. */
static const struct py_layout layouts[] = {
    { 10, -1, 24, 32, 24, 96, -1, -1, -1, 40, 48, 72, 16, -1, 104, 112, 120, 48 },
    { 11, 56, 8, 32, 48, 56, 69, 184, 168, 72, 48, 72, 24, -1, 112, 128, 136, -1 },
    { 12, 56, 0, 0, 8, 56, 70, 192, 176, 68, 40, 56, 24, 3, 112, 128, 136, -1 },
    { 13, -1, 72, 0, 8, 56, 70, 200, 184, 68, 40, 56, 608, 3, 112, 128, 136, -1 },
};

/* 3.10 and 3.11: where the interpreters and their threads' states are
 * listed (_PyRuntime.interpreters.head, PyInterpreterState.next and its
 * first thread state, PyThreadState.next and .thread_id), the state that
 * holds the GIL (_PyRuntime.gilstate.tstate_current) and a state's C
 * frame (PyThreadState.cframe: its root, inside the state, or the one of
 * its innermost evaluation loop, on the stack of the thread running it).
 * Those two keep a thread's gilstate bound to the first state made for it
 * while the thread runs another (a sub-interpreter's, a second state
 * swapped in, one made on another thread; 3.12 binds the state swapped
 * in): the walk must find the state running (running_state). */
struct py_interps {
    int minor, rt_mutex, rt_head, rt_next_id, interp_next, interp_threads, ts_next, ts_thread_id;
    int rt_tstate_current, ts_cframe;
};
static const struct py_interps interps_layouts[] = {
    { 10, 24, 32, 48, 0, 8, 8, 176, 568, 48 },
    { 11, 32, 40, 56, 0, 16, 8, 152, 576, 56 },
};
static const struct py_interps *LI;
static int (*lock_acquire)(void *, int);   /* PyThread_acquire_lock, _release_lock */
static void (*lock_release)(void *);

/* The fixed object header of a default (not debug, not free-threaded)
 * build, and the string and bytes fields that 3.10 to 3.13 share. */
#define OB_TYPE 8
#define OB_SIZE 16
#define STR_LENGTH 16
#define STR_STATE 32
#define STR_HASH 24         /* the str's cached hash, -1 until computed */
#define BYTES_DATA 32
#define OWNER_GENERATOR 1
/* Frames looked at, kept or not: a stop for a chain that does not end
 * (none does in a sound interpreter), far past any real recursion (CPython
 * 3.11+ recurses in Python without the C stack, as deep as its recursion
 * limit allows: hundreds of thousands of frames). A walk cut there keeps
 * no outermost frames: the last ones read are not the outermost. */
#define MAX_WALK (1u << 24)
#define MAX_OUTER 128         /* outermost frames kept (half the deepest stack) */

static int mode = 1;
static int stats;                   /* gmg_py_set_stats */
static unsigned long given_unread;  /* walks given again without reading a name */
static int state;             /* 0 not looked yet, 1 found, -1 none (yet), -2 one whose frames are not read */
static const struct py_layout *L;
static void *(*get_tstate)(void);
static const void *code_type, *unicode_type, *bytes_type, *frame_type;
static const char *runtime;
static char version[16];
static pthread_mutex_t detect_mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t interp_lo[4], interp_hi[4];   /* the interpreter's code */
static int ninterp;

void gmg_py_set_mode(int on) { mode = on; }
void gmg_py_set_stats(int on) { stats = on; }
unsigned long gmg_py_given_unread(void) { return __atomic_load_n(&given_unread, __ATOMIC_RELAXED); }

const char *gmg_py_version(void)
{
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1 ? version : NULL;
}

/* Is obj's type slot readable as in a default build? The type objects
 * themselves are objects whose type is PyType_Type: a debug build (two
 * more pointers first) or a free-threaded one (ob_tid first) fails this. */
static int plain_header(const void *type_obj, const void *type_type)
{
    return type_obj && *(const void *const *)((const char *)type_obj + OB_TYPE) == type_type;
}

/* The executable segments of the object holding the interpreter
 * (libpython, or the python executable itself when it is linked in). */
static int find_interp(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t at = (uintptr_t)arg;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && at >= info->dlpi_addr + ph->p_vaddr &&
            at < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            mine = 1;
    }
    if (!mine)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && ninterp < 4; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            interp_lo[ninterp] = info->dlpi_addr + ph->p_vaddr;
            interp_hi[ninterp++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    return 1;
}

int gmg_py_interp_count(void) { return __atomic_load_n(&ninterp, __ATOMIC_RELAXED); }

int gmg_py_is_interpreter(uintptr_t pc)
{
    for (int i = 0; i < ninterp; i++)
        if (pc - 1 >= interp_lo[i] && pc - 1 < interp_hi[i])
            return 1;
    return 0;
}

static void detect(void)
{
    int found = -2; /* an interpreter, said why its frames are not read: not looked for again */
    const unsigned long *pv = dlsym(RTLD_DEFAULT, "Py_Version");
    void *gts = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    if (!gts) {
        __atomic_store_n(&state, -1, __ATOMIC_RELEASE);
        return; /* no interpreter in the process: nothing to say */
    }
    int major = 0, minor = 0;
    if (pv) {
        major = (int)((*pv >> 24) & 0xff);
        minor = (int)((*pv >> 16) & 0xff);
    } else {
        const char *(*gv)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
        const char *v = gv ? gv() : NULL; /* "3.10.13 (main, ..." */
        if (v && v[0] >= '0' && v[0] <= '9' && v[1] == '.') {
            major = v[0] - '0';
            minor = atoi(v + 2);
        }
    }
    const struct py_layout *lay = NULL;
    for (size_t i = 0; major == 3 && i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor)
            lay = &layouts[i];
    const void *type_type = dlsym(RTLD_DEFAULT, "PyType_Type");
    code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
    frame_type = dlsym(RTLD_DEFAULT, "PyFrame_Type");
    runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (!lay) {
        gmg_notice("Python %d.%d: its frame layout is not one this guard knows (3.10 to 3.13); "
                   "stacks are native only", major, minor);
    } else if (!plain_header(code_type, type_type) || !plain_header(unicode_type, type_type) ||
               !plain_header(bytes_type, type_type) || !runtime ||
               (lay->co_code >= 0 && !plain_header(frame_type, type_type))) {
        gmg_notice("Python %d.%d: not a default build (debug or free-threaded?); stacks are native only",
                   major, minor);
    } else {
        L = lay;
        lock_acquire = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "PyThread_acquire_lock");
        lock_release = (void (*)(void *))dlsym(RTLD_DEFAULT, "PyThread_release_lock");
        for (size_t i = 0; lock_acquire && lock_release && i < sizeof interps_layouts / sizeof interps_layouts[0]; i++)
            if (interps_layouts[i].minor == minor)
                LI = &interps_layouts[i];
        get_tstate = (void *(*)(void))gts;
        dl_iterate_phdr(find_interp, gts);
        gmg_pycodes_setup(minor, runtime);
        snprintf(version, sizeof version, "%d.%d", major, minor);
        found = 1;
        gmg_debug("Python %s found: Python frames are captured", version);
    }
    __atomic_store_n(&state, found, __ATOMIC_RELEASE);
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
        *(unsigned long long *)arg = info->dlpi_adds;
    return 1; /* the counts are the same in every entry: one is enough */
}

/* Objects loaded since start-up, as the loader counts them: its write
 * lock, which dlopen does not hold while it runs constructors. */
static unsigned long long loads(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(read_adds, &adds);
    return adds;
}

static unsigned long long looked_at; /* loads() when the interpreter was last looked for */

void gmg_py_detect(void)
{
    if (!mode)
        return;
    pthread_mutex_lock(&detect_mu);
    int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (st == 0 || st == -1) { /* none looked for, or none found: found ones, or ones said, stay */
        __atomic_store_n(&looked_at, loads(), __ATOMIC_RELAXED);
        detect();
    }
    pthread_mutex_unlock(&detect_mu);
}

void gmg_py_tick(void)
{
    int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (mode && (st == 0 || st == -1) && loads() != __atomic_load_n(&looked_at, __ATOMIC_RELAXED))
        gmg_py_detect();
}

/* ---- reading objects ----------------------------------------------------- */

#define RD(T, base, off) (*(T const *)((const char *)(base) + (off)))

static int aligned_ptr(const void *p) { return p && ((uintptr_t)p & 7) == 0; }

/* An exact, compact str into dst as UTF-8 (bounded); 0 if not one. */
static int read_str(const void *s, char *dst, size_t cap)
{
    if (!aligned_ptr(s) || RD(const void *, s, OB_TYPE) != unicode_type)
        return 0;
    int64_t len = RD(int64_t, s, STR_LENGTH);
    uint32_t st = RD(uint32_t, s, STR_STATE);
    unsigned kind = (st >> 2) & 7, compact = (st >> 5) & 1, ascii = (st >> 6) & 1;
    if (!compact || len < 0 || (kind != 1 && kind != 2 && kind != 4))
        return 0;
    const unsigned char *d = (const unsigned char *)s + (ascii ? L->ascii_size : L->compact_size);
    size_t o = 0;
    for (int64_t i = 0; i < len; i++) {
        uint32_t c = kind == 1 ? d[i] : kind == 2 ? ((const uint16_t *)d)[i] : ((const uint32_t *)d)[i];
        char enc[4];
        size_t n;
        if (c == 0) { /* a name with a NUL in it: the rest kept */
            enc[0] = '?';
            n = 1;
        } else if (c < 0x80) {
            enc[0] = (char)c;
            n = 1;
        } else if (c >= 0xdc80 && c <= 0xdcff) {
            /* a byte of a file name that is not UTF-8, as Python decodes it
             * (surrogateescape): the byte, as the file system has it (and
             * os.fsencode gives it back); the formats that must be UTF-8
             * show it as U+FFFD */
            enc[0] = (char)(c - 0xdc00);
            n = 1;
        } else if (c >= 0xd800 && c <= 0xdfff) { /* any other lone surrogate: no character */
            enc[0] = (char)0xef;
            enc[1] = (char)0xbf;
            enc[2] = (char)0xbd;
            n = 3;
        } else if (c < 0x800) {
            enc[0] = (char)(0xc0 | c >> 6);
            enc[1] = (char)(0x80 | (c & 0x3f));
            n = 2;
        } else if (c < 0x10000) {
            enc[0] = (char)(0xe0 | c >> 12);
            enc[1] = (char)(0x80 | ((c >> 6) & 0x3f));
            enc[2] = (char)(0x80 | (c & 0x3f));
            n = 3;
        } else if (c < 0x110000) {
            enc[0] = (char)(0xf0 | c >> 18);
            enc[1] = (char)(0x80 | ((c >> 12) & 0x3f));
            enc[2] = (char)(0x80 | ((c >> 6) & 0x3f));
            enc[3] = (char)(0x80 | (c & 0x3f));
            n = 4;
        } else {
            return 0;
        }
        if (o + n + 4 >= cap) { /* cut, marked */
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(dst + o, enc, n);
        o += n;
    }
    dst[o] = 0;
    return 1;
}

/* What a frame's name and file strings were read as: the interned texts,
 * their lengths, and the hashes CPython kept in the strings then (-1: not
 * computed yet). A string at the same address is the same text only if it
 * still reads so: a string freed and another made in its place is common
 * (functions made by exec, reloaded modules). fn NULL: not read. */
struct strs {
    const char *fn, *file;
    uint32_t fn_len, file_len;
    int64_t fn_hash, file_hash;
    /* The line table's first bytes the line was read from (t_used; 0: it
     * was read from none), as they were then (t_copy, the table kept whole
     * for good; NULL: none could be kept, so no later reading is taken for
     * this one): a code object made again at the address of a freed one,
     * with a table of the same size at the old table's address (code made
     * by exec from text of another shape), reads another line. */
    int64_t t_used;
    const uint8_t *t_copy;
};

static inline int64_t str_hash(const void *s)
{
    return aligned_ptr(s) && RD(const void *, s, OB_TYPE) == unicode_type ? RD(int64_t, s, STR_HASH) : -1;
}

/* Does s read as text (len bytes), as resolve read it into a buffer of
 * cap bytes? Equal hashes kept by CPython say so at once (SipHash, 64
 * bits); an ASCII string is compared in place; anything else is read. */
static __attribute__((noinline)) int same_text_read(const void *s, const char *text, size_t cap);
static inline int same_str(const void *s, const char *text, uint32_t len, int64_t hash_then, size_t cap)
{
    if (aligned_ptr(s) && RD(const void *, s, OB_TYPE) == unicode_type) {
        if (hash_then != -1 && RD(int64_t, s, STR_HASH) == hash_then)
            return 1;
        uint32_t st = RD(uint32_t, s, STR_STATE);
        int64_t n = RD(int64_t, s, STR_LENGTH);
        if (((st >> 5) & 1) && ((st >> 6) & 1) && n >= 0 && (size_t)n + 4 < cap)
            return (uint64_t)n == len && memcmp((const char *)s + L->ascii_size, text, len) == 0;
    }
    return same_text_read(s, text, cap);
}

static int same_text_read(const void *s, const char *text, size_t cap)
{
    char buf[1024];
    if (!read_str(s, buf, cap < sizeof buf ? cap : sizeof buf))
        snprintf(buf, sizeof buf, "?");
    return strcmp(buf, text) == 0;
}

#define FN_CAP 256
#define FILE_CAP 1024

/* Does the table (of the size read before) begin as it did? */
static inline int table_holds(const void *table, const struct strs *k)
{
    if (k->t_used <= 0)
        return 1;
    return k->t_copy && memcmp((const uint8_t *)table + BYTES_DATA, k->t_copy, (size_t)k->t_used) == 0;
}

static inline int strs_hold(const struct strs *k, const void *name, const void *filename)
{
    return !k->fn || (same_str(name, k->fn, k->fn_len, k->fn_hash, FN_CAP) &&
                      same_str(filename, k->file, k->file_len, k->file_hash, FILE_CAP));
}

/* ---- the interned frames --------------------------------------------- */

struct pyf {
    uint64_t hash;
    struct pyf *next;
    uint32_t id;
    int line;
    char *file;            /* both in this block */
    char text[];           /* function, then file */
};

#define BUCKETS 1024
#define LOCKS 16
#define CHUNK_BITS 12
#define CHUNKS 1024        /* up to 4M distinct frames */

static struct pyf *buckets[BUCKETS];
static pthread_mutex_t locks[LOCKS] = { [0 ... LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER };
static struct pyf **chunks[CHUNKS];
static uint32_t next_id = 1;

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h * 0x100000001b3ull;
}

static struct pyf *find(struct pyf *f, uint64_t h, const char *fn, const char *file, int line)
{
    for (; f; f = f->next)
        if (f->hash == h && f->line == line && strcmp(f->text, fn) == 0 && strcmp(f->file, file) == 0)
            return f;
    return NULL;
}

static uint64_t frames_lost;

uint64_t gmg_py_lost(void)
{
    return __atomic_load_n(&frames_lost, __ATOMIC_RELAXED);
}

static struct pyf *intern(const char *fn, const char *file, int line)
{
    uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull ^ (uint64_t)(unsigned)line, fn), file);
    size_t b = h % BUCKETS;
    pthread_mutex_t *mu = &locks[b % LOCKS];
    pthread_mutex_lock(mu);
    struct pyf *f = find(buckets[b], h, fn, file, line);
    pthread_mutex_unlock(mu);
    if (f)
        return f;
    size_t lf = strlen(fn), ll = strlen(file);
    struct pyf *fresh = malloc(sizeof *fresh + lf + ll + 2);
    if (!fresh) { /* out of memory: the frame is left out, and reports say so */
        __atomic_fetch_add(&frames_lost, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    fresh->hash = h;
    fresh->line = line;
    memcpy(fresh->text, fn, lf + 1);
    fresh->file = fresh->text + lf + 1;
    memcpy(fresh->file, file, ll + 1);
    pthread_mutex_lock(mu);
    f = find(buckets[b], h, fn, file, line);
    if (!f) {
        uint32_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
        uint32_t c = id >> CHUNK_BITS;
        struct pyf **chunk = c < CHUNKS ? __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE) : NULL;
        if (c < CHUNKS && !chunk) {
            struct pyf **nc = calloc(1u << CHUNK_BITS, sizeof *nc), **expected = NULL;
            if (nc && !__atomic_compare_exchange_n(&chunks[c], &expected, nc, 0, __ATOMIC_ACQ_REL,
                                                   __ATOMIC_ACQUIRE))
                free(nc);
            chunk = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);
        }
        if (chunk) {
            fresh->id = id;
            fresh->next = buckets[b];
            __atomic_store_n(&chunk[id & ((1u << CHUNK_BITS) - 1)], fresh, __ATOMIC_RELEASE);
            buckets[b] = fresh;
            f = fresh;
            fresh = NULL;
        }
    }
    pthread_mutex_unlock(mu);
    free(fresh);
    return f;
}

int gmg_py_frame(uintptr_t w, const char **function, const char **file, int *line)
{
    if (!gmg_is_pyframe(w))
        return 0;
    uint32_t id = (uint32_t)(w & 0xffffffffu);
    if (id == 0 || (id >> CHUNK_BITS) >= CHUNKS)
        return 0;
    struct pyf **chunk = __atomic_load_n(&chunks[id >> CHUNK_BITS], __ATOMIC_ACQUIRE);
    struct pyf *f = chunk ? __atomic_load_n(&chunk[id & ((1u << CHUNK_BITS) - 1)], __ATOMIC_ACQUIRE) : NULL;
    if (!f)
        return 0;
    *function = f->text;
    *file = f->file;
    *line = f->line;
    return 1;
}

/* ---- the kept line tables -------------------------------------------- */

/* The line tables that frames' lines were read from, whole, once per
 * content, for as long as the process lives (as the interned frames): what
 * table_holds compares a table's first bytes with. Bounded: past
 * TABLES_MAX bytes nothing more is kept, and frames read from tables not
 * kept are read again each time (exact, slower). */
struct ktable {
    struct ktable *next;
    uint64_t hash;
    int64_t n;
    uint8_t data[];
};

#define TBUCKETS 1024
#define TABLES_MAX (64ull << 20)

static struct ktable *tbuckets[TBUCKETS];
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tables_bytes;

static struct ktable *tfind(struct ktable *k, uint64_t h, const uint8_t *t, int64_t n)
{
    for (; k; k = k->next)
        if (k->hash == h && k->n == n && memcmp(k->data, t, (size_t)n) == 0)
            return k;
    return NULL;
}

static const uint8_t *keep_table(const uint8_t *t, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n, w;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) { /* eight bytes a step: a module's table is tens of KB */
        memcpy(&w, t + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < n; i++) {
        h ^= t[i];
        h *= 0x100000001b3ull;
    }
    size_t b = h % TBUCKETS;
    pthread_mutex_lock(&tlock);
    struct ktable *k = tfind(tbuckets[b], h, t, n);
    pthread_mutex_unlock(&tlock);
    if (k)
        return k->data;
    if (__atomic_load_n(&tables_bytes, __ATOMIC_RELAXED) + (uint64_t)n > TABLES_MAX)
        return NULL;
    struct ktable *fresh = malloc(sizeof *fresh + (size_t)n);
    if (!fresh)
        return NULL;
    fresh->hash = h;
    fresh->n = n;
    memcpy(fresh->data, t, (size_t)n);
    pthread_mutex_lock(&tlock);
    k = tfind(tbuckets[b], h, t, n);
    if (!k) {
        fresh->next = tbuckets[b];
        tbuckets[b] = fresh;
        __atomic_fetch_add(&tables_bytes, (uint64_t)n, __ATOMIC_RELAXED);
        k = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(&tlock);
    free(fresh);
    return k->data;
}

/* ---- the per-thread cache ------------------------------------------------ */

#define CACHE 256

struct centry {
    const void *code, *name, *filename, *table;
    struct strs s;
    int64_t offset, table_size;
    int first;
    uint32_t id;
};

/* A line table's size, which a table made since at its address may not
 * share (-1: not a bytes object). */
static inline int64_t table_size(const void *table)
{
    return aligned_ptr(table) && RD(const void *, table, OB_TYPE) == bytes_type ? RD(int64_t, table, OB_SIZE) : -1;
}

/* The thread's last walk, frame by frame, as read (3.11-3.13): a walk
 * that reads every one of them the same again is the same stack, and gives
 * the same words without resolving a frame. Everything a frame's word
 * depends on is compared: the frame, its code and instruction and owner,
 * and the code's type, name and file (objects and, for the frames the
 * words name, what they read as), first line and line table (object and
 * size). The frames are live (the thread's own chain, which stands still
 * during the call), and so are their code objects; but one freed since the
 * last walk may have been made again at its address, with its strings and
 * table at the old ones' addresses too (functions made by exec): hence the
 * texts, and the table's first bytes that the frame's line was read from
 * (compared with a kept copy: struct strs). */
#define MEMO 128
struct mframe {
    const void *frame, *code, *instr, *type, *name, *filename, *table;
    struct strs s;            /* fn NULL: a frame left out of the words, whose names they do not hold */
    int64_t table_size;
    int first;                /* co_firstlineno */
    uint8_t owner;
};

struct cache {
    struct centry e[CACHE];
    uint32_t gap_n, gap_id;   /* the last "N frames left out" mark made */
    uint32_t memo_walked;     /* frames of the last walk in memo[]; 0: none kept */
    uint32_t memo_ver;        /* bumped whenever memo[] or memo_out may change */
    uint32_t memo_max, memo_n;
    uint64_t memo_epoch;      /* gmg_pycodes_epoch() before the last walk */
    const void *memo_end;     /* where the last walk stopped: not a frame */
    struct mframe memo[MEMO];
    uintptr_t memo_out[2 * MEMO];
};

static __thread struct cache *tl_cache __attribute__((tls_model("initial-exec")));
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_free(void *p)
{
    tl_cache = NULL; /* a later capture on this thread (another key's destructor) makes another */
    free(p);
}

static void cache_key_make(void) { (void)pthread_key_create(&cache_key, cache_free); }

static struct cache *my_cache(void)
{
    if (tl_cache)
        return tl_cache;
    pthread_once(&cache_once, cache_key_make);
    struct cache *c = calloc(1, sizeof *c);
    if (c) {
        tl_cache = c;
        (void)pthread_setspecific(cache_key, c); /* freed when the thread ends */
    }
    return c;
}

/* One frame to its interned id (0: skip it), and into *got (if not NULL)
 * what its strings were read as. */
static uint32_t resolve(struct cache *c, const char *code, int64_t offset, struct strs *got)
{
    const void *name = RD(const void *, code, L->co_name);
    const void *filename = RD(const void *, code, L->co_filename);
    const void *table = RD(const void *, code, L->co_linetable);
    uintptr_t k = ((uintptr_t)code >> 4) ^ (uintptr_t)offset * 0x9e3779b1u;
    int first = RD(int, code, L->co_firstlineno);
    int64_t tsize = table_size(table);
    struct centry *e = c ? &c->e[(k ^ (k >> 11)) % CACHE] : NULL;
    if (e && e->code == code && e->offset == offset && e->name == name && e->filename == filename &&
        e->table == table && e->first == first && e->table_size == tsize && e->id && strs_hold(&e->s, name, filename) &&
        table_holds(table, &e->s)) {
        if (got)
            *got = e->s;
        return e->id;
    }

    char fn[FN_CAP], file[FILE_CAP];
    if (!read_str(name, fn, sizeof fn))
        snprintf(fn, sizeof fn, "?");
    if (!read_str(filename, file, sizeof file))
        snprintf(file, sizeof file, "?");
    int line = first;
    int64_t used = 0;
    const uint8_t *copy = NULL;
    if (offset >= 0 && tsize >= 0) {
        int64_t n = tsize;
        if (n > 0 && n < (1 << 24)) {
            const uint8_t *t = (const uint8_t *)table + BYTES_DATA;
            int l = L->co_code >= 0 ? gmg_py_line_of_310(t, n, first, offset, &used)
                                    : gmg_py_line_of(t, n, first, offset, &used);
            if (l >= 0)
                line = l;
            if (used > 0)
                copy = keep_table(t, n); /* whole: each line of a code object reads a prefix of one copy */
        }
    }
    struct pyf *f = intern(fn, file, line);
    if (!f)
        return 0;
    struct strs now = { f->text, f->file, (uint32_t)strlen(f->text), (uint32_t)strlen(f->file), str_hash(name),
                        str_hash(filename), used, copy };
    if (got)
        *got = now;
    if (e) {
        e->code = code;
        e->offset = offset;
        e->name = name;
        e->filename = filename;
        e->table = table;
        e->first = first;
        e->table_size = tsize;
        e->s = now;
        e->id = f->id;
    }
    return f->id;
}

/* The mark that stands for `left` frames left out of a long stack: an
 * interned frame of its own (so every format shows it), named
 * "[N Python frames left out]", file "", line -N. */
static uint32_t mark(struct cache *c, uint32_t left)
{
    if (c && c->gap_n == left && c->gap_id)
        return c->gap_id;
    char fn[64];
    snprintf(fn, sizeof fn, "[%u Python frame%s left out]", left, left == 1 ? "" : "s");
    struct pyf *f = intern(fn, "", -(int)left);
    uint32_t id = f ? f->id : 0;
    if (c && id) {
        c->gap_n = left;
        c->gap_id = id;
    }
    return id;
}

int gmg_py_left_out(uintptr_t w)
{
    const char *fn, *file;
    int line;
    if (!gmg_py_frame(w, &fn, &file, &line) || file[0] || line >= 0)
        return 0;
    return -line;
}

/* ---- the walk --------------------------------------------------------- */

/* A thread state's current frame, or NULL (3.10: a frame object). */
static const char *current_frame(const char *ts)
{
    if (L->cframe >= 0) {
        const char *cf = RD(const char *, ts, L->cframe);
        return aligned_ptr(cf) ? RD(const char *, cf, L->current) : NULL;
    }
    return RD(const char *, ts, L->current);
}

/* 3.10, 3.11: is the state's innermost evaluation loop on the calling
 * thread's stack [lo, hi)? Its C frame is there exactly while the thread
 * runs Python in it (an outer loop of a state swapped out stays there too,
 * higher up). The GIL holder's state is read without the GIL: it may be
 * freed just then, as its thread ends; a stale word read from the heap is
 * then only a C frame found on no stack of ours (the sanitizers are told
 * so). */
#if defined(__clang__)
#define UNCHECKED_READ __attribute__((no_sanitize("address", "thread")))
#else
#define UNCHECKED_READ __attribute__((no_sanitize_address, no_sanitize_thread))
#endif
static UNCHECKED_READ int runs_here(const char *t, uintptr_t lo, uintptr_t hi, uintptr_t *at)
{
    *at = (uintptr_t)RD(const char *, t, LI->ts_cframe);
    return *at >= lo && *at < hi;
}

/* 3.10, 3.11: the calling thread's state that runs Python now; `ts` is
 * the one its gilstate names, [lo, hi) its stack (0, 0: not known).
 *  - The state holding the GIL, when it runs on this thread: it is the
 *    thread's current one (an allocation made with the GIL held).
 *  - Else, where another interpreter was ever made, the state whose
 *    evaluation loop is innermost on this thread's stack, among every
 *    interpreter's states (a sub-interpreter's head state runs on the
 *    thread that called into it, whichever made it); failing that, a
 *    state of this thread's id with frames. The lists are walked under the
 *    runtime's HEAD_LOCK, as CPython walks them (a state of another thread
 *    is unlinked under it before it is freed); taken after the GIL, as
 *    CPython takes it, and never held while anything else is.
 *  - Else `ts`. (Not seen: a second state of the main interpreter swapped
 *    in on the thread, when the allocation is made without the GIL, as
 *    ctypes calls: its frames are the first state's.) */
static const char *running_state(const char *ts, uintptr_t lo, uintptr_t hi)
{
    uintptr_t at;
    const char *cur = __atomic_load_n((const char *const *)(runtime + LI->rt_tstate_current), __ATOMIC_ACQUIRE);
    if (hi && aligned_ptr(cur) && runs_here(cur, lo, hi, &at))
        return cur;
    if (RD(int64_t, runtime, LI->rt_next_id) <= 1)
        return ts;
    void *mu = RD(void *, runtime, LI->rt_mutex);
    if (!mu || !lock_acquire(mu, 1))
        return ts;
    unsigned long me = (unsigned long)pthread_self();
    const char *inner = NULL, *mine = NULL;
    uintptr_t inner_at = UINTPTR_MAX;
    unsigned n = 0;
    for (const char *in = RD(const char *, runtime, LI->rt_head); aligned_ptr(in) && n < 4096;
         in = RD(const char *, in, LI->interp_next), n++)
        for (const char *t = RD(const char *, in, LI->interp_threads); aligned_ptr(t) && n < 4096;
             t = RD(const char *, t, LI->ts_next), n++) {
            if (hi && runs_here(t, lo, hi, &at) && at < inner_at) {
                inner = t;
                inner_at = at;
            }
            if (!mine && t != ts && RD(unsigned long, t, LI->ts_thread_id) == me && aligned_ptr(current_frame(t)))
                mine = t;
        }
    lock_release(mu);
    return inner ? inner : mine ? mine : ts;
}

/* What a frame holds: 1 with its code and the byte offset of its
 * instruction (-1: out of the code, its first line); 0 to skip it; -1 to
 * end the walk. */

/* 3.11-3.13: an interpreter frame (_PyInterpreterFrame). */
static int interpreter_frame(const char *frame, const char **code_out, int64_t *offset_out)
{
    const char *code = RD(const char *, frame, L->f_code);
    const char *instr = RD(const char *, frame, L->f_instr);
    int owner = RD(uint8_t, frame, L->f_owner);
    if (owner == L->owner_cstack || !aligned_ptr(code) || RD(const void *, code, OB_TYPE) != code_type)
        return 0; /* the C stack's entry frames; anything not code */
    const char *start = code + L->co_adaptive;
    int64_t units = RD(int64_t, code, OB_SIZE);
    int64_t offset = instr - start;
    int firsttraceable = RD(int, code, L->co_firsttraceable);
    if (owner != OWNER_GENERATOR && offset < 2 * (int64_t)firsttraceable)
        return 0; /* incomplete: not started yet, as CPython skips it */
    if (offset < 0 || units <= 0 || offset >= 2 * units)
        offset = -1;
    *code_out = code;
    *offset_out = offset;
    return 1;
}

/* 3.10: a frame object; anything else ends the walk (its f_back is not
 * one to follow). f_lasti counts code units, -1 before the first. */
static int frame_object(const char *frame, const char **code_out, int64_t *offset_out)
{
    if (RD(const void *, frame, OB_TYPE) != frame_type)
        return -1;
    const char *code = RD(const char *, frame, L->f_code);
    if (!aligned_ptr(code) || RD(const void *, code, OB_TYPE) != code_type)
        return 0;
    const char *bytecode = RD(const char *, code, L->co_code);
    int64_t size = aligned_ptr(bytecode) && RD(const void *, bytecode, OB_TYPE) == bytes_type
                       ? RD(int64_t, bytecode, OB_SIZE) : 0;
    int64_t offset = 2 * (int64_t)RD(int, frame, L->f_instr);
    *code_out = code;
    *offset_out = offset >= 0 && offset < size ? offset : -1;
    return 1;
}

/* What a 3.11-3.13 frame's word depends on, read as interpreter_frame and
 * resolve read it (the code's fields only once its type is code's). */
static inline void frame_facts(const char *frame, struct mframe *m)
{
    const char *code = RD(const char *, frame, L->f_code);
    m->frame = frame;
    m->code = code;
    m->instr = RD(const void *, frame, L->f_instr);
    m->owner = RD(uint8_t, frame, L->f_owner);
    m->type = aligned_ptr(code) ? RD(const void *, code, OB_TYPE) : NULL;
    m->s.fn = NULL; /* until the frame is named (resolve) */
    if (m->type == code_type) {
        m->name = RD(const void *, code, L->co_name);
        m->filename = RD(const void *, code, L->co_filename);
        m->table = RD(const void *, code, L->co_linetable);
        m->table_size = table_size(m->table);
        m->first = RD(int, code, L->co_firstlineno);
    } else {
        m->name = m->filename = m->table = NULL;
        m->table_size = 0;
        m->first = 0;
    }
}

/* The last walk's words, if the chain from frame reads as it did. With
 * same_codes (no code object freed since that walk: core/pycodes.h), a
 * code object at the address of one it saw is that one, whose name and
 * line table cannot have changed: they are not read again (its file
 * name's text still is). */
static uint32_t memo_take(const struct cache *c, const char *frame, uint32_t max, uintptr_t *out, int same_codes)
{
    if (!c->memo_walked || c->memo_max != max)
        return UINT32_MAX;
    /* One walk recorded every frame, so the frames of one code object, or
     * of one file object, read as one text then: each is compared once a
     * walk (a recursion, a module's functions). */
    const void *code_read = NULL, *file_read = NULL;
    int64_t table_read = 0; /* code_read's table: its first bytes compared */
    for (uint32_t i = 0; i < c->memo_walked; i++) {
        const struct mframe *k = &c->memo[i];
        if (frame != k->frame) /* never a null or misaligned one: memo_keep took only frames */
            return UINT32_MAX;
        const char *code = RD(const char *, frame, L->f_code);
        if (code != k->code || RD(const void *, frame, L->f_instr) != k->instr ||
            RD(uint8_t, frame, L->f_owner) != k->owner)
            return UINT32_MAX;
        frame = RD(const char *, frame, L->f_prev);
        if (code == code_read) {
            /* its names are compared; its line may rest on more of the table
             * (all of it was as one then: the same object, the same walk) */
            if (!same_codes && k->s.fn && k->s.t_used > table_read) {
                if (!table_holds(k->table, &k->s))
                    return UINT32_MAX;
                table_read = k->s.t_used;
            }
            continue;
        }
        const void *type = aligned_ptr(code) ? RD(const void *, code, OB_TYPE) : NULL;
        if (type != k->type)
            return UINT32_MAX;
        if (type != code_type) {
            code_read = code;
            continue;
        }
        if (RD(const void *, code, L->co_name) != k->name || RD(const void *, code, L->co_filename) != k->filename ||
            RD(const void *, code, L->co_linetable) != k->table || RD(int, code, L->co_firstlineno) != k->first)
            return UINT32_MAX;
        if (same_codes) {
            /* the object it was: its name and line table too. Its file
             * name alone is set in place (importlib's _fix_co_filename),
             * the old string dropped: one made since at its address is
             * told by its text, once per file a walk */
            if (k->s.fn && k->filename != file_read) {
                if (!same_str(k->filename, k->s.file, k->s.file_len, k->s.file_hash, FILE_CAP))
                    return UINT32_MAX;
                file_read = k->filename;
            }
            code_read = code;
            continue;
        }
        if (table_size(k->table) != k->table_size)
            return UINT32_MAX;
        if (!k->s.fn)
            continue; /* left out of the words: its names were not read */
        if (!same_str(k->name, k->s.fn, k->s.fn_len, k->s.fn_hash, FN_CAP) || !table_holds(k->table, &k->s))
            return UINT32_MAX;
        if (k->filename != file_read) {
            if (!same_str(k->filename, k->s.file, k->s.file_len, k->s.file_hash, FILE_CAP))
                return UINT32_MAX;
            file_read = k->filename;
        }
        code_read = code;
        table_read = k->s.t_used;
    }
    if (frame != c->memo_end)
        return UINT32_MAX;
    memcpy(out, c->memo_out, c->memo_n * sizeof *out);
    return c->memo_n;
}

/* This walk, whose frames the loop read into memo[], kept for the next. */
static uint32_t memo_keep(struct cache *c, uint32_t walked, const void *end, uint32_t max, const uintptr_t *out,
                          uint32_t n, uint64_t epoch)
{
    c->memo_epoch = epoch;
    memcpy(c->memo_out, out, n * sizeof *out);
    c->memo_ver++;
    c->memo_n = n;
    c->memo_max = max;
    c->memo_end = end;
    c->memo_walked = walked;
    return n;
}

uint32_t gmg_py_capture(uintptr_t *out, uint32_t max, uint32_t *memo_ver)
{
    *memo_ver = 0;
    if (!mode || max == 0)
        return 0;
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
        return 0; /* none found (yet): gmg_py_detect */

    const char *ts = get_tstate();
    if (!aligned_ptr(ts))
        return 0; /* a thread the interpreter does not know */
    if (LI) {
        uintptr_t lo = 0, hi = 0; /* the thread's stack: where its running loops' C frames lie */
        if (!gmg_unwind_stack_bounds(&lo, &hi))
            lo = hi = 0;
        ts = running_state(ts, lo, hi);
    }
    /* During finalization other threads' states are freed: only the
     * finalizing thread may look at its own. */
    const void *fin = __atomic_load_n((const void *const *)(runtime + L->finalizing), __ATOMIC_ACQUIRE);
    if (fin && fin != ts)
        return 0;
    const char *frame = current_frame(ts);
    if (L->cframe >= 0 && !aligned_ptr(RD(const char *, ts, L->cframe)))
        return 0;

    struct cache *c = my_cache();
    /* the memo is for 3.11-3.13's frames, whose walk ends only where the
     * chain does; 3.10's may end at a frame object of another type */
    int memo = c && L->co_code < 0;
    uint64_t epoch = 0;
    if (memo) {
        epoch = fin ? 0 : gmg_pycodes_epoch();
        int same_codes = epoch && epoch == c->memo_epoch;
        uint32_t got = memo_take(c, frame, max, out, same_codes);
        if (got != UINT32_MAX) {
            if (__builtin_expect(stats, 0) && same_codes)
                __atomic_fetch_add(&given_unread, 1, __ATOMIC_RELAXED);
            c->memo_epoch = epoch; /* read whole or not, the walk's code objects are known live now */
            *memo_ver = c->memo_ver | 1u << 31; /* never 0 */
            return got;
        }
        c->memo_walked = 0;
        c->memo_ver++;
    }
    /* A stack deeper than max keeps its innermost frames (where the
     * allocation was made), a mark saying how many were left out, and its
     * outermost frames (the program's entry, <module>): those are read
     * from a ring of the last ones seen, once the walk has ended. */
    /* 16 of 32; of 2, the innermost and a mark (or the outermost, when
     * there are only two); of 1, the innermost alone */
    uint32_t inner = max < 3 ? (max == 2 ? 1 : max) : max / 2;
    uint32_t ring_n = max - inner;                          /* outermost + 1 */
    if (ring_n > MAX_OUTER + 1)
        ring_n = MAX_OUTER + 1;
    struct { const char *code; int64_t offset; uint32_t walked; } ring[ring_n ? ring_n : 1]; /* as many as kept: small stacks */
    uint32_t n = 0, total = 0, walked = 0;
    int lost = 0; /* a frame not interned: tried again next time, not kept */
    for (; aligned_ptr(frame) && walked < MAX_WALK; walked++) {
        const char *code;
        int64_t offset;
        int what = L->co_code >= 0 ? frame_object(frame, &code, &offset) : interpreter_frame(frame, &code, &offset);
        if (what < 0)
            break;
        if (memo && walked < MEMO)
            frame_facts(frame, &c->memo[walked]);
        if (what > 0) {
            if (total < inner) {
                uint32_t id = resolve(c, code, offset, memo && walked < MEMO ? &c->memo[walked].s : NULL);
                if (id)
                    out[n++] = GMG_PYFRAME_TAG | id;
                else
                    lost = 1;
            } else if (ring_n) {
                ring[(total - inner) % ring_n].code = code;
                ring[(total - inner) % ring_n].offset = offset;
                ring[(total - inner) % ring_n].walked = walked;
            }
            total++;
        }
        frame = RD(const char *, frame, L->f_prev);
    }
    /* kept when the whole walk fits the memo and ended at the chain's end
     * (and, below, every frame it names was interned) */
    int fits = memo && walked <= MEMO && !aligned_ptr(frame) && max <= 2 * MEMO;
    if (total <= inner || !ring_n)
        return fits && !lost ? memo_keep(c, walked, frame, max, out, n, epoch) : n;
    uint32_t beyond = total - inner, keep = beyond, first = 0;
    if (walked >= MAX_WALK && aligned_ptr(frame)) { /* cut: the ring's are not the outermost */
        uint32_t gap = mark(c, beyond);
        if (gap)
            out[n++] = GMG_PYFRAME_TAG | gap;
        return n;
    }
    if (total > max) { /* the ring holds the last ring_n: keep all but one, for the mark */
        keep = ring_n - 1;
        first = (beyond - keep) % ring_n;
        uint32_t gap = mark(c, beyond - keep);
        if (gap)
            out[n++] = GMG_PYFRAME_TAG | gap;
        else
            lost = 1;
    }
    for (uint32_t k = 0; k < keep && n < max; k++) {
        uint32_t w = ring[(first + k) % ring_n].walked;
        uint32_t id = resolve(c, ring[(first + k) % ring_n].code, ring[(first + k) % ring_n].offset,
                              memo && w < MEMO ? &c->memo[w].s : NULL);
        if (id)
            out[n++] = GMG_PYFRAME_TAG | id;
        else
            lost = 1;
    }
    return fits && !lost ? memo_keep(c, walked, frame, max, out, n, epoch) : n;
}

void gmg_py_atfork_child(void)
{
    /* as the stack depot: the table stays, its locks start afresh */
    for (int i = 0; i < LOCKS; i++)
        pthread_mutex_init(&locks[i], NULL);
    pthread_mutex_init(&detect_mu, NULL);
    pthread_mutex_init(&tlock, NULL);
}
