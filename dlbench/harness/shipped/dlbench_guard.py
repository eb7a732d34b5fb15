"""What a candidate's process may read, and what it is seen doing (runs inside the sandbox).

Standalone (stdlib only): shipped into every image beside the supervisor and the plugin.

``hide``     Landlock (Linux ≥ 5.13, no privilege needed: a process may only ever restrict
             itself, and ``no-new-privileges`` is already set) makes the original checkout
             unreadable to the candidate's process and everything it starts: the reference
             definition lives there. The candidate runs in a copy whose target module holds
             its own code instead; large data files the copy links to stay readable.
``Audit``    a PEP 578 audit hook (it cannot be removed from inside Python) that attributes
             what it sees to the innermost frame that is neither a library nor the harness:
             code run from a writable place outside the copy's own tree, source compiled at
             run time by candidate code, the task's test files opened by candidate code, new
             Python files written by it, and heap walks (``gc``) or tracers it starts. Each
             becomes an event the host grades (``foreign_code`` is screened there like the
             candidate; ``observed`` counts unless gold's run of the task showed the same).
"""

from __future__ import annotations

import ctypes
import os
import sys
import sysconfig

# Landlock ABI v1 (linux/landlock.h): enough to deny reading.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # x86_64 and aarch64 share these numbers
_READ_FILE, _READ_DIR = 1 << 2, 1 << 3
# Moving or linking a file to another folder: any Landlock ruleset refuses it (EXDEV) unless
# it handles this right (ABI 2) and grants it where the file comes from and goes to.
_REFER = 1 << 13
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1
_PR_SET_NO_NEW_PRIVS = 38
SOURCE_LIMIT = 100_000  # of a foreign module's source sent to the host's screen (the screen's own limit)
CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".so", ".pth", ".pyd")
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")
WRITE_MODES = frozenset("wax+")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND
# Audit events that reach the test process's own objects or every frame: gold's code has no
# use for them from the task's module (a test's own use is the test's business).
INTROSPECTION = frozenset(
    {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames", "sys.settrace", "sys.setprofile",
     "sys.addaudithook", "ctypes.dlopen", "ctypes.dlsym", "ctypes.addressof", "ctypes.cdata"}
)  # fmt: skip


WATCHED = INTROSPECTION | {"exec", "compile", "open", "os.rename"}
# What a frame's code is, for attributing an event (``Audit._by_candidate``).
LIBRARY, CANDIDATE, FOREIGN, PROJECT = range(4)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is not there (or a seccomp filter refuses it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def readable_roots(hidden: list[str]) -> list[str]:
    """The fewest whole subtrees that cover every path except those under ``hidden``
    (real paths): every entry of each folder on the way down to a hidden one, but that."""
    hidden = [os.path.realpath(h) for h in hidden]
    roots: list[str] = []

    def walk(folder: str) -> None:
        for entry in sorted(_listdir(folder)):
            path = os.path.join(folder, entry)
            if path in hidden:
                continue
            if any(h.startswith(path + os.sep) for h in hidden) and not os.path.islink(path) and os.path.isdir(path):
                walk(path)
            else:
                roots.append(path)

    walk("/")
    return roots


def hide(readable: list[str], keep: list[str]) -> int:
    """Make everything but ``readable`` (``readable_roots`` of what is hidden) unreadable for
    this process and its descendants (``keep``: hidden files that stay readable). The
    Landlock ABI used, or 0 when the kernel offers none."""
    if landlock_abi() < 1:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # TensorFlow saves a checkpoint by renaming it out of a temporary folder (DeepReg)
    rights = _READ_FILE | _READ_DIR | (_REFER if landlock_abi() >= 2 else 0)
    handled = ctypes.c_uint64(rights)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path in readable:
            _allow(libc, ruleset, path, rights)
        for path in keep:
            _allow(libc, ruleset, path, _READ_FILE)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return landlock_abi()


def _allow(libc, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # gone meanwhile, or not ours to open: it stays unreadable
    try:
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        rule = _PathBeneath(access if is_dir else access & _READ_FILE, fd)
        libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0)
    finally:
        os.close(fd)


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def library_prefixes(support_dir: str, own: tuple[str, ...]) -> tuple[str, ...]:
    """The environment's code: the standard library, installed packages, the harness, and
    every import path set before any candidate runs but the project's (``own``: the checkout
    and the work folder; the local backend may have libraries under /tmp on its PYTHONPATH)."""
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    own = tuple(os.path.realpath(o) for o in own)
    paths |= {p for p in sys.path if p and not os.path.realpath(p).startswith(own)}
    both = {
        form(p).rstrip(os.sep) + os.sep
        for p in (*paths, support_dir)
        if p
        for form in (os.path.abspath, os.path.realpath)
    }
    return tuple(sorted(both))  # as written (code objects' file names) and resolved


def _importing() -> bool:
    """The source being compiled is a module the import system loads (its file: ``exec`` rule)."""
    frame = sys._getframe()
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


def _identity(fd: int | None) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd) if fd is not None else None
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if st else None


def _writes(mode: object = "r", flags: object = 0) -> bool:
    """An ``open`` audit event's mode (``open()``) or flags (``os.open``, mode None) ask to write."""
    if isinstance(mode, str):
        return bool(WRITE_MODES & set(mode))
    return isinstance(flags, int) and bool(flags & WRITE_FLAGS)


class Audit:
    """The audit hook of one candidate's process (see the module docstring).

    ``copy``: the run's copy of the repository; ``candidate``: its files holding candidate
    code; ``tests``: the task's test files; ``scratch``: folders of the copy where anything
    may be written (tmp, home, basetemp); ``writable``: the other writable places;
    ``library``: ``library_prefixes``; ``report_fd``: the pipe the verdict's events travel on."""

    def __init__(self, send, copy, candidate, tests, scratch, writable, library, report_fd=None):  # noqa: ANN001
        self.send = send
        self.copy = os.path.realpath(copy) + os.sep
        self.candidate = frozenset(os.path.join(copy, c) for c in candidate)
        self.tests = frozenset(os.path.join(copy, t) for t in tests)
        self.scratch = tuple(os.path.realpath(s) + os.sep for s in scratch)
        self.writable = tuple(os.path.realpath(w) + os.sep for w in writable)
        self.library = library  # library_prefixes: the environment's code
        self.report = _identity(report_fd)  # the report pipe: candidate code has no business opening it
        self.resolved: dict[str, str] = {}  # path → real path (lstat is slow on overlay file systems)
        self.kinds: dict[object, int] = {}  # code object → LIBRARY, CANDIDATE, FOREIGN or PROJECT
        self.in_call = False  # between a test's call phase start and end (set by the plugin)
        self.seen: set[str] = set()
        self.busy = False

    def __call__(self, event: str, args: tuple) -> None:
        if self.busy or event not in WATCHED:  # nor what the hook itself does (reading a source, sending)
            return
        self.busy = True
        try:
            self._event(event, args)
        except Exception:  # noqa: BLE001,S110 - the hook must never break the run it watches
            pass
        finally:
            self.busy = False

    def _event(self, event: str, args: tuple) -> None:
        if event == "exec" and args and hasattr(args[0], "co_filename"):
            self._executed(args[0].co_filename)
        elif (
            event == "compile"
            and args
            and isinstance(args[0], (str, bytes))
            and not _importing()
            and self._by_candidate()
        ):
            self._foreign("<compiled at run time>", args[0])
        elif (
            event == "open" and args and isinstance(args[0], int) and self._is_report(args[0]) and self._by_candidate()
        ):
            self._observe(f"candidate code opened the report pipe (file descriptor {args[0]})")
        elif event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            self._opened(os.fsdecode(args[0]), _writes(*args[1:3]))
        elif event == "os.rename" and len(args) > 1 and isinstance(args[1], (str, bytes, os.PathLike)):
            self._opened(os.fsdecode(args[1]), True)  # a file written under another name, then renamed
        elif event in INTROSPECTION and self._by_candidate():
            self._observe(f"candidate code called {event}")

    def _is_report(self, fd: int) -> bool:
        """``fd`` is the report pipe, or a duplicate of it (a temporary file's descriptor is not)."""
        return self.report is not None and _identity(fd) == self.report

    def _executed(self, filename: str) -> None:
        """Module code run from a file: one in a writable place outside the copy's own tree
        is screened on the host like the candidate (compiled files cannot be: a violation)."""
        if self.in_library(filename):  # the environment's own modules: most of them
            return
        path = self.real(filename) if os.path.isabs(filename) else ""
        if not path or not self.foreign_place(path) or path in self.seen:
            return
        self.seen.add(path)
        if not path.endswith(".py"):
            self._observe(f"ran compiled code from a writable place: {filename}")
            return
        try:
            with open(path, "rb") as fh:
                source = fh.read(SOURCE_LIMIT + 1)
        except OSError:
            source = b""
        self._foreign(filename, source)

    def _opened(self, path: str, writing: bool) -> None:
        if self.in_library(path):  # the environment's own files: most opens
            return
        full = self.real(path)
        if writing and full.endswith(CODE_SUFFIXES) and self.foreign_place(full) and self._by_candidate():
            self._observe(f"candidate code wrote a code file: {path}")
        elif full.endswith(COMPILED_SUFFIXES) and self.foreign_place(full) and self._by_candidate():
            self._observe(f"candidate code loaded compiled code from a writable place: {path}")
        elif not writing and self.in_call and full in self.tests and self._by_candidate():
            self._observe(f"candidate code read the task's test file {os.path.relpath(full, self.copy)}")

    def foreign_place(self, path: str) -> bool:
        """In a writable place, and not a file of the copy's own tree (its scratch excepted)."""
        if path.startswith(self.copy) and not path.startswith(self.scratch) or path.startswith(self.library):
            return False
        return path.startswith(self.writable + self.scratch + (self.copy,))

    def _by_candidate(self) -> bool:
        """The innermost frame that is not library or harness code runs candidate code (the
        task's patched module, or code run from a writable place)."""
        frame = sys._getframe()
        while frame is not None:
            kind = self.kinds.get(frame.f_code)
            if kind is None:
                kind = self.kinds[frame.f_code] = self._kind(frame.f_code.co_filename)
            if kind != LIBRARY:
                return kind != PROJECT
            frame = frame.f_back
        return False

    def _kind(self, name: str) -> int:
        """LIBRARY also for generated code (dataclasses, namedtuple: ``<string>``): it is passed through."""
        if name in self.candidate:
            return CANDIDATE
        if name.startswith("<") or self.in_library(name) or self.real(name).startswith(self.library):
            return LIBRARY
        return FOREIGN if self.foreign_place(self.real(name)) else PROJECT

    def in_library(self, path: str) -> bool:
        """Plainly under the environment's code, told from the text alone (no ``..`` or ``.``
        segment, which could lead out of it; anything else is resolved first)."""
        return path.startswith(self.library) and "/." not in path

    def real(self, path: str) -> str:
        found = self.resolved.get(path)
        if found is None:
            found = self.resolved[path] = os.path.realpath(path)
        return found

    def origin(self, filename: str) -> str | None:
        """Where code of ``filename`` comes from, when that is the candidate: its file (relative
        to the copy) or a writable place outside the copy's own tree; None otherwise."""
        if filename in self.candidate:
            return os.path.relpath(filename, self.copy)
        if os.path.isabs(filename) and not self.in_library(filename) and self.foreign_place(self.real(filename)):
            return filename
        return None

    def _foreign(self, filename: str, source: str | bytes) -> None:
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        self.send(
            {"ev": "foreign_code", "file": filename, "source": text[:SOURCE_LIMIT], "cut": len(text) > SOURCE_LIMIT}
        )

    def _observe(self, what: str) -> None:
        if what not in self.seen:
            self.seen.add(what)
            self.send({"ev": "observed", "what": what})
