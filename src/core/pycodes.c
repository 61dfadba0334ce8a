/*
 * pycodes.c - see pycodes.h.
 *
 * Why the count is enough. A walk at moment T1 reads the epoch, then the
 * thread's frames: each frame holds a strong reference to its code, so
 * every code object the walk saw was live after the epoch was read. A walk
 * at T2 reads the epoch again: if no code object was destroyed in between,
 * none of those was, and a code object at one of their addresses is the
 * same one. A code object destroyed and another made at its address before
 * T2 means a destruction counted before T2's read: the thread's frames at
 * T2 were pushed by the thread itself, which ran Python (under the GIL,
 * after the destroying thread let it go) since. The watcher is called in
 * code_dealloc before the object is freed, and for a code object brought
 * back to life there too (counted all the same: only more full checks).
 *
 * What would miss a destruction, and keeps the epoch 0:
 *  - the watcher not added yet (the pending call not run, no slot left);
 *  - the watcher gone from its slot: cleared by the program (any id, any
 *    time; the slot may hold another's since), or by finalization, whose
 *    interpreter clear drops every watcher (an interpreter initialized
 *    again is never watched: nothing adds the watcher again). The slot is
 *    read on every walk; while the interpreter is finalizing, before the
 *    clear, the capture does not ask for the count at all (pyframes);
 *  - another interpreter ever made (_PyRuntime.interpreters.next_id past
 *    1): its code objects tell its own watchers, not ours, and one made
 *    with a GIL of its own may race the main one.
 *
 * A code object's names, first line and line table are never changed in
 * place, but its file name is (importlib's _fix_co_filename), and the old
 * string may be freed and another made at its address: pyframes compares
 * the code's fields as pointers on every walk, and the file name's text.
 */
#define _GNU_SOURCE
#include "core/pycodes.h"

#include "base/log.h"

#include <dlfcn.h>

#define RD(T, base, off) (*(T const *)((const char *)(base) + (off)))

/* _PyRuntime.interpreters is { mutex, head, main, next_id }: where main
 * and next_id lie, and PyInterpreterState.code_watchers, the slots. Each
 * is checked once before anything is trusted: main against
 * PyInterpreterState_Main(), the slot PyCode_AddWatcher gave against our
 * function. */
static const struct { int minor, rt_main, rt_next_id, code_watchers; } layouts[] = {
    { 12, 48, 56, 267280 },
    { 13, 640, 648, 10880 },
};

#define CODE_EVENT_DESTROY 1   /* PyCodeEvent: PY_CODE_EVENT_CREATE 0, _DESTROY 1 */
#define ASK_TRIES 16           /* pending-call queue full: asked again at later captures, so many times */

typedef int (*watch_fn)(int event, void *code);

static const char *runtime;
static int rt_main, rt_next_id, code_watchers;
static int (*add_pending)(int (*)(void *), void *);   /* Py_AddPendingCall */
static int (*add_watcher_fn)(watch_fn);               /* PyCode_AddWatcher */
static int (*clear_watcher_fn)(int);                  /* PyCode_ClearWatcher */
static void (*err_clear)(void);                       /* PyErr_Clear */
static void *(*err_occurred)(void);                   /* PyErr_Occurred */
static int (*gil_check)(void);                        /* PyGILState_Check */
static void *(*main_interp)(void);                    /* PyInterpreterState_Main */

static int tries = ASK_TRIES; /* pending calls asked for (none may be: setup lowers it) */
static int asking;            /* a thread is in Py_AddPendingCall: no other, no handler of its own */
static int watching;          /* the watcher was added (set once, by the main thread) */
static watch_fn const *slot;  /* where: the main interpreter's code_watchers[id] */
static uint64_t deaths;

void gmg_pycodes_setup(int minor, const char *rt)
{
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor) {
            rt_main = layouts[i].rt_main;
            rt_next_id = layouts[i].rt_next_id;
            code_watchers = layouts[i].code_watchers;
            add_pending = (int (*)(int (*)(void *), void *))dlsym(RTLD_DEFAULT, "Py_AddPendingCall");
            add_watcher_fn = (int (*)(watch_fn))dlsym(RTLD_DEFAULT, "PyCode_AddWatcher");
            clear_watcher_fn = (int (*)(int))dlsym(RTLD_DEFAULT, "PyCode_ClearWatcher");
            err_clear = (void (*)(void))dlsym(RTLD_DEFAULT, "PyErr_Clear");
            err_occurred = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyErr_Occurred");
            gil_check = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Check");
            main_interp = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
            if (rt && add_pending && add_watcher_fn && clear_watcher_fn && err_clear && err_occurred && gil_check &&
                main_interp) {
                runtime = rt;
                __atomic_store_n(&tries, 0, __ATOMIC_RELEASE);
            }
        }
}

static int on_code(int event, void *code)
{
    (void)code;
    if (event == CODE_EVENT_DESTROY)
        __atomic_fetch_add(&deaths, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* The pending call: on the main thread, with the GIL, between two of its
 * bytecodes (or wherever C code calls Py_MakePendingCalls). Never touches
 * an exception the program has set, never leaves one set. */
static int add_watcher(void *arg)
{
    (void)arg;
    if (__atomic_load_n(&watching, __ATOMIC_ACQUIRE) || err_occurred())
        return 0;
    const char *interp = main_interp();
    if (RD(const void *, runtime, rt_main) != interp || RD(int64_t, runtime, rt_next_id) < 1) {
        gmg_debug("Python code watcher: _PyRuntime is not laid out as expected; names are read on every walk");
        return 0;
    }
    if (RD(int64_t, runtime, rt_next_id) > 1)
        return 0; /* another interpreter made already: the watcher could never be trusted, its slot is the program's */
    int id = add_watcher_fn(on_code);
    if (id < 0) {
        err_clear();
        gmg_debug("Python code watcher: no watcher slot left; names are read on every walk");
        return 0;
    }
    watch_fn const *at = (watch_fn const *)(interp + code_watchers) + id;
    if (id >= 8 || *at != on_code) {
        (void)clear_watcher_fn(id); /* the slot given back: it cannot be watched */
        gmg_debug("Python code watcher: the interpreter is not laid out as expected; names are read on every walk");
        return 0;
    }
    slot = at;
    __atomic_store_n(&watching, 1, __ATOMIC_RELEASE);
    gmg_debug("Python code watcher on: a walk that finds the thread's last one's code objects, none freed since, "
              "reads none of their names again");
    return 0;
}

/* Ask for the pending call: one thread at a time (a signal handler's
 * capture on a thread inside Py_AddPendingCall must not wait for the lock
 * its own thread holds), and never from a thread that holds the GIL: 3.13's
 * Py_AddPendingCall may park it on the pending calls' lock, detaching its
 * thread state, and so let the GIL go inside the allocating call (another
 * thread may then run and wait for a lock the allocating thread holds).
 * Such a thread asks at a later capture, or another thread does. */
static __attribute__((noinline, cold)) void ask(void)
{
    if (__atomic_exchange_n(&asking, 1, __ATOMIC_ACQUIRE))
        return;
    int t = __atomic_load_n(&tries, __ATOMIC_RELAXED);
    if (t < ASK_TRIES && !gil_check()) {
        __atomic_store_n(&tries, t + 1, __ATOMIC_RELAXED);
        if (add_pending(add_watcher, NULL) == 0)
            __atomic_store_n(&tries, ASK_TRIES, __ATOMIC_RELAXED); /* queued: it runs once */
    }
    __atomic_store_n(&asking, 0, __ATOMIC_RELEASE);
}

uint64_t gmg_pycodes_epoch(void)
{
    if (__builtin_expect(!__atomic_load_n(&watching, __ATOMIC_ACQUIRE), 0)) {
        if (__atomic_load_n(&tries, __ATOMIC_RELAXED) < ASK_TRIES)
            ask();
        return 0;
    }
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) != on_code || RD(int64_t, runtime, rt_next_id) > 1)
        return 0;
    return __atomic_load_n(&deaths, __ATOMIC_SEQ_CST) + 1;
}
