/*
 * reinit.c ROUNDS - a program embedding CPython that initializes it,
 * allocates from one Python call site in a loop, and
 * finalizes it, ROUNDS times (tests/python.sh). An interpreter finalized
 * drops the code watchers the guard added to it: a later one must never
 * have its walks given again unread (GMG_STACK_STATS counts them), and its
 * stacks must still be the ones it ran.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The driver through a module of the program's own (ctypes does not
 * load twice in one 3.12 process), the GIL let go as ctypes does. */
static int (*mem_alloc)(uint64_t *, size_t);

static PyObject *gpu_alloc(PyObject *self, PyObject *arg)
{
    (void)self;
    size_t n = PyLong_AsSize_t(arg);
    uint64_t p = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mem_alloc(&p, n);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(rc);
}

static PyMethodDef methods[] = { { "alloc", gpu_alloc, METH_O, NULL }, { NULL, NULL, 0, NULL } };
static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "embedgpu", NULL, -1, methods, NULL, NULL, NULL, NULL };
static PyObject *init_module(void) { return PyModule_Create(&module); }

static const char *script =
    "import embedgpu\n"
    "def in_round_ROUND():\n"
    "    for _ in range(50):\n"
    "        for _ in range(2000):\n"
    "            pass\n"
    "        assert embedgpu.alloc(ROUND << 12) == 0\n"
    "in_round_ROUND()\n";

static int driver(void)
{
    void *cu = dlopen("libcuda.so.1", RTLD_NOW);
    int (*init)(unsigned) = cu ? (int (*)(unsigned))dlsym(cu, "cuInit") : NULL;
    int (*device)(int *, int) = cu ? (int (*)(int *, int))dlsym(cu, "cuDeviceGet") : NULL;
    int (*retain)(void **, int) = cu ? (int (*)(void **, int))dlsym(cu, "cuDevicePrimaryCtxRetain") : NULL;
    int (*set)(void *) = cu ? (int (*)(void *))dlsym(cu, "cuCtxSetCurrent") : NULL;
    mem_alloc = cu ? (int (*)(uint64_t *, size_t))dlsym(cu, "cuMemAlloc_v2") : NULL;
    int dev;
    void *ctx;
    return init && device && retain && set && mem_alloc && init(0) == 0 && device(&dev, 0) == 0 &&
           retain(&ctx, dev) == 0 && set(ctx) == 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    if (!driver() || PyImport_AppendInittab("embedgpu", init_module) != 0)
        return 1;
    for (int r = 1; r <= rounds; r++) {
        char src[2048], *o = src;
        for (const char *s = script; *s && o < src + sizeof src - 8; s++) {
            if (strncmp(s, "ROUND", 5) == 0) {
                o += snprintf(o, 8, "%d", r);
                s += 4;
            } else {
                *o++ = *s;
            }
        }
        *o = 0;
        Py_Initialize();
        if (PyRun_SimpleString(src) != 0)
            return 1;
        if (Py_FinalizeEx() != 0)
            return 1;
    }
    printf("%d rounds\n", rounds);
    return 0;
}
