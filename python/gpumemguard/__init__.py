"""gpumemguard: the GPU memory guard for CUDA programs, from Python.

The package carries the library (libgpumemguard.so), the `gpumemguard`
command and the libraries they need. `gpumemguard -- python train.py` (or
`python -m gpumemguard -- python train.py`) runs a program under the guard;
`pytest --gpumem` runs a test session under it (see pytest_plugin).

In a process the guard is loaded into, `Guard()` reads it through its public
C API (gpumemguard.h): bytes in use, the peak window, what was allocated
since a mark.
"""
import ctypes
import os

SINCE_NO_POOLS = 1  # GPUMEMGUARD_SINCE_NO_POOLS of gpumemguard.h

__all__ = ["Guard", "GuardNotLoaded", "command_path", "library_path", "format_size", "__version__"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_NATIVE = os.path.join(_HERE, "_native")


def _read_version():
    try:
        with open(os.path.join(_HERE, "VERSION")) as f:
            return f.read().strip()
    except OSError:
        return "unknown"


__version__ = _read_version()


def command_path():
    """The bundled `gpumemguard` command (it finds the library beside it)."""
    return os.path.join(_NATIVE, "gpumemguard")


def library_path():
    """The bundled libgpumemguard.so, for LD_PRELOAD."""
    return os.path.join(_NATIVE, "libgpumemguard.so")


def format_size(n):
    """A size as the guard's reports write it: "3.0 MiB (3145728 bytes)"."""
    if n < 1024:
        return "1 byte" if n == 1 else "%d bytes" % n
    v, units = n / 1024.0, ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    u = 0
    while v >= 1023.95 and u < len(units) - 1:  # 1048575 bytes: 1.0 MiB, never 1024.0 KiB
        v /= 1024.0
        u += 1
    return "%.1f %s (%d bytes)" % (v, units[u], n)


class GuardNotLoaded(RuntimeError):
    """The process does not run under the guard."""


class Guard(object):
    """The guard's public C API in this process, found as dlsym(RTLD_DEFAULT)
    finds it (the library is preloaded: it is in the global scope)."""

    MAX_DEVICES = 64

    def __init__(self):
        lib = ctypes.CDLL(None)
        try:
            lib.gpumemguard_peak_reset
        except AttributeError:
            raise GuardNotLoaded("libgpumemguard.so is not loaded in this process "
                                 "(run it with `gpumemguard -- ...` or LD_PRELOAD)")
        ull, c_int = ctypes.c_ulonglong, ctypes.c_int
        self._lib = lib
        sig = {
            "gpumemguard_version": (ctypes.c_char_p, []),
            "gpumemguard_live_bytes": (ull, [c_int]),
            "gpumemguard_limit": (ull, [c_int]),
            "gpumemguard_dump": (c_int, []),
            "gpumemguard_peak_reset": (None, []),
            "gpumemguard_peak": (ull, [c_int]),
            "gpumemguard_peak_growth": (ull, [c_int]),
            "gpumemguard_mark": (c_int, []),
            "gpumemguard_mark_release": (c_int, [c_int]),
            "gpumemguard_since": (c_int, [c_int, c_int, c_int, ctypes.POINTER(ull), ctypes.POINTER(ull)]),
            "gpumemguard_since_text": (ctypes.c_long, [c_int, c_int, c_int, c_int, ctypes.c_char_p, ctypes.c_ulong]),
            "gpumemguard_parse_size": (c_int, [ctypes.c_char_p, ctypes.POINTER(ull), ctypes.c_char_p, ctypes.c_ulong]),
        }
        for name, (res, args) in sig.items():
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        try:  # a library older than this package has no gpumemguard_peak_text
            self._peak_text = lib.gpumemguard_peak_text
            self._peak_text.restype = ctypes.c_long
            self._peak_text.argtypes = [c_int, c_int, ctypes.c_char_p, ctypes.c_ulong]
        except AttributeError:
            self._peak_text = None
        try:  # nor gpumemguard_refusals
            self._refusals = lib.gpumemguard_refusals
            self._refusals.restype = c_int
            self._refusals.argtypes = [c_int, ctypes.POINTER(ull), ctypes.POINTER(ull)]
        except AttributeError:
            self._refusals = None

    @staticmethod
    def loaded():
        """Whether the guard is loaded in this process."""
        try:
            ctypes.CDLL(None).gpumemguard_peak_reset
            return True
        except AttributeError:
            return False

    def version(self):
        return self._lib.gpumemguard_version().decode()

    def live_bytes(self, device=-1):
        """Bytes of the allocations held now, as the quota counts them; device -1: every device."""
        return self._lib.gpumemguard_live_bytes(device)

    def limit(self, device=0):
        """The quota of a device in bytes (under GPUMEM_GROUP the group's
        budget); 0 when there is none."""
        return self._lib.gpumemguard_limit(device)

    def dump(self):
        """Write a report now, as SIGUSR1 does (GPUMEM_REPORT's place and
        format); False when this process cannot (a child made without fork
        handlers, whose table is its parent's)."""
        return self._lib.gpumemguard_dump() == 0

    def refusals(self, device=-1):
        """(quota, driver): allocations refused since start-up, by the quota
        and by the driver itself (out of memory); device -1: every device and
        pinned host memory. (0, 0) where the library lacks it."""
        if self._refusals is None:
            return 0, 0
        q, d = ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)
        if self._refusals(device, ctypes.byref(q), ctypes.byref(d)) != 0:
            raise ValueError("gpumemguard: no device %r" % (device,))
        return q.value, d.value

    def parse_size(self, text):
        """Bytes of a size written as GPUMEM_LIMIT takes one ("512MiB", "512 MiB", "1.5G");
        ValueError with the parser's reason otherwise."""
        out = ctypes.c_ulonglong(0)
        err = ctypes.create_string_buffer(512)
        if not isinstance(text, str):
            raise ValueError("a size is a string such as '512MiB', not %r" % (text,))
        try:
            raw = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: no size
            raise ValueError("%r is not a size" % (text,))
        if b"\0" in raw:  # the parser would read up to it only
            raise ValueError("%r is not a size (it holds a NUL character)" % (text,))
        if self._lib.gpumemguard_parse_size(raw, ctypes.byref(out), err, len(err)) != 0:
            raise ValueError(err.value.decode(errors="replace"))
        return out.value

    def peak_reset(self):
        self._lib.gpumemguard_peak_reset()

    def peak(self, device=-1):
        return self._lib.gpumemguard_peak(device)

    def peak_growth(self, device=-1):
        """How far the bytes in use rose above the window's start at most."""
        return self._lib.gpumemguard_peak_growth(device)

    def mark(self):
        m = self._lib.gpumemguard_mark()
        if m < 0:
            raise RuntimeError("gpumemguard: no mark left (64 held)")
        return m

    def mark_release(self, mark):
        self._lib.gpumemguard_mark_release(mark)

    def since(self, mark, device=-1, pools=True):
        """(bytes, count) of the allocations made since the mark, still live;
        pools=False leaves out caching pools' segments (retained, not leaks)."""
        b, n = ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)
        flags = 0 if pools else SINCE_NO_POOLS
        if self._lib.gpumemguard_since(mark, device, flags, ctypes.byref(b), ctypes.byref(n)) != 0:
            raise ValueError("gpumemguard: mark %r is not held by this process" % (mark,))
        return b.value, n.value

    def peak_text(self, device=-1, max_groups=-1):
        """What was live at the window's peak (the test's own allocations and
        what was in use before it), grouped by stack, biggest first, as text;
        device -1: the device that rose most. "" where the library lacks it."""
        if self._peak_text is None:
            return ""
        size = 16384
        while True:
            buf = ctypes.create_string_buffer(size)
            need = self._peak_text(device, max_groups, buf, len(buf))
            if need < 0:
                raise ValueError("gpumemguard: no device %r" % (device,))
            if need < size:
                return buf.value.decode(errors="replace")
            size = need + 4096

    def since_text(self, mark, device=-1, max_groups=-1, pools=True):
        """Those allocations grouped by stack, biggest first, as text."""
        flags = 0 if pools else SINCE_NO_POOLS
        size = 16384
        while True:  # other threads may allocate meanwhile: until the text fits
            buf = ctypes.create_string_buffer(size)
            need = self._lib.gpumemguard_since_text(mark, device, flags, max_groups, buf, len(buf))
            if need < 0:
                raise ValueError("gpumemguard: mark %r is not held by this process" % (mark,))
            if need < size:
                return buf.value.decode(errors="replace")
            size = need + 4096
