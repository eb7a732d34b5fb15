"""Runs one DS-1000 test program beside a candidate, inside the sandbox (stdlib only).

Shipped into the DS-1000 environment image as ``/opt/dlbench/ds1000_runner.py`` and started
by the host once per candidate (``docker exec`` in a locked-down container,
``harness/ds1000.py``); the request (code context, solution, limit) comes on stdin, one JSON
reply goes to stdout.

DS-1000's own evaluation runs ``code_context + "code = <solution>" + "test_execution(code)"``
(``+ "test_string(code)"`` where the context has it) in a fresh process, in a fresh
directory, with a 120 s limit, and counts it passed when it ends without an exception. Its
verdict is the process's fate, which the candidate's code shares: ``os._exit(0)`` or
``sys.exit(0)`` in a solution "passes" a runner that reads the exit status. Here:

- This runner (the parent) never runs anything of the problem's. It forks the test
  program, makes itself non-dumpable first (the program cannot open the parent's
  descriptors or memory through ``/proc``), and reads two pipes: the program's output (kept
  as evidence, never parsed) and the verdict pipe. Its own stdout, the only channel the host
  reads, is closed in the program.
- The program closes every other descriptor, reads the run's nonce from a third pipe into
  a closure, and only then runs the code context. The program is the official one: the
  context's ``test_execution(solution)``, then ``test_string(solution)`` where the context
  calls it, each a plain call; ``exec`` in the context's namespace is the wrapper's, which
  compiles the solution under a file name of its own (so its frames are known) and checks
  the environment after it ran.
- A pass is exactly one message on the verdict pipe, carrying the nonce, written by the
  wrapper after both calls returned and its checks found nothing, followed by the
  program's exit. An exit status, an exception (``SystemExit`` included), printed text, a
  killed parent or a message without the nonce is never a pass.
- An audit hook (PEP 578: it cannot be removed) refuses, to the solution's code: frame and
  heap access (``sys._getframe``, ``tb_frame``, ``gc.get_objects``...: the routes to the
  nonce and to the test's expected values), signals to other processes, new processes,
  ``ctypes``, tracers, opening ``/proc/<pid>/{mem,fd}``, ``/dev/fd`` or the verdict pipe,
  and importing code from writable places. After the solution ran, the comparison's
  functions (the context's own, numpy's, pandas'... ``WATCHED``) must be the ones they were:
  one the solution replaced (with its own code, a builtin under another name, a mock) is a
  violation, and so is a value it left in the test's namespace whose class it defined and
  that claims to equal a fresh object, or that subclasses a library's type.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import functools
import json
import os
import secrets
import selectors
import shutil
import signal
import sys
import sysconfig
import tempfile
import threading
import time
import traceback
import types

CANDIDATE_FILE = "<ds1000 solution>"  # the file name the solution's code is compiled under
CANDIDATE_MODULE = "ds1000_solution"  # its namespace's __name__: the __module__ of what it defines
CONTEXT_FILE = "<ds1000 code_context>"
WORK_ROOT = "/tmp"
OUTPUT_KEEP = 16 * 1024  # head and tail of the program's output kept as evidence
VERDICT_LIMIT = 1 << 20  # a verdict pipe carrying more is not the wrapper's
NONCE_BYTES = 16
_PR_SET_DUMPABLE = 4
# The DS-1000 libraries, and where the comparison's functions live (they and what tests call).
LIBRARIES = ("numpy", "pandas", "scipy", "sklearn", "matplotlib", "seaborn", "PIL", "torch", "tensorflow", "keras")
WATCHED = (*LIBRARIES, "builtins", "math", "operator", "copy", "io", "tokenize", "functools")
# Thin standard-library wrappers the solution could call to act through them (inspect.currentframe...).
TRANSPARENT = ("inspect.py", "traceback.py", "logging/__init__.py", "threading.py", "bdb.py", "pdb.py",
               "ctypes/__init__.py", "ctypes/util.py")  # fmt: skip
# Special methods that make an object stand in for a value: comparisons, truth, arithmetic, conversions.
CONSTRUCTION = frozenset({"__init__", "__new__", "__repr__", "__str__", "__init_subclass__", "__class_getitem__",
                          "__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__annotations__"})  # fmt: skip
SANDBOX_INIT = b"sleep\x00infinity"  # the sandbox container's pid 1 (harness/ds1000.py)
FRAMES = frozenset({"sys._getframe", "sys._current_frames", "gc.get_objects", "gc.get_referrers",
                    "gc.get_referents", "sys.settrace", "sys.setprofile", "sys.addaudithook"})  # fmt: skip
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
PROCESSES = frozenset({"os.kill", "os.killpg", "os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn",
                       "os.spawn", "subprocess.Popen", "pty.spawn", "os.startfile", "signal.pthread_kill"})  # fmt: skip
PROC_PARTS = ("mem", "fd", "fdinfo", "environ", "maps", "pagemap", "task")
# Comparison modules their packages load lazily (numpy 2's np.testing): loaded before the solution
# runs, where their package is, so what it does to them is a change, not a first sight.
COMPARISON_MODULES = ("numpy.testing", "pandas.testing", "scipy.sparse", "torch.testing")


class _Absent:
    """What a snapshot had where it had nothing."""


_ABSENT = _Absent()


class Violation(BaseException):
    """The solution did what a candidate may not: the run is not a pass (BaseException: a
    test's bare ``except Exception`` does not swallow it)."""


# ---------------------------------------------------------------- the parent


def main() -> None:
    request = json.loads(sys.stdin.buffer.read() or b"{}")
    _non_dumpable()
    reply = run(request)
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def _non_dumpable() -> None:
    """The program (and anything it starts) cannot read this process's memory or descriptors."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def run(request: dict) -> dict:
    """Fork the test program, read its pipes within the limit, decide; the reply for the host."""
    work = tempfile.mkdtemp(prefix="ds1000-", dir=request.get("work_root", WORK_ROOT))
    verdict_r, verdict_w = os.pipe()
    output_r, output_w = os.pipe()
    nonce_r, nonce_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the test program: never returns
        for fd in (verdict_r, output_r, nonce_w):
            os.close(fd)
        _program(request, verdict_w, output_w, nonce_r, work)
    for fd in (verdict_w, output_w, nonce_r):
        os.close(fd)
    nonce = secrets.token_hex(NONCE_BYTES)  # made after the fork: the program's memory never held ours
    os.write(nonce_w, nonce.encode())
    os.close(nonce_w)
    verdict, output, timed_out = _collect(pid, verdict_r, output_r, start + float(request.get("timeout_s", 120)))
    status = _reap(pid, timed_out)
    reply = decide(verdict, nonce, status, timed_out)
    reply.update(duration_s=round(time.monotonic() - start, 3), output=_kept(output))
    _clean(pid, work, sweep=bool(request.get("sweep")) and _in_sandbox())
    return reply


def _in_sandbox() -> bool:
    """The sandbox container, whose every other process is the program's to lose: its pid 1 is
    ``sleep infinity`` (never sweep a machine's processes or folders when run elsewhere)."""
    try:
        with open("/proc/1/cmdline", "rb") as fh:
            return fh.read().rstrip(b"\x00") == SANDBOX_INIT
    except OSError:
        return False


def _collect(pid: int, verdict_r: int, output_r: int, deadline: float) -> tuple[bytes, bytearray, bool]:
    """Everything both pipes carry until both close (the program and its descendants gone) or the deadline."""
    verdict, output = b"", bytearray()
    sel = selectors.DefaultSelector()
    sel.register(verdict_r, selectors.EVENT_READ, "verdict")
    sel.register(output_r, selectors.EVENT_READ, "output")
    open_pipes = 2
    while open_pipes:
        left = deadline - time.monotonic()
        if left <= 0:
            return verdict, output, True
        for key, _ in sel.select(min(left, 1.0)):
            chunk = os.read(key.fd, 1 << 16)
            if not chunk:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_pipes -= 1
            elif key.data == "verdict":
                verdict = (verdict + chunk)[: VERDICT_LIMIT + 1]
            else:
                output += chunk
                if len(output) > 2 * OUTPUT_KEEP:  # keep the head and the tail
                    del output[OUTPUT_KEEP : len(output) - OUTPUT_KEEP]
    return verdict, output, False


def _reap(pid: int, timed_out: bool) -> int | None:
    """The program's wait status (None when it had to be killed at the deadline)."""
    if timed_out:
        _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    return None if timed_out else status


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _clean(pid: int, work: str, sweep: bool) -> None:
    """Nothing the program started or wrote outlives it; in the sandbox (``sweep``) every other
    process of the container but its init is killed and the temporary folders are emptied."""
    _kill_group(pid)
    shutil.rmtree(work, ignore_errors=True)
    if not sweep:
        return
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, me, os.getppid()):
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)
    for place in ("/tmp", "/dev/shm"):
        for name in _listdir(place):
            path = os.path.join(place, name)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _kept(output: bytearray) -> str:
    text = output.decode("utf-8", "replace")
    return text if len(text) <= 2 * OUTPUT_KEEP else text[:OUTPUT_KEEP] + "\n[...]\n" + text[-OUTPUT_KEEP:]


def decide(verdict: bytes, nonce: str, status: int | None, timed_out: bool) -> dict:
    """The reply from what the pipes carried (a pure function; the host grades the reply).

    ``outcome``: ``returned`` (both calls returned: the only pass), ``raised`` (a test call
    raised), ``violation`` (the wrapper saw a forbidden act), ``forged`` (the verdict pipe
    carried anything but one message with the nonce), ``no_verdict`` (the program ended
    without one), ``timeout``."""
    if timed_out:
        return {"outcome": "timeout", "tests": {}, "detail": "the test program did not end within its limit"}
    lines = verdict.splitlines()
    if not lines:
        return {"outcome": "no_verdict", "tests": {}, "detail": f"the test program ended without a verdict ({_how(status)})"}  # fmt: skip
    try:
        message = json.loads(lines[0]) if len(lines) == 1 and len(verdict) <= VERDICT_LIMIT else None
    except ValueError:
        message = None
    if not isinstance(message, dict) or not secrets.compare_digest(str(message.get("nonce", "")), nonce):
        return {"outcome": "forged", "tests": {}, "violations": [f"the verdict pipe carried {len(lines)} line(s) that are not the wrapper's one message"]}  # fmt: skip
    tests = {str(k): str(v) for k, v in (message.get("tests") or {}).items()}
    reply = {"tests": tests, "exception": message.get("exception"), "violations": list(message.get("violations") or [])}
    if reply["violations"]:
        return {**reply, "outcome": "violation", "detail": "; ".join(reply["violations"])}
    if not os.WIFEXITED(status or 0) or os.WEXITSTATUS(status or 0) != 0:
        return {**reply, "outcome": "no_verdict", "detail": f"the test program {_how(status)} after its verdict"}
    passed = bool(tests) and all(v == "passed" for v in tests.values())
    return {**reply, "outcome": "returned" if passed else "raised", "detail": message.get("detail")}


def _how(status: int | None) -> str:
    if status is None:
        return "was killed"
    if os.WIFSIGNALED(status):
        return f"was killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"


# ---------------------------------------------------------------- the test program


def _program(request: dict, verdict_w: int, output_w: int, nonce_r: int, work: str) -> None:
    """The child: only the verdict pipe and the output; the nonce in a closure; then the tests."""
    _exit = os._exit
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        keep = {0, 1, 2, verdict_w, nonce_r}
        for fd in _open_fds():
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        nonce = b""
        while len(nonce) < 2 * NONCE_BYTES:
            chunk = os.read(nonce_r, 2 * NONCE_BYTES - len(nonce))
            if not chunk:
                break
            nonce += chunk
        os.close(nonce_r)
        send = _sender(verdict_w, nonce.decode())
        del nonce
        _settle(work)
        wrapper = Wrapper(request["code_context"], request["solution"], verdict_w)
        message = wrapper.run()
        sys.stdout.flush()
        sys.stderr.flush()
        send(message)
    except BaseException:  # noqa: BLE001 - the wrapper's own failure: no verdict, the parent says so
        with contextlib.suppress(BaseException):
            traceback.print_exc()
            sys.stderr.flush()
    _exit(0)


def _open_fds() -> list[int]:
    try:
        return [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


def _sender(fd: int, nonce: str):
    """The one way a message reaches the parent: the nonce lives in this closure alone."""
    write, dumps = os.write, json.dumps

    def send(message: dict) -> None:
        data = (dumps({**message, "nonce": nonce}) + "\n").encode()
        while data:
            data = data[write(fd, data) :]

    return send


def _settle(work: str) -> None:
    """DS-1000 runs in a fresh folder; libraries get writable homes inside it."""
    for name in ("home", "tmp", "mpl"):
        os.makedirs(os.path.join(work, name), exist_ok=True)
    os.environ.update(
        HOME=os.path.join(work, "home"), TMPDIR=os.path.join(work, "tmp"), MPLCONFIGDIR=os.path.join(work, "mpl"),
        MPLBACKEND="Agg", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1",
    )  # fmt: skip
    tempfile.tempdir = None
    os.chdir(work)


class Wrapper:
    """The official test program's calls, with the solution's code watched."""

    def __init__(self, code_context: str, solution: str, verdict_fd: int | None = None):
        self.code_context, self.solution = code_context, solution
        self.verdict = _identity(verdict_fd)
        self.violations: list[str] = []
        self.namespace: dict = {"exec": self.exec}  # the context's exec(code, test_env) comes here
        self.library = _library_prefixes()
        self.guard = Guard(self)
        self.watch = Watch(self)

    def run(self) -> dict:
        sys.addaudithook(self.guard)
        tests: dict[str, str] = {}
        exception = None
        try:
            exec(compile(self.code_context, CONTEXT_FILE, "exec", dont_inherit=True), self.namespace)  # noqa: S102
        except BaseException as exc:  # noqa: BLE001
            return self._message(tests, f"the code context failed: {_describe(exc)}")
        calls = ["test_execution", *(["test_string"] if "test_string(" in self.code_context else [])]
        for name in calls:
            try:
                self.namespace[name](self.solution)
                tests[name] = "passed"
            except BaseException as exc:  # noqa: BLE001 - SystemExit too: an exit is not a pass
                tests[name] = "failed"
                exception = _describe(exc)
                break
        try:
            self.watch.check_threads()
        except Violation:
            pass  # recorded: the message carries it
        return self._message(tests, exception)

    def _message(self, tests: dict[str, str], exception: str | None) -> dict:
        return {"tests": tests, "exception": exception, "violations": list(dict.fromkeys(self.violations))}

    def exec(self, code, globals=None, locals=None):  # noqa: A002 - the builtin's signature
        """The context's ``exec``: the solution's program compiled as the candidate's file, and
        the comparison's functions checked before anything compares its results."""
        if isinstance(code, (str, bytes)):
            code = compile(code, CANDIDATE_FILE, "exec", dont_inherit=True)
        if isinstance(globals, dict):
            globals.setdefault("__name__", CANDIDATE_MODULE)  # not "__main__", as with DS-1000's bare dict
        for name in COMPARISON_MODULES:
            if name.split(".")[0] in sys.modules and name not in sys.modules:
                with contextlib.suppress(Exception):
                    __import__(name)
        before = self.watch.snapshot()
        try:
            builtins.exec(code, globals, locals)
        finally:
            self.watch.check(before, globals)

    def violation(self, what: str) -> None:
        self.violations.append(what)
        raise Violation(what)


# ---------------------------------------------------------------- what the solution is seen doing


def _library_prefixes() -> tuple[str, ...]:
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths |= {p for p in sys.path if p and os.path.isabs(p) and not p.startswith((WORK_ROOT, "/dev/shm"))}
    return tuple(sorted({os.path.realpath(p).rstrip(os.sep) + os.sep for p in paths}))


def _is_candidate(code) -> bool:
    return getattr(code, "co_filename", None) == CANDIDATE_FILE


class Guard:
    """The audit hook of the test program (see the module docstring)."""

    def __init__(self, wrapper: Wrapper):
        self.wrapper = wrapper
        self.busy = False

    def __call__(self, event: str, args: tuple) -> None:
        if self.busy:
            return
        self.busy = True
        try:
            what = self._forbidden(event, args, sys._getframe(1))
        except Exception:  # noqa: BLE001 - the hook must never break a run it does not refuse
            what = None
        finally:
            self.busy = False
        if what:
            self.wrapper.violation(what)

    def _forbidden(self, event: str, args: tuple, frame) -> str | None:  # noqa: ANN001 - the frame that raised it
        if event in FRAMES or (event == "object.__getattr__" and args and args[-1] in FRAME_ATTRIBUTES):
            name = event if event != "object.__getattr__" else f"the {args[-1]} attribute"
            return f"the solution reached {name}" if self._acted(frame) else None
        if event.startswith("ctypes."):
            return f"the solution called {event}" if self._acted(frame) else None
        if event in PROCESSES or event.startswith(("os.exec", "os.spawn")):
            return f"the solution called {event}" if self._on_stack(frame) else None
        if event == "open" and args:
            return self._opened(args[0])
        if event == "compile" and self._acted(frame):
            return "the solution compiled code at run time (exec, eval or compile)"
        if event == "exec" and args and os.path.isabs(name := getattr(args[0], "co_filename", "")):
            if not os.path.realpath(name).startswith(self.wrapper.library):
                return f"the test program ran code from a writable place: {name}"
        return None

    def _opened(self, target: object) -> str | None:
        if isinstance(target, int):
            verdict = self.wrapper.verdict is not None and _identity(target) == self.wrapper.verdict
            return "the test program opened the verdict pipe" if verdict else None
        path = os.fsdecode(target) if isinstance(target, (str, bytes, os.PathLike)) else ""
        if "proc" not in path and "fd" not in path:
            return None
        parts = os.path.realpath(path).split(os.sep)
        if parts[:2] == ["", "proc"] and any(p in PROC_PARTS for p in parts[2:4]) or parts[:3] == ["", "dev", "fd"]:
            return f"the test program opened {path}"
        return None

    def _acted(self, frame) -> bool:  # noqa: ANN001
        """The frame that acted (past thin standard-library wrappers) is the solution's."""
        while frame is not None:
            name = frame.f_code.co_filename
            if not (name.endswith(TRANSPARENT) and name.startswith(self.wrapper.library)):
                return _is_candidate(frame.f_code)
            frame = frame.f_back
        return False

    def _on_stack(self, frame) -> bool:  # noqa: ANN001
        """The solution's code is anywhere on the stack, outside an import (a library it
        imports may set itself up as it likes)."""
        found = False
        while frame is not None:
            if frame.f_code.co_filename.startswith("<frozen importlib"):
                return False
            found = found or _is_candidate(frame.f_code)
            frame = frame.f_back
        return found


def _identity(fd: int | None) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd) if fd is not None else None
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if st else None


class Watch:
    """The comparison's functions, before and after the solution ran."""

    def __init__(self, wrapper: Wrapper):
        self.wrapper = wrapper

    def snapshot(self) -> dict[tuple[str, str, str], object]:
        """(owner kind, owner, name) → value of every callable the comparison may call: the
        context's own, the watched modules', and the methods of the classes they define."""
        found: dict[tuple[str, str, str], object] = {}
        for name, value in list(self.wrapper.namespace.items()):
            if callable(value) and name != "exec":
                found["context", "", name] = value
        classes: dict[int, type] = {}
        for module_name, module in list(sys.modules.items()):
            if module is None or module_name.split(".")[0] not in WATCHED:
                continue
            with contextlib.suppress(Exception):  # an odd module object is not a comparison's home
                for name, value in list(vars(module).items()):
                    if callable(value) or isinstance(value, types.ModuleType):
                        found["module", module_name, name] = value
                    if isinstance(value, type) and str(vars(value).get("__module__", "")).split(".")[0] in WATCHED:
                        classes[id(value)] = value
        for cls in classes.values():
            owner = f"{vars(cls).get('__module__', '')}.{getattr(cls, '__qualname__', '?')}"
            with contextlib.suppress(Exception):
                for name, value in list(vars(cls).items()):
                    found["class", owner, name] = value
        return found

    def check(self, before: dict, env: dict | None) -> None:
        """After the solution's program: what it replaced, and what it left to be compared."""
        after = self.snapshot()
        for key, new in after.items():
            old = before.get(key, _ABSENT)
            if new is not old and self._foreign(key, new, old):
                kind, owner, name = key
                where = f"{owner}.{name}" if owner else f"the test's {name}"
                self.wrapper.violation(f"the solution replaced {where} ({kind})")
        for name, value in list((env or {}).items()):
            if name.startswith("__"):
                continue
            for item in _items(value):
                problem = self._disguised(item)
                if problem:
                    self.wrapper.violation(f"the solution left {name} as {problem}")
        self.check_threads()

    def check_threads(self) -> None:
        for thread in threading.enumerate():
            target = getattr(getattr(thread, "_target", None), "__code__", None)
            if _is_candidate(target) or _is_candidate(getattr(type(thread).run, "__code__", None)):
                self.wrapper.violation("the solution started a thread")

    def _foreign(self, key: tuple[str, str, str], value: object, old: object = _ABSENT) -> bool:
        """A replacement that is not a library's own doing (a lazy import rebinding a name). A
        class attribute first seen now (a class imported meanwhile) counts only when it is the
        solution's code: library classes keep builtins under other names (an enum's ``__new__``).
        A function replaced by another of another name (``assert_array_equal = np.asarray``) counts."""
        if key[0] == "context":
            return True  # the context's functions are rebound by nothing but the solution
        if old is _ABSENT and key[0] == "class":
            return _made_by_candidate(value)
        named = getattr(old, "__name__", None) if callable(old) else None
        if (
            isinstance(named, str)
            and getattr(value, "__name__", None) != named
            and not isinstance(value, types.ModuleType)
        ):
            return True
        if isinstance(value, types.ModuleType):
            return sys.modules.get(value.__name__) is not value  # a stand-in, not what the import system loaded
        if _made_by_candidate(value):
            return True
        module = str(getattr(type(value), "__module__", ""))
        if module.startswith("unittest.mock") or isinstance(value, functools.partial):
            return True
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if code is not None:
            return not os.path.realpath(code.co_filename).startswith(self.wrapper.library)
        if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            return getattr(value, "__name__", None) != key[2]  # print standing in for assert_allclose
        return False

    def _disguised(self, value: object) -> str | None:
        """A value of the solution's own class that could stand in for a result: one deriving
        from a library's or a builtin value type, one with special methods beyond construction
        and representation, or one that claims to equal a fresh object."""
        cls = type(value)
        if not _class_by_candidate(cls):
            return None
        bases = [b for b in cls.__mro__[1:] if b is not object and not _class_by_candidate(b)]
        if bases:
            return f"an object of its own subclass of {bases[0].__module__}.{bases[0].__qualname__}"
        special = sorted(
            n for b in cls.__mro__ if b is not object for n in vars(b) if n.startswith("__") and n not in CONSTRUCTION
        )
        if special:
            return f"an object of its own class defining {', '.join(special[:3])}"
        try:
            equal = bool(value == _Stranger())
        except Violation:
            raise
        except BaseException:  # noqa: BLE001 - a comparison that fails claims nothing
            equal = False
        return "an object that claims to equal anything" if equal else None


class _Stranger:
    """An object nothing honest equals."""


def _items(value: object) -> list[object]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return [value, *list(value)[:1000]]
    if isinstance(value, dict):
        return [value, *list(value.values())[:1000]]
    return [value]


def _class_by_candidate(cls: type) -> bool:
    """A class the solution defined: its module is the solution's namespace, or (a namespace
    without one) its own methods are the solution's code; a library's class is never one."""
    module = str(getattr(cls, "__module__", ""))
    if module == CANDIDATE_MODULE:
        return True
    if module.split(".")[0] in WATCHED:
        return False
    return any(_is_candidate(getattr(getattr(v, "__func__", v), "__code__", None)) for v in vars(cls).values())


def _made_by_candidate(value: object) -> bool:
    """Code the solution wrote: its function, a method of its class, its class or an instance of one."""
    func = getattr(value, "__func__", value)
    if _is_candidate(getattr(func, "__code__", None)):
        return True
    if isinstance(value, type):
        return _class_by_candidate(value)
    return _class_by_candidate(type(value))


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 2000 else text[:2000] + "..."


if __name__ == "__main__":
    main()
