/*
 * pyframes.h - the allocating thread's Python frames (core layer).
 *
 * When a CPython interpreter of a known layout (3.10 to 3.13) runs in
 * the process, the calling thread's own frame chain is walked on the
 * allocation path: no GIL, no call into the interpreter that allocates or
 * touches a reference count, every object checked against the
 * interpreter's exported types before it is trusted. Each frame's
 * function, file and line are resolved while the frame is live and interned
 * here, so a report stays right after the code object is gone. A Python
 * frame travels in a stack as a tagged word (GMG_PYFRAME_TAG | id) that no
 * native return address can equal.
 */
#ifndef GMG_CORE_PYFRAMES_H
#define GMG_CORE_PYFRAMES_H

#include <stdint.h>

#define GMG_PYFRAME_TAG ((uintptr_t)1 << 63)

static inline int gmg_is_pyframe(uintptr_t w) { return (w & GMG_PYFRAME_TAG) != 0; }

/* GPUMEM_PYTHON: 1 auto (capture when an interpreter is found), 0 off. */
void gmg_py_set_mode(int on);

/* Look for the interpreter (dlsym: the loader's lock): at start-up, and
 * from the report thread's tick once objects were loaded since the last
 * look, while none is found (a program that dlopens libpython). Never on
 * an allocating thread: one that a library's constructor started, and
 * waits for inside dlopen, would wait for that lock for ever. */
void gmg_py_detect(void);
void gmg_py_tick(void);

/* The calling thread's Python frames, innermost first, as tagged words
 * into out (at most max); 0 when there is no interpreter, no Python on
 * this thread, an unknown layout or capture is off. *memo_ver: 0, or,
 * when the words are the thread's last walk given again (every frame read
 * as it did), a number that stays the same exactly as long as that walk
 * is the one kept: two captures of the thread with the same nonzero
 * number gave the same words (none before the interpreter is found: see
 * gmg_py_detect). A stack of more than max frames
 * keeps its innermost half, then a mark (gmg_py_left_out) saying how many
 * frames were left out there, then its outermost frames (the program's
 * entry point and <module> among them), max words in all. */
uint32_t gmg_py_capture(uintptr_t *out, uint32_t max, uint32_t *memo_ver);
/* GMG_STACK_STATS (tests): count the walks given again whole without
 * reading a code object's names or line table (none freed since the walk
 * kept: core/pycodes.h), and read that count. */
void gmg_py_set_stats(int on);
unsigned long gmg_py_given_unread(void);
/* Python frames left out of captured stacks since start-up because their
 * names could not be interned (out of memory). */
uint64_t gmg_py_lost(void);

/* Is pc (a return address) in the interpreter's own code? Once Python
 * frames are captured, the native frames from the first of these outward
 * are the eval loop's, which the Python frames stand for. */
int gmg_py_is_interpreter(uintptr_t pc);
/* How many code ranges of the interpreter are known (they only grow):
 * whether gmg_py_is_interpreter may answer otherwise than before. */
int gmg_py_interp_count(void);

/* The number of frames a mark stands for; 0 if w is no mark. */
int gmg_py_left_out(uintptr_t w);

/* A tagged frame's function, file and line; 0 if w names no frame. A
 * mark's function is "[N Python frames left out]", its file "". */
int gmg_py_frame(uintptr_t w, const char **function, const char **file, int *line);

/* fork child: the interned frames stay, their locks start afresh. */
void gmg_py_atfork_child(void);

/* The interpreter found, as "3.12", or NULL (none yet, none, or unknown). */
const char *gmg_py_version(void);

#endif
