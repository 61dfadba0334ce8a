/*
 * symbolize.c - see symbolize.h. Results are cached per address for the
 * life of one symbolizer, so each distinct frame is looked up once however
 * many stacks share it. Reports and refusal messages share one symbolizer
 * (gmg_symbolizer_get) for as long as no library is loaded or unloaded
 * (dl_iterate_phdr's counters say) and the process is the same: reading a
 * module's DWARF the first time (decompressing it, for a library whose
 * debug information is compressed) costs far more than any message, and
 * is paid once, not once per message.
 *
 * libdwfl keeps a descriptor open for each ELF and debug file it read,
 * until dwfl_end closes them. A program may close descriptors it did not
 * open while it runs (closefrom(3)) and get their numbers back for files
 * of its own, which dwfl_end would then close. So every descriptor a
 * symbolizer's Dwfl keeps is noted with its file's device and inode (the
 * callbacks below open them all; an unloaded library's file is opened
 * here); a symbolizer one of whose descriptors is no longer that file is
 * never ended: its Dwfl is left as it is, and the shared one is made anew
 * for the next message. Each is also moved up, to GMG_FD_FLOOR or above, the
 * moment it is opened: a program that closes every descriptor while a
 * symbolizer is being made (the reporter thread warms one up just after
 * cuInit) gets back low numbers, which libdwfl never reads or closes for
 * the files it keeps; a number taken back before it was moved is left to
 * the program (gmg_fd_raise, base/fd.h). What libdwfl opens and closes within one call
 * (/proc/PID/maps, a debug file it tries and rejects) can still meet a
 * number the program closes and takes back at that very moment.
 */
#define _GNU_SOURCE
#include "report/symbolize.h"

#include "base/buildid.h"
#include "base/dlclose.h"
#include "base/exe.h"
#include "base/fd.h"
#include "base/hashtab.h" /* uthash, non-fatal out of memory */
#include "base/resident.h"
#include "core/pyframes.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <libiberty/demangle.h> /* cplus_demangle_v3: linked in, never exported (Makefile) */
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct entry {
    uintptr_t pc;
    struct gmg_frame_info info;
    UT_hash_handle hh;
};

struct offline {             /* an unloaded library, read from its file */
    const struct gmg_module *mod;
    Dwfl *dwfl;
    Dwfl_Module *m;
    struct offline *next;
};

struct rebuilt {             /* a module's build checked against the object loaded where it was */
    const struct gmg_module *mod;
    int same;
    struct rebuilt *next;
};

/* A descriptor a Dwfl keeps, and the file it was opened on. */
struct kept_fd {
    int fd;
    dev_t dev;
    ino_t ino;
};

/* The process's Dwfl (its maps read) and the demangler are looked for
 * when first needed, not when the symbolizer is made: a refusal or report
 * with stacks off names no frame, and a C program has no mangled names
 * (looking for a C++ runtime probes every library path for three files). */
struct gmg_symbolizer {
    Dwfl *dwfl;
    struct kept_fd *fds;     /* every descriptor its Dwfls keep */
    size_t nfds, capfds;
    int fds_unnoted;         /* one could not be noted (out of memory) */
    int dwfl_tried, demangle_tried;
    char dwfl_why[128];      /* why libdw could not read the process's modules ("": it could) */
    unsigned long dynamic;   /* frames named while it could not, since it was made */
    int spare;               /* made by a get while the shared one was in use: put frees it */
    struct offline *offline; /* one Dwfl each: two may have had one address */
    struct entry *cache;
    struct entry *uncached;  /* out of memory for the cache: linked by hh.next, freed with it */
    struct rebuilt *rebuilt; /* modules whose build was checked against the one loaded now */
    unsigned long lost;      /* names it could not keep (out of memory), since it was made */
    char *(*demangle)(const char *, char *, size_t *, int *);
};

/* ------------------------------------------------ kept descriptors */

/* The symbolizer whose Dwfl this thread is calling into: libdwfl's
 * callbacks carry no argument of ours. */
static __thread struct gmg_symbolizer *opening __attribute__((tls_model("initial-exec")));

/* The same for a descriptor libdwfl's own callback opened on *name: when
 * the number was lost, the file opened again here, once, and moved; and
 * when that fails too, *name dropped. libdwfl opens a file it was given
 * a name and no descriptor for itself, at a low number no one notes. */
static int own_named(int fd, char **name)
{
    if (fd < 0 || !*name)
        return fd;
    int mine = gmg_fd_raise(fd, *name);
    if (mine < 0)
        mine = gmg_fd_raise(open(*name, O_RDONLY | O_CLOEXEC), *name);
    if (mine < 0) {
        free(*name);
        *name = NULL;
    }
    return mine;
}

static void note_fd(struct gmg_symbolizer *s, int fd)
{
    struct stat st;
    if (fd < 0 || !s)
        return;
    if (s->nfds == s->capfds) {
        size_t cap = s->capfds ? 2 * s->capfds : 16;
        struct kept_fd *v = realloc(s->fds, cap * sizeof *v);
        if (!v) {
            s->fds_unnoted = 1;
            return;
        }
        s->fds = v;
        s->capfds = cap;
    }
    if (fstat(fd, &st) != 0) {
        s->fds_unnoted = 1;
        return;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC); /* libdwfl opens without: not for a program the process execs */
    s->fds[s->nfds++] = (struct kept_fd){ fd, st.st_dev, st.st_ino };
}

/* Is no descriptor s's Dwfls keep another file now? One that is closed
 * does not count: libdwfl closes some itself (a file whose build-id does
 * not match), and closing a number no one holds harms no one; taking it
 * for the program's would make every message rebuild the symbolizer and
 * leave the old one unended. */
static int fds_still_kept(const struct gmg_symbolizer *s)
{
    if (s->fds_unnoted)
        return 0;
    for (size_t i = 0; i < s->nfds; i++) {
        struct stat st;
        if (fstat(s->fds[i].fd, &st) != 0) {
            if (errno == EBADF)
                continue;
            return 0;
        }
        if (st.st_dev != s->fds[i].dev || st.st_ino != s->fds[i].ino)
            return 0;
    }
    return 1;
}

/* /proc/PID/maps, which libdwfl reads the modules' paths from, writes a
 * newline in a path as \012 (the one character it escapes): a module whose
 * path has one is opened by its real name, which then names its file. */
static int open_unescaped(const char *modname, char **file_name)
{
    if (!modname || modname[0] != '/' || !strstr(modname, "\\012"))
        return -1;
    size_t n = strlen(modname);
    char *real = malloc(n + 1), *o = real;
    if (!real)
        return -1;
    for (const char *p = modname; *p;)
        if (strncmp(p, "\\012", 4) == 0) {
            *o++ = '\n';
            p += 4;
        } else {
            *o++ = *p++;
        }
    *o = 0;
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(real);
        return -1;
    }
    free(*file_name);
    *file_name = real;
    return fd;
}

/* libdwfl's own callbacks, each descriptor they hand it noted. A file
 * found by name only (no descriptor) is opened here, as libdwfl would
 * open it, so that it is noted too. */
static int find_elf_noted(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          char **file_name, Elf **elfp)
{
    int fd = dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
    if (fd >= 0 && !*file_name)
        return -1; /* ENOMEM, returned as if a descriptor: a number that may be the program's */
    if (fd < 0 && !*elfp && *file_name)
        fd = open(*file_name, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && !*elfp)
        fd = open_unescaped(modname, file_name);
    fd = own_named(fd, file_name);
    note_fd(opening, fd);
    return fd;
}

/* The .gnu_debuglink CRC (CRC-32, as zlib's), four bits at a time. */
static uint32_t crc32_of(int fd)
{
    static const uint32_t t[16] = { 0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
                                    0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c };
    uint32_t c = 0xffffffffu;
    unsigned char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        for (ssize_t i = 0; i < n; i++) {
            c ^= buf[i];
            c = (c >> 4) ^ t[c & 15];
            c = (c >> 4) ^ t[c & 15];
        }
    return ~c;
}

/* A separate debug file, found as libdw's standard lookup finds one (by
 * build-id under the debuginfo path; then the file .gnu_debuglink names,
 * beside the module, in its .debug directory, under /usr/lib/debug, its
 * CRC checked), but never through debuginfod: libdw 0.188 loads its
 * client there (dlopen: some thirty libraries and their constructors,
 * under the loader's lock, for every program without DWARF of its own,
 * the Python interpreter among them), on this thread, while the program
 * may be exiting or making a child without fork handlers, which then
 * waits for that lock for ever. */
static int find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                                const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                char **debuginfo_file_name)
{
    int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                          debuginfo_file_name);
    if (fd >= 0 || !debuglink_file || !*debuglink_file || !file_name || strchr(debuglink_file, '/'))
        return fd;
    char dir[PATH_MAX];
    if (!realpath(file_name, dir))
        return -1;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const forms[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char path[PATH_MAX + 64];
        if ((size_t)snprintf(path, sizeof path, forms[i], dir, debuglink_file) >= sizeof path)
            continue;
        if (i == 0 && strcmp(debuglink_file, slash + 1) == 0)
            continue; /* the module itself */
        int f = open(path, O_RDONLY | O_CLOEXEC);
        if (f < 0)
            continue;
        uint32_t crc = crc32_of(f);
        if (crc == debuglink_crc && lseek(f, 0, SEEK_SET) == 0 && (*debuginfo_file_name = strdup(path)) != NULL)
            return f;
        close(f);
    }
    return -1;
}

static int find_debuginfo_noted(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                                const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                char **debuginfo_file_name)
{
    int fd = find_debuginfo_local(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                  debuginfo_file_name);
    if (fd < 0 && *debuginfo_file_name)
        fd = open(*debuginfo_file_name, O_RDONLY | O_CLOEXEC);
    fd = own_named(fd, debuginfo_file_name);
    note_fd(opening, fd);
    return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf_noted,
    .find_debuginfo = find_debuginfo_noted,
    .debuginfo_path = &debuginfo_path,
};
static const Dwfl_Callbacks offline_callbacks = {
    .find_debuginfo = find_debuginfo_noted,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* An entry the cache could not take: the caller still holds its names. */
static void uncached(struct gmg_symbolizer *s, struct entry *e)
{
    e->hh.next = s->uncached;
    s->uncached = e;
}

static void entry_free(struct entry *e)
{
    free((void *)e->info.function);
    free((void *)e->info.file);
    free((void *)e->info.module);
    free((void *)e->info.module_path);
    free(e);
}

/* libiberty's demangler (GNU's cp-demangle.c, linked in from libiberty.a
 * and hidden: the Makefile's --exclude-libs), for a process with no C++
 * runtime loaded: a C host, or an nvcc- or g++-built program that calls
 * nothing of libstdc++. The GNU runtime's __cxa_demangle is this same code,
 * called with these options (DMGL_PARAMS | DMGL_TYPES). NULL means a name
 * that is not valid or no memory (not told apart): either way the name is
 * shown as it is, as when __cxa_demangle fails. */
static char *iberty_demangle(const char *name, char *buf, size_t *len, int *status)
{
    (void)buf;
    (void)len;
    char *dm = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_TYPES);
    *status = dm ? 0 : -2;
    return dm;
}

/* The demangler: the C++ runtime's, when the process has one, so that its
 * names read exactly as its own tools print them (libc++abi's differ from
 * GNU's in places) -- in the global scope, or in a libstdc++ the process
 * loaded privately (Python extensions load it RTLD_LOCAL), found with
 * RTLD_NOLOAD so that nothing new is ever loaded for it. Otherwise
 * libiberty's, built in: names are demangled in every process. */
static demangle_fn find_demangler(void)
{
    demangle_fn f = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    static const char *const runtimes[] = { "libstdc++.so.6", "libc++abi.so.1", "libc++.so.1" };
    for (size_t i = 0; !f && i < sizeof runtimes / sizeof runtimes[0]; i++) {
        void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = (demangle_fn)dlsym(h, "__cxa_demangle");
            gmg_dlclose_own(h); /* NOLOAD took a reference of its own; the library stays loaded */
        }
    }
    return f ? f : iberty_demangle;
}

unsigned long gmg_symbolizer_lost(const struct gmg_symbolizer *s)
{
    return s ? s->lost : 0;
}

struct gmg_symbolizer *gmg_symbolizer_new(void)
{
    return calloc(1, sizeof(struct gmg_symbolizer));
}

static int count_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)m;
    (void)userdata;
    (void)name;
    (void)start;
    ++*(size_t *)arg;
    return DWARF_CB_OK;
}

/* Why the process's modules could not be read, into s->dwfl_why: rc is
 * dwfl_linux_proc_report's (an errno value, or -1 for libdwfl's own). */
static void dwfl_failed(struct gmg_symbolizer *s, int rc)
{
    snprintf(s->dwfl_why, sizeof s->dwfl_why, "%s", rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
    if (!s->dwfl_why[0])
        snprintf(s->dwfl_why, sizeof s->dwfl_why, "unknown error");
}

/* Does /proc/self/maps read empty (the main thread is a zombie)? */
static int maps_empty(void)
{
    char c;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, &c, 1);
    close(fd);
    return n == 0;
}

/* The running process's modules, reported once per symbolizer; NULL when
 * libdw cannot read them, or finds none (frames are then named by dladdr
 * alone, from the dynamic symbol tables: s->dwfl_why says why, and each
 * such frame is counted, so that a report can say it). */
static Dwfl *proc_dwfl(struct gmg_symbolizer *s)
{
    if (s->dwfl_tried)
        return s->dwfl;
    s->dwfl_tried = 1;
    s->dwfl = dwfl_begin(&callbacks);
    if (!s->dwfl) {
        dwfl_failed(s, -1);
        return NULL;
    }
    dwfl_report_begin(s->dwfl);
    int rc = dwfl_linux_proc_report(s->dwfl, getpid());
    size_t modules = 0;
    if (rc == 0 && dwfl_report_end(s->dwfl, NULL, NULL) != 0)
        rc = -1;
    if ((rc != 0 || dwfl_getmodules(s->dwfl, count_module, &modules, 0) != 0 || !modules) && maps_empty()) {
        /* the main thread ended by pthread_exit: /proc/PID/maps, its own,
         * reads empty; this thread's view of the same maps does not */
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%ld/maps", (long)syscall(SYS_gettid));
        FILE *f = fopen(path, "re");
        if (f) {
            dwfl_report_begin(s->dwfl);
            rc = dwfl_linux_proc_maps_report(s->dwfl, f);
            fclose(f);
            modules = 0;
            if (rc == 0 && dwfl_report_end(s->dwfl, NULL, NULL) != 0)
                rc = -1;
        }
    }
    if (rc == 0 && (dwfl_getmodules(s->dwfl, count_module, &modules, 0) != 0 || !modules))
        snprintf(s->dwfl_why, sizeof s->dwfl_why, "no module found in /proc/%d/maps", (int)getpid());
    else if (rc != 0)
        dwfl_failed(s, rc);
    if (s->dwfl_why[0]) {
        dwfl_end(s->dwfl);
        s->dwfl = NULL;
    }
    return s->dwfl;
}

unsigned long gmg_symbolizer_dynamic_only(const struct gmg_symbolizer *s, const char **why)
{
    if (why)
        *why = s && s->dwfl_why[0] ? s->dwfl_why : NULL;
    return s ? s->dynamic : 0;
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

/* A copy of a name; NULL for none, and NULL (counted in s->lost) when
 * memory ran out. A frame that lost a name is not cached: a later report
 * tries again. */
static const char *keep(struct gmg_symbolizer *sym, const char *s)
{
    char *c = s ? strdup(s) : NULL;
    if (s && !c)
        sym->lost++;
    return c;
}

struct build_look {
    const struct gmg_module *mod;
    int found, same;
};

/* Under the loader's lock (dl_iterate_phdr): the object loaded at the
 * module's bias from its path, its notes read through the loader's own
 * copy of its program headers, while no dlclose can unmap it. */
static int build_of_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct build_look *l = arg;
    if (info->dlpi_addr != l->mod->bias || strcmp(info->dlpi_name ? info->dlpi_name : "", l->mod->path) != 0)
        return 0;
    uint8_t bid[GMG_BUILD_ID_MAX];
    size_t n = gmg_build_id_phdrs(info->dlpi_phdr, info->dlpi_phnum, (uintptr_t)info->dlpi_addr, bid);
    l->found = 1;
    l->same = gmg_module_build_is(l->mod, bid, n);
    return 1;
}

/* Is the object loaded where m was the build m was? Once per module and
 * symbolizer (a symbolizer lives as long as no library is loaded or
 * unloaded). Out of memory: asked again. */
static int same_build_loaded(struct gmg_symbolizer *s, const struct gmg_module *m)
{
    for (struct rebuilt *r = s->rebuilt; r; r = r->next)
        if (r->mod == m)
            return r->same;
    struct build_look l = { m, 0, 0 };
    dl_iterate_phdr(build_of_loaded, &l);
    if (!l.found) {
        /* _dl_find_object has just found it: the iteration is not the
         * loader's own (ThreadSanitizer's leaves dlopen'ed objects out).
         * Read from its mapping, as the capture did */
        uint8_t bid[GMG_BUILD_ID_MAX];
        l.same = gmg_module_build_is(m, bid, gmg_build_id(m->start, m->end, m->bias, bid));
    }
    int same = l.same;
    struct rebuilt *r = malloc(sizeof *r);
    if (r) {
        *r = (struct rebuilt){ m, same, s->rebuilt };
        s->rebuilt = r;
    }
    return same;
}

/* Is the module a frame was captured in still the one mapped there? Its
 * link_map, extent and path; and its build (a rebuilt one loaded again
 * from its path). */
static int still_loaded(struct gmg_symbolizer *s, const struct gmg_module *m, uintptr_t look)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    struct dl_find_object fo;
    if (_dl_find_object((void *)look, &fo) != 0 || fo.dlfo_link_map != m->map ||
        (uintptr_t)fo.dlfo_map_start != m->start || (uintptr_t)fo.dlfo_map_end != m->end)
        return 0;
    const struct link_map *lm = fo.dlfo_link_map;
    if (strcmp(lm->l_name ? lm->l_name : "", m->path) != 0)
        return 0;
    return !m->build_id_len || same_build_loaded(s, m);
#else
    (void)s;
    (void)m;
    (void)look;
    return 1;
#endif
}

static void name_of(struct gmg_symbolizer *s, const char *fn, struct gmg_frame_info *fi);

/* Is the file at fd the build of the library that was loaded (its build
 * ID)? Where either build ID cannot be read, they cannot be told apart:
 * taken. */
static int same_build(int fd, const struct gmg_module *m)
{
    uint8_t bid[GMG_BUILD_ID_MAX];
    size_t n = m->build_id_len ? gmg_build_id_of_file(fd, bid) : 0;
    return !m->build_id_len || !n || gmg_module_build_is(m, bid, n);
}

/* A frame of an unloaded library: its names come from its file, loaded
 * offline at the address it had (the pc may be another library's now). */
static void symbolize_unloaded(struct gmg_symbolizer *s, uintptr_t pc, const struct gmg_module *m,
                               struct gmg_frame_info *out)
{
    struct gmg_frame_info fi = { .pc = pc, .unloaded = 1 };
    unsigned long lost0 = s->lost;
    uintptr_t look = pc - 1;
    const char *fn = NULL;
    fi.module = keep(s, base_name(m->path));
    fi.module_path = keep(s, m->path);
    fi.offset = pc - m->bias;
    struct offline *o = s->offline;
    while (o && o->mod != m)
        o = o->next;
    if (!o && *m->path && (o = calloc(1, sizeof *o)) != NULL) {
        o->mod = m;
        /* opened here, not by libdwfl, to be noted; it keeps it on success */
        int fd = gmg_open_high(m->path, O_RDONLY | O_CLOEXEC, 0);
        if (fd >= 0 && !same_build(fd, m)) { /* another build at its path now: its names would be another's */
            close(fd);
            fd = -1;
        }
        o->dwfl = fd >= 0 ? dwfl_begin(&offline_callbacks) : NULL;
        if (!o->dwfl && fd >= 0)
            close(fd);
        if (o->dwfl) {
            dwfl_report_begin(o->dwfl);
            o->m = fd >= 0 ? dwfl_report_elf(o->dwfl, base_name(m->path), m->path, fd, m->bias, false) : NULL;
            dwfl_report_end(o->dwfl, NULL, NULL);
            if (o->m)
                note_fd(s, fd);
            else if (fd >= 0)
                close(fd);
        }
        o->next = s->offline;
        s->offline = o;
    } else if (!o && *m->path) {
        s->lost++; /* out of memory: its file is not read, the frame goes unnamed and the report says so */
    }
    Dwfl_Module *mod = o ? o->m : NULL;
    if (mod) {
        fn = dwfl_module_addrname(mod, look);
        Dwfl_Line *line = dwfl_module_getsrc(mod, look);
        int ln = 0;
        const char *file = line ? dwfl_lineinfo(line, NULL, &ln, NULL, NULL, NULL) : NULL;
        if (file) {
            fi.file = keep(s, file);
            fi.line = ln;
        }
    }
    name_of(s, fn, &fi);
    struct entry *e = calloc(1, sizeof *e); /* kept under ~pc only to be freed with the cache */
    if (e) {
        e->pc = ~pc;
        e->info = fi;
        if (s->lost == lost0)
            HASH_ADD(hh, s->cache, pc, sizeof e->pc, e);
        if (s->lost != lost0 || !e->hh.tbl) /* out of memory: not cached, its names kept till the end */
            uncached(s, e);
    }
    *out = fi;
}

/* dladdr names the main program as it was started (argv[0]: demo/leaky,
 * relative to a directory the program may have left); its whole path is
 * /proc/self/exe's, as the report's header names it: what a suppression's
 * or pool's module pattern is matched against. */
static const char *module_path_of(const Dl_info *di)
{
    const char *exe;
    if (di->dli_fname == program_invocation_name && *(exe = gmg_exe_path()))
        return exe;
    return di->dli_fname;
}

/* Names from the loader alone, copied nowhere (its strings live as long as
 * the object stays loaded): for a frame when no symbolizer could be made. */
static void loader_names(uintptr_t pc, struct gmg_frame_info *out)
{
    struct gmg_frame_info fi = { .pc = pc };
    Dl_info di;
    if (pc && dladdr((void *)(pc - 1), &di)) {
        fi.module = base_name(di.dli_fname);
        fi.module_path = module_path_of(&di);
        fi.offset = pc - (uintptr_t)di.dli_fbase;
        fi.function = di.dli_sname;
    }
    *out = fi;
}

static void symbolize_frame(struct gmg_symbolizer *s, uintptr_t pc, const struct gmg_module *mod,
                            struct gmg_frame_info *out);

void gmg_symbolize(struct gmg_symbolizer *s, uintptr_t pc, const struct gmg_module *mod, struct gmg_frame_info *out)
{
    struct gmg_symbolizer *was = opening;
    opening = s; /* the descriptors libdwfl opens now are s's */
    symbolize_frame(s, pc, mod, out);
    opening = was;
}

static void symbolize_frame(struct gmg_symbolizer *s, uintptr_t pc, const struct gmg_module *mod,
                            struct gmg_frame_info *out)
{
    if (gmg_is_pyframe(pc)) {
        struct gmg_frame_info fi = { .pc = pc, .python = 1 };
        if (!gmg_py_frame(pc, &fi.function, &fi.file, &fi.line))
            fi.function = "??";
        if ((fi.left_out = gmg_py_left_out(pc)))
            fi.line = 0;
        *out = fi;
        return;
    }
    if (__builtin_expect(!s, 0)) { /* out of memory for a symbolizer (get gave NULL) */
        loader_names(pc, out);
        return;
    }
    if (mod && pc && !still_loaded(s, mod, pc - 1)) {
        symbolize_unloaded(s, pc, mod, out);
        return;
    }
    struct entry *e = NULL;
    HASH_FIND(hh, s->cache, &pc, sizeof pc, e);
    if (e) {
        *out = e->info;
        s->dynamic += !s->dwfl; /* (cached only after the modules were tried) */
        return;
    }
    struct gmg_frame_info fi = { .pc = pc };
    unsigned long lost0 = s->lost;
    /* return addresses point after the call: look up the call itself */
    uintptr_t look = pc ? pc - 1 : pc;
    Dl_info di;
    const char *fn = NULL;
    if (dladdr((void *)look, &di)) {
        fi.module = keep(s, base_name(di.dli_fname));
        fi.module_path = keep(s, module_path_of(&di));
        fi.offset = pc - (uintptr_t)di.dli_fbase;
        fn = di.dli_sname;
    }
    Dwfl *dwfl = proc_dwfl(s);
    s->dynamic += !dwfl;
    if (dwfl) {
        Dwfl_Module *m = dwfl_addrmodule(dwfl, look);
        if (m) {
            const char *name = dwfl_module_addrname(m, look);
            if (name)
                fn = name;
            Dwfl_Line *line = dwfl_module_getsrc(m, look);
            if (line) {
                int ln = 0;
                const char *file = dwfl_lineinfo(line, NULL, &ln, NULL, NULL, NULL);
                if (file) {
                    fi.file = keep(s, file);
                    fi.line = ln;
                }
            }
            if (!fi.module) {
                Dwarf_Addr start;
                const char *mname = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
                fi.module = keep(s, base_name(mname));
                fi.module_path = keep(s, mname);
                fi.offset = pc - (uintptr_t)start;
            }
        }
    }
    name_of(s, fn, &fi);
    e = calloc(1, sizeof *e);
    if (e) {
        e->pc = pc;
        e->info = fi;
        if (s->lost == lost0)
            HASH_ADD(hh, s->cache, pc, sizeof pc, e);
        if (s->lost != lost0 || !e->hh.tbl) /* out of memory: not cached, its names kept till the end */
            uncached(s, e);
    }
    *out = fi;
}

static void name_of(struct gmg_symbolizer *s, const char *fn, struct gmg_frame_info *fi)
{
    if (!fn)
        return;
    /* a symbol table's name may carry its version (__libc_start_main@@GLIBC_2.34,
     * memcpy@GLIBC_2.2.5): the function is named without it, in every format */
    const char *at = strchr(fn, '@');
    char *bare = at && at != fn ? strndup(fn, (size_t)(at - fn)) : NULL;
    if (bare)
        fn = bare;
    int status = -1;
    int mangled = fn[0] == '_' && fn[1] == 'Z';
    if (mangled && !s->demangle_tried) {
        s->demangle_tried = 1;
        s->demangle = find_demangler();
    }
    char *dm = (mangled && s->demangle) ? s->demangle(fn, NULL, NULL, &status) : NULL;
    fi->function = (dm && status == 0) ? dm : keep(s, fn);
    if (fi->function != dm)
        free(dm);
    free(bare);
}

void gmg_symbolizer_free(struct gmg_symbolizer *s)
{
    if (!s)
        return;
    struct entry *e, *tmp;
    HASH_ITER(hh, s->cache, e, tmp) {
        HASH_DEL(s->cache, e);
        entry_free(e);
    }
    while ((e = s->uncached) != NULL) {
        s->uncached = e->hh.next;
        entry_free(e);
    }
    /* dwfl_end closes the descriptors it kept: only if they are all still
     * ours. Otherwise the Dwfls are left, unended (their memory, and the
     * descriptors still ours, stay): a number the program took back is
     * never closed under it. */
    int end = fds_still_kept(s);
    if (s->dwfl && end)
        dwfl_end(s->dwfl);
    while (s->offline) {
        struct offline *o = s->offline;
        s->offline = o->next;
        if (o->dwfl && end)
            dwfl_end(o->dwfl);
        free(o);
    }
    while (s->rebuilt) {
        struct rebuilt *r = s->rebuilt;
        s->rebuilt = r->next;
        free(r);
    }
    free(s->fds);
    free(s);
}

/* ------------------------------------------------------------ shared */

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_symbolizer *shared;       /* under shared_mu */
static unsigned long long shared_adds, shared_subs;
static pid_t shared_pid;

static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct gmg_loads *l = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        l->adds = info->dlpi_adds;
        l->subs = info->dlpi_subs;
    }
    return 1; /* the first object says it for all */
}

struct gmg_loads gmg_symbolizer_loads(void)
{
    struct gmg_loads l = { 0, 0 };
    dl_iterate_phdr(count_loads, &l);
    return l;
}

void gmg_symbolizer_own_loads(struct gmg_symbolizer *s, struct gmg_loads mark)
{
    /* a spare holds no lock: `shared` is read only by its holder */
    if (!s || s->spare || s != shared || mark.adds != shared_adds || mark.subs != shared_subs)
        return;
    struct gmg_loads now = gmg_symbolizer_loads();
    if (now.subs == mark.subs)
        shared_adds = now.adds;
}

/* The shared symbolizer, made anew if the process's objects changed since
 * (or in a forked child); shared_mu held. NULL when none can be made. */
static struct gmg_symbolizer *shared_locked(void)
{
    struct gmg_loads l = gmg_symbolizer_loads();
    if (shared && (l.adds != shared_adds || l.subs != shared_subs || shared_pid != getpid() ||
                   !fds_still_kept(shared))) {
        /* the process's objects changed, or the program closed a descriptor of ours */
        gmg_symbolizer_free(shared);
        shared = NULL;
    }
    if (!shared) {
        shared = gmg_symbolizer_new();
        shared_adds = l.adds;
        shared_subs = l.subs;
        shared_pid = getpid();
    }
    return shared;
}

struct gmg_symbolizer *gmg_symbolizer_get(void)
{
    if (pthread_mutex_trylock(&shared_mu) != 0) { /* in use (a report and a refusal at once) */
        struct gmg_symbolizer *own = gmg_symbolizer_new();
        if (own)
            own->spare = 1;
        return own;
    }
    struct gmg_symbolizer *s = shared_locked();
    if (!s)
        pthread_mutex_unlock(&shared_mu);
    return s;
}

/* ------------------------------------------------- the warm-up's pages */

/* What the warm-up read and keeps only to read again: libdw's and libelf's
 * code and read-only data as it ran them (the segments the loader mapped
 * for them, never a mapping of their files the program made), and the
 * images of the files libelf mapped (whole, privately: written only by
 * libelf, under shared_mu, which the caller holds). Their pages that are
 * still the files' own go back to the page cache; a later message maps
 * them again as it touches them (minor faults, microseconds), where
 * reading the modules' DWARF anew would take milliseconds.
 *
 * A page written between its look in pagemap and its drop would lose the
 * write (base/resident.h). Nothing of the guard's writes there; a debugger
 * may, setting a breakpoint while it has the threads stopped: under a
 * tracer the libraries' code is left resident. (A uprobe set on libdw at
 * that very moment would stop firing in this process: that is what
 * remains, and a debugger attached just then.) */
#define IMAGES_MAX 32
#define SEGS_MAX 16
struct warm_pages {
    struct { uintptr_t lo, hi; } segs[SEGS_MAX]; /* the libraries' read-only segments */
    int nsegs;
    uintptr_t images[IMAGES_MAX];
    int nimages;
};

struct lib_at {
    struct warm_pages *w;
    uintptr_t addr;
};

/* The loaded object holding `addr`: its segments without write access,
 * page-aligned. Never the program's own: a program built without PIE that
 * calls the library's function itself has that function's address in its
 * own code (a stub every reference goes through); that library is then
 * left. */
static int lib_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct lib_at *a = arg;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && a->addr >= lo && a->addr < lo + ph->p_memsz;
    }
    if (!mine)
        return 0;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 1; /* the program */
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || a->w->nsegs == SEGS_MAX)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        a->w->segs[a->w->nsegs].lo = lo & ~(pg - 1);
        a->w->segs[a->w->nsegs].hi = (lo + ph->p_memsz + pg - 1) & ~(pg - 1);
        a->w->nsegs++;
    }
    return 1;
}

/* The library holding `fn`. Through dl_iterate_phdr alone, which takes
 * the loader's lock for readers: dlopen, dlsym and dladdr take the one a
 * process's exit takes too (_dl_fini), and a child made without fork
 * handlers (_Fork, a raw clone) just then would never end. */
static void note_lib(struct warm_pages *w, void *fn)
{
    struct lib_at a = { w, (uintptr_t)fn };
    dl_iterate_phdr(lib_segments, &a);
}

/* Where libelf has the file: the start of its image when libelf mapped it
 * (its header is read there in place), else memory of libelf's own, which
 * no mapping of a file starts at. Never elf_rawfile: for a file libelf
 * read instead of mapping, that reads all of it. */
static void note_image(struct warm_pages *w, Elf *e)
{
    char *p = e ? elf_getident(e, NULL) : NULL;
    if (p && w->nimages < IMAGES_MAX)
        w->images[w->nimages++] = (uintptr_t)p;
}

/* Each module's main file that libdwfl opened already (never one it would
 * open now; a separate debug file is left: asking for its DWARF may load
 * it). */
static int module_images(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)userdata, (void)name, (void)start;
    struct warm_pages *w = arg;
    const char *mainfile = NULL;
    Dwarf_Addr bias;
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
    if (mainfile)
        note_image(w, dwfl_module_getelf(mod, &bias));
    return DWARF_CB_OK;
}

static int warm_page_pick(const struct gmg_mapping *m, void *arg)
{
    const struct warm_pages *w = arg;
    if (!m->ino)
        return 0;
    if (m->perms[1] != 'w') /* the loader's mapping of a library's read-only segment */
        for (int i = 0; i < w->nsegs; i++)
            if (m->lo >= w->segs[i].lo && m->hi <= w->segs[i].hi)
                return 1;
    if (m->offset == 0 && m->perms[3] == 'p') /* a private image libelf mapped */
        for (int i = 0; i < w->nimages; i++)
            if (w->images[i] == m->lo)
                return 1;
    return 0;
}

/* A tracer (a debugger, strace) is attached to one of the process's
 * threads, or it cannot be told: each thread's TracerPid. */
static int traced(void)
{
    int dfd = gmg_open_high("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return 1;
    }
    int any = 0, seen = 0;
    struct dirent *e;
    while (!any && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/status", e->d_name);
        if (gmg_read_small(path, buf, sizeof buf) <= 0)
            continue; /* a thread that ended meanwhile */
        const char *t = strstr(buf, "\nTracerPid:");
        any = !t || strtol(t + 11, NULL, 10) != 0;
        seen = 1;
    }
    closedir(d);
    return any || !seen;
}

static void warm_give_back(struct gmg_symbolizer *s)
{
    struct warm_pages w;
    memset(&w, 0, sizeof w);
    if (!traced()) {
        note_lib(&w, (void *)dwfl_begin);
        note_lib(&w, (void *)elf_begin);
    }
    if (s->dwfl)
        dwfl_getmodules(s->dwfl, module_images, &w, 0);
    (void)gmg_resident_give_back(warm_page_pick, &w);
}

void gmg_symbolizer_warm(void)
{
    if (pthread_mutex_trylock(&shared_mu) != 0)
        return; /* a report or refusal holds it: it is being made anyway */
    struct gmg_symbolizer *s = shared_locked();
    if (s) {
        /* the program's entry point: its module's DWARF opened (sections
         * mapped, not read), as most stacks' first frames will need */
        uintptr_t entry = (uintptr_t)getauxval(AT_ENTRY);
        struct gmg_frame_info fi;
        if (entry) {
            gmg_symbolize(s, entry + 1, NULL, &fi);
        } else {
            opening = s;
            proc_dwfl(s);
            opening = NULL;
        }
        warm_give_back(s);
    }
    pthread_mutex_unlock(&shared_mu);
}

void gmg_symbolizer_put(struct gmg_symbolizer *s)
{
    if (!s)
        return;
    if (s->spare) /* (never compared with `shared`: that is read under shared_mu only) */
        gmg_symbolizer_free(s);
    else
        pthread_mutex_unlock(&shared_mu);
}

void gmg_symbolizer_atfork_child(void)
{
    /* another thread may have been using it: the child's copy is left
     * alone (never freed), and the next get makes a new one */
    pthread_mutex_init(&shared_mu, NULL);
    shared = NULL;
}
