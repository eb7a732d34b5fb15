"""pytest plugin that streams per-test outcomes to the supervisor (runs inside the sandbox).

Standalone on purpose (stdlib, pytest and the shared ``protocol``): it is shipped into the image as trusted support
code (``/opt/dlbench``) and loaded by the supervisor *before* any project module, so the
references it checks are captured before candidate code can run.

Each event is one JSON line written to an inherited pipe (never to stdout, which the
candidate shares): ``hello`` (before pytest starts), ``collect_error``, ``collected``, one
``report`` per test phase as it happens, ``tamper`` when a watched pytest internal has been
replaced since ``hello``, and ``finish``. The host grades from these events only.
It also keeps only the items under the task's node ids (so an id pytest cannot find is a
missing test, not an aborted session), reports which of them the project's own
configuration deselected (``deselected``), neutralises the options of the project's
``addopts`` that conflict with the harness (``config`` names them), sets the traceback
style (the terminal reporter is off) and seeds the random generators before each test.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import importlib
import inspect
import io
import itertools
import json
import keyword
import linecache
import operator
import os
import random
import sys
import time
import types
import warnings
from collections.abc import Iterator, Mapping

import _pytest.python
import _pytest.reports
import _pytest.runner
import pluggy
import pytest

try:  # in the image: shipped beside this file (harness/code.py)
    from dlbench_protocol import OPERATION_PROTOCOLS, selects
except ModuleNotFoundError:  # run from the dlbench package (local backend, tests)
    from dlbench.harness.protocol import OPERATION_PROTOCOLS, selects

_FD: int | None = None
_WRITE = os.write  # captured before candidate code can replace os.write
_NOW = time.monotonic  # and before a test freezes time (freezegun)
# what _same compares namespaces with, captured before candidate code can replace a builtin
# or operator's function (both are compared-with modules: the comparison must not be theirs)
_ALL, _MAP, _LEN, _LIST, _ZIP, _IS = all, map, len, list, zip, operator.is_
_VALUE, _VALUES = operator.itemgetter(1), operator.methodcaller("values")
_CHAIN = itertools.chain.from_iterable
# what _wrapper_maker compiles a wrapper with, captured before candidate code can replace them
_COMPILE, _EXEC, _KEYWORDS = compile, exec, frozenset(keyword.kwlist)
_INFINITY = float("inf")
_BASELINE: dict[str, str] = {}
TEXT_LIMIT = 4000  # of a failure's traceback kept in its event: its tail, and the error lines before it
TEXT_TAIL = 3000
_SELECTED: list[str] = []
_BEFORE: list[str] = []  # selected ids before the project's own pytest_collection_modifyitems
_DESELECTED: set[str] = set()
_SEED: list[int | None] = [None]  # evaluate.test_seed, from attach
_DEVICES: list[bool | None] = [None]  # torch sees a CUDA, XPU or MPS device (_torch_seeder), once a process
_NEUTRALISED: list[str] = []
_AUDIT: list = [None]  # the child's audit hook (dlbench_guard.Audit): told when a test's call phase runs
_TYPE_MODULE, _TYPE_QUALNAME = type.__dict__["__module__"], type.__dict__["__qualname__"]
_TYPE_FLAGS, _TYPE_DICT = type.__dict__["__flags__"], type.__dict__["__dict__"]
HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code, whose attributes can be set
_INNER: dict[int, tuple] = {}  # id → (plugin manager, its hook executor when this plugin was registered)
_OBSERVED: set[str] = set()
_BUILD_CLASS = builtins.__build_class__  # the interpreter's, before attach puts _build_class in its place
_WATCHED_CLASSES: list[type] = []  # classes candidate code defined, their comparisons watched (_build_class)
_TARGET: list[str | None] = [None]  # ``path:qualname`` of the task's function
_IMPORT_S = [0.0]  # seconds the child spent executing the repository's own modules, up to collection
_LOOKED: dict[str, dict[str, tuple[int, bool, bool]]] = {}  # namespace → attribute → (id, callable, module) last seen
_UNCHANGED_SINCE: dict[str, tuple[list, list]] = {}  # namespace → its items last examined ("": all)
_SIZES: list[int] = []  # each namespace's size when all were last examined (_foreign_attributes)
_CLASSES: dict[str, tuple[list, list]] = {}  # compared module → (its items, its classes) (_class_namespaces)
_CONFIG: list[pytest.Config | None] = [None]
SUBTEST_REPORTS = frozenset({"SubtestReport", "SubTestReport"})  # pytest 9's own, pytest-subtests'
_SUBTESTS_FAILED: dict[str, pytest.TestReport] = {}  # node id → its first failing subtest's report
_ALIASES: dict[str, str] = {}  # node id pytest collected → the listed test's case it stands for
_INTERNAL: list[str] = []  # message, then the traceback's files, of an INTERNALERROR before collection
_COLLECTED_SENT: list[bool] = []  # non-empty once the ``collected`` event went out
_BROKEN: list[tuple[str, str]] = []  # (path, error) of the conftest that stopped the last session


def pytest_internalerror(excrepr, excinfo) -> None:  # noqa: ANN001 - pytest's types
    """Keep the files of an INTERNALERROR's traceback, before any test was collected: the
    supervisor sets aside a plugin that raised it (``internal_error``)."""
    if not _COLLECTED_SENT:
        _INTERNAL[:] = [excinfo.exconly()[:500], *(str(entry.path) for entry in excinfo.traceback)]


def internal_error() -> tuple[str, list[str]] | None:
    """(message, files of its traceback) of the INTERNALERROR that ended the last session (and forget it)."""
    found = (_INTERNAL[0], _INTERNAL[1:]) if _INTERNAL else None
    _INTERNAL.clear()
    return found


def broken_conftest() -> tuple[str, str] | None:
    """The conftest whose import ended the last ``pytest.main`` (and forget it)."""
    found = _BROKEN[0] if _BROKEN else None
    _BROKEN.clear()
    return found


def _pluggy_internals() -> tuple[type, object]:
    """(the hook caller class, ``_multicall``) of pluggy 0.13 (pytest 6) to 1.x."""
    for hooks, callers in (("pluggy._hooks", "pluggy._callers"), ("pluggy.hooks", "pluggy.callers")):
        try:
            hooks_module, callers_module = importlib.import_module(hooks), importlib.import_module(callers)
        except ImportError:
            continue
        caller = getattr(hooks_module, "HookCaller", None) or hooks_module._HookCaller
        return caller, callers_module._multicall
    raise ImportError(f"pluggy {getattr(pluggy, '__version__', '?')} has neither _hooks nor hooks")


_HOOK_CALLER, _MULTICALL = _pluggy_internals()  # what every plugin manager calls hooks through


# Modules whose functions tests compare with or pytest reports through: one of their
# attributes holding candidate code or a mock object is reported (``observed``).
COMPARED_MODULES = (
    "builtins", "math", "operator", "pytest", "_pytest.python_api", "_pytest.approx", "_pytest.outcomes", "unittest", "unittest.case",
    "numpy", "numpy.testing", "numpy.testing._private.utils", "torch", "torch.testing", "torch.testing._comparison",
)  # fmt: skip
# Options a project's ``addopts`` may hold that conflict with the harness: the terminal
# reporter and the cache are off, every listed test runs once, in this process, with no
# files written for reports. (Flags take no value; valued ones take ``=v`` or the next token.)
DROP_FLAGS = frozenset(
    {
        "--verbose", "--quiet", "--showlocals", "--no-showlocals", "--no-header", "--no-summary", "--no-fold-skipped",
        "--force-short-summary", "--full-trace", "--fulltrace", "--disable-warnings", "--disable-pytest-warnings",
        "--xfail-tb", "--exitfirst", "--strict-markers", "--strict", "--strict-config", "--lf", "--last-failed",
        "--ff", "--failed-first", "--nf", "--new-first", "--lfnf", "--sw", "--stepwise", "--sw-skip",
        "--stepwise-skip", "--sw-reset", "--stepwise-reset", "--cache-clear", "--collect-only", "--co",
        "--setup-only", "--setup-plan", "--setup-show", "--pdb", "--trace", "--looponfail", "--cov-append",
        "--no-cov", "--no-cov-on-fail", "--instafail", "--forked", "--pastebin",
    }
)  # fmt: skip
DROP_VALUED = frozenset(
    {
        "--color", "--code-highlight", "--tb", "--show-capture", "--durations", "--durations-min", "--verbosity",
        "--report-chars", "--maxfail", "--last-failed-no-failures", "--cov", "--cov-report", "--cov-config",
        "--cov-fail-under", "--cov-context", "--numprocesses", "--dist", "--maxprocesses", "--max-worker-restart",
        "--tx", "--rsyncdir", "--junitxml", "--junit-xml", "--junit-prefix", "--html", "--json-report-file",
        "--reruns", "--reruns-delay", "--only-rerun", "--cache-show", "--pdbcls", "--result-log",
    }
)  # fmt: skip
DROP_SHORT_FLAGS = "vqlx"
DROP_SHORT_VALUED = "rn"


def _watched() -> dict[str, object]:
    """Objects whose replacement would let code turn failures into passes."""
    return {
        "runner.call_and_report": _pytest.runner.call_and_report,
        "runner.runtestprotocol": _pytest.runner.runtestprotocol,
        "runner.pytest_runtest_makereport": _pytest.runner.pytest_runtest_makereport,
        "runner.CallInfo.from_call": _pytest.runner.CallInfo.__dict__["from_call"],
        "reports.TestReport.from_item_and_call": _pytest.reports.TestReport.__dict__["from_item_and_call"],
        "reports.TestReport.__init__": _pytest.reports.TestReport.__init__,
        "reports.BaseReport.passed": _pytest.reports.BaseReport.__dict__["passed"],
        "reports.BaseReport.failed": _pytest.reports.BaseReport.__dict__["failed"],
        "python.Function.runtest": _pytest.python.Function.runtest,
        "python.pytest_pyfunc_call": _pytest.python.pytest_pyfunc_call,
        "pluggy.HookCaller.__call__": _HOOK_CALLER.__call__,
        "pluggy.PluginManager._hookexec": pluggy.PluginManager._hookexec,
        "builtins.__import__": builtins.__import__,
        "builtins.__build_class__": builtins.__build_class__,
        "pytest.fail": pytest.fail,
        "plugin.send": send,
        "plugin.pytest_runtest_logreport": pytest_runtest_logreport,
        "plugin.pytest_sessionfinish": pytest_sessionfinish,
        "plugin.check": check,
        "plugin._WRITE": _WRITE,
        "plugin._FD": _FD,
        "plugin.observe": observe,
        "plugin._says_yes_to_strangers": _says_yes_to_strangers,
        "plugin._true": _true,
        "pluggy.multicall": _MULTICALL,
    }


def _fingerprint(obj: object) -> str:
    target = _function_of(obj)
    code = target.__code__ if isinstance(target, types.FunctionType) else None
    body = code.co_code + repr(code.co_consts).encode() if code is not None else b""
    return f"{id(target):x}:{hashlib.sha1(body).hexdigest()[:12]}"


def _function_of(obj: object) -> object:
    """The function behind a property (its getter), a bound, class or static method, or a
    ``functools.partial``; the object itself otherwise. Read without ``getattr``: an object's
    own ``__getattr__`` may raise (``torch.classes`` answers any name, then raises on the next)
    or be a candidate's code."""
    for _ in range(4):  # a partial of a bound method, a classmethod of a partial …
        if isinstance(obj, property):
            obj = obj.fget
        elif isinstance(obj, (types.MethodType, classmethod, staticmethod)):
            obj = obj.__func__
        elif isinstance(obj, functools.partial):
            obj = obj.func
        else:
            break
    return obj


def _code_of(obj: object) -> types.CodeType | None:
    """The code ``obj`` runs when called: a function's (``_function_of``), or the ``__call__``
    of a callable object's class (a comparison helper replaced by an instance)."""
    target = _function_of(obj)
    if isinstance(target, types.FunctionType):
        return target.__code__
    if isinstance(target, type) or not callable(target):
        return None
    call = _function_of(inspect.getattr_static(type(target), "__call__", None))
    return call.__code__ if isinstance(call, types.FunctionType) else None


def fingerprints() -> dict[str, str]:
    return {name: _fingerprint(obj) for name, obj in _watched().items()}


def attach(  # noqa: PLR0913
    fd: int,
    selected: list[str],
    seed: int | None = None,
    audit=None,
    copy: str | None = None,
    target: str | None = None,
) -> None:  # noqa: ANN001
    """Called by the supervisor in the child before ``pytest.main`` (so before any project
    module, initial conftests included, is imported): fix the baseline and say hello.
    Only items under ``selected`` node ids run (ids pytest cannot find become missing
    tests instead of aborting the whole session); ``seed``: each test's random state."""
    global _FD
    _FD = fd
    _SELECTED[:] = selected
    _SEED[0] = seed
    _AUDIT[0] = audit
    _TARGET[0] = target
    _OBSERVED.clear()
    _COLLECTED_SENT.clear()
    _BEFORE.clear()
    _DESELECTED.clear()
    _WATCHED_CLASSES.clear()
    builtins.__build_class__ = _build_class  # before the baseline: putting the original back is tampering
    _BASELINE.clear()
    _BASELINE.update(fingerprints())
    trust_attributes()
    _IMPORT_S[0] = 0.0
    if copy is not None:
        _time_repository_imports(copy)
    send(
        {"ev": "hello", "pid": os.getpid(), "python": sys.version.split()[0], "pytest": pytest.__version__, "t": _NOW()}
    )


def _time_repository_imports(root: str) -> None:
    """Count the time spent executing modules under ``root`` (the run's copy: the project's
    own modules, which every candidate's process imports afresh, since the warm parent must
    not hold the code a candidate replaces). Outermost ones only; informational (a phase of
    the run, docs/PERFORMANCE.md), never read by a verdict."""
    basics = importlib._bootstrap_external._LoaderBasics
    original = basics.exec_module
    prefix, depth = root.rstrip(os.sep) + os.sep, [0]

    def exec_module(self, module):  # noqa: ANN001, ANN202
        origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
        if depth[0] or not origin.startswith(prefix):
            return original(self, module)
        depth[0] += 1
        start = _NOW()
        try:
            return original(self, module)
        finally:
            depth[0] -= 1
            _IMPORT_S[0] += _NOW() - start

    basics.exec_module = exec_module


def send(event: dict) -> None:
    if _FD is None:
        return
    data = (json.dumps(event, default=str) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[_WRITE(_FD, view) :]


def neutralise(args: list[str]) -> tuple[list[str], list[str]]:
    """(kept, dropped) arguments: the conflicting options of ``DROP_*`` removed with their values."""
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    while i < len(args):
        arg, i = args[i], i + 1
        takes_next = _drops(arg, kept, dropped)
        if takes_next and i < len(args) and not args[i].startswith("-"):
            dropped[-1] += f" {args[i]}"
            i += 1
    return kept, dropped


def _drops(arg: str, kept: list[str], dropped: list[str]) -> bool:
    """Sort one argument into ``kept``/``dropped``; True when a dropped option's value is the next token."""
    name = arg.split("=", 1)[0]
    if name in DROP_FLAGS or name in DROP_VALUED:
        dropped.append(arg)
        return name in DROP_VALUED and "=" not in arg
    if not arg.startswith("-") or arg.startswith("--") or len(arg) < 2:
        kept.append(arg)
        return False
    rest = arg[1:].lstrip(DROP_SHORT_FLAGS)  # a cluster: -vv, -vs, -ra, -n4, -vn
    if rest and rest[0] in DROP_SHORT_VALUED:
        dropped.append(arg)
        return len(rest) == 1
    if rest != arg[1:]:
        dropped.append(arg[: len(arg) - len(rest)])
    if rest:
        kept.append("-" + rest)
    return False


def pytest_addoption(parser: pytest.Parser) -> None:
    """The terminal reporter is off (``-p no:terminal``), but plugins a project installs read its
    options (``config.option.color``): declared here, they hold pytest's defaults."""
    import _pytest.terminal

    try:
        _pytest.terminal.pytest_addoption(parser)
    except ValueError:  # declared already: the terminal plugin is on
        pass


@pytest.hookimpl(hookwrapper=True)  # the old style: pluggy before 1.1 has no ``wrapper=True``
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]):
    """After the project's initial conftests (they may add options): drop the conflicting
    options, then any option still unknown (a plugin the image lacks), so pytest runs. A
    conftest that cannot be imported is kept for the supervisor (``broken_conftest``)."""
    outcome = yield
    if outcome.excinfo is not None:
        exc = outcome.excinfo[1]
        cause = getattr(exc, "cause", None) or (getattr(exc, "excinfo", None) or (None, None))[1]
        if hasattr(exc, "path") and cause is not None:  # pytest's ConftestImportFailure
            _BROKEN[:] = [(str(exc.path), f"{type(cause).__name__}: {cause}")]
        return
    kept, dropped = neutralise(args)
    unknown = set(parser.parse_known_and_unknown_args(kept)[1])
    args[:] = [a for a in kept if a not in unknown]
    _NEUTRALISED[:] = dropped + [f"{a} (unknown option)" for a in sorted(unknown)]


def check(stage: str, config: pytest.Config | None = None) -> None:
    """Report watched objects replaced since ``hello``, then what candidate code installed."""
    changed = sorted(name for name, fp in fingerprints().items() if _BASELINE.get(name) != fp)
    if changed:
        send({"ev": "tamper", "stage": stage, "what": changed})
    if _AUDIT[0] is not None:
        observe(config)


def observe(config: pytest.Config | None) -> None:
    """Report (once each) hook implementations and compared-with library functions that candidate
    code installed, and a plugin manager that no longer calls hooks the way pluggy does."""
    found = _foreign_attributes() + _rewatched_classes()
    if config is not None:
        found += _foreign_hooks(config.pluginmanager)
    for what in found:
        _report(what)


def _report(what: str) -> None:
    """One ``observed`` event for what candidate code was seen doing (once each)."""
    if what not in _OBSERVED:
        _OBSERVED.add(what)
        send({"ev": "observed", "what": what})


def trust_attributes() -> None:
    """The compared-with modules' attributes, and their Python classes', as they are now, before
    any candidate runs (the warm supervisor before forking, ``attach`` in every run): a run
    examines only what changes, and a callable replaced by one without Python code is seen. A
    compared module of a package already imported is imported first (``numpy.testing`` is
    loaded lazily), so the candidate cannot be the first to set its attributes."""
    _LOOKED.clear()
    _UNCHANGED_SINCE.clear()
    for name in COMPARED_MODULES:
        if name not in sys.modules and name.partition(".")[0] in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - a broken optional module is the tests' to meet
                continue
    spaces = _LIST(_compared_namespaces())
    for label, namespace, _ in spaces:
        _LOOKED[label] = {attr: _looked(value) for attr, value in namespace.items()}
        _UNCHANGED_SINCE[label] = _contents(namespace)
    _SIZES[:], _UNCHANGED_SINCE[""] = _all_items(spaces)


def _compared_namespaces() -> Iterator[tuple[str, Mapping[str, object], bool]]:
    """(name, namespace, whether a module) of each compared-with module and of each class it
    defines in Python (``torch.Tensor``, pytest's ``ApproxScalar``, ``unittest.TestCase``): a
    method replaced there fools the tests' comparisons as a module's function does."""
    for name in COMPARED_MODULES:
        namespace = getattr(sys.modules.get(name), "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        yield name, namespace, True
        yield from _class_namespaces(name, namespace)


def _class_namespaces(name: str, namespace: dict) -> list[tuple[str, Mapping[str, object], bool]]:
    """The classes ``namespace`` (module ``name``'s) defines, found again only when one of its
    attributes changed: torch's namespace alone has thousands, looked at after every test."""
    contents = _contents(namespace)
    cached = _CLASSES.get(name)
    if cached is not None and _same(cached[0], contents):
        return cached[1]
    found = [
        (f"{name}.{attr}", _TYPE_DICT.__get__(value, type), False)
        for attr, value in _ZIP(*contents)
        if isinstance(value, type) and _TYPE_FLAGS.__get__(value, type) & HEAP_TYPE and _class_module(value) == name
    ]
    _CLASSES[name] = contents, found
    return found


def _contents(namespace: Mapping[str, object]) -> tuple[list, list]:
    """A namespace's names and values in order, as two lists: no tuple made per item (15,000
    items in torch's: the collector would run while they are made), the values held (no id
    is reused meanwhile)."""
    return _LIST(namespace), _LIST(namespace.values())


def _same(before: tuple[list, list] | None, now: tuple[list, list]) -> bool:
    """The same names bound to the same objects, compared by identity at C speed."""
    return (
        before is not None
        and _LEN(before[1]) == _LEN(now[1])
        and _ALL(_MAP(_IS, before[0], now[0]))
        and _ALL(_MAP(_IS, before[1], now[1]))
    )


def _foreign_attributes() -> list[str]:
    """Attributes of the compared-with modules and their classes holding candidate code or a
    mock object; only those changed since the last look are examined (after every test)."""
    found: list[str] = []
    spaces = _LIST(_compared_namespaces())
    sizes, everything = _all_items(spaces)
    if _SIZES == sizes and _same(_UNCHANGED_SINCE.get(""), everything):  # most tests: one comparison
        return found
    _SIZES[:], _UNCHANGED_SINCE[""] = sizes, everything
    for name, namespace, module in spaces:
        contents = _contents(namespace)
        if _same(_UNCHANGED_SINCE.get(name), contents):
            continue
        _UNCHANGED_SINCE[name] = contents
        seen = _LOOKED.setdefault(name, {})
        for attr, value in _ZIP(*contents):
            before = seen.get(attr)
            if before is not None and before[0] == id(value):
                continue
            seen[attr] = _looked(value)
            if type(value).__module__ == "unittest.mock" and not name.startswith("unittest"):
                found.append(f"{name}.{attr} is a unittest.mock object")
            elif (origin := _candidate_origin(value)) is not None:
                found.append(f"{name}.{attr} was replaced by code from {origin}")
            elif not module:
                continue  # a library may set a class's attribute to C code: only the two above
            elif before is not None and before[1] and callable(value) and _code_of(value) is None:
                found.append(f"{name}.{attr} was replaced by a {type(value).__name__} with no Python code")
            elif before is not None and before[2] and not _library_module(value):
                found.append(f"{name}.{attr} was a module and is now a stand-in ({type(value).__name__})")
            elif _builtin_stand_in(attr, value):
                found.append(f"{name}.{attr} is a built-in under another name")
    return found


def _all_items(spaces: list[tuple[str, Mapping[str, object], bool]]) -> tuple[list[int], tuple[list, list]]:
    """Each namespace's size (a boundary moved is a change too) and all their names and values."""
    namespaces = _LIST(_MAP(_VALUE, spaces))
    names = _LIST(_CHAIN(namespaces))
    return _LIST(_MAP(_LEN, namespaces)), (names, _LIST(_CHAIN(_MAP(_VALUES, namespaces))))


def _looked(value: object) -> tuple[int, bool, bool]:
    return id(value), callable(value), isinstance(value, types.ModuleType)


def _library_module(value: object) -> bool:
    """A module loaded from a file that is not the candidate's (a re-import is one): a
    stand-in made at run time (``types.ModuleType``) has no file."""
    file = _module_file(value)
    audit = _AUDIT[0]
    return file is not None and (audit is None or audit.origin(file) is None)


def _module_file(module: object) -> str | None:
    """A module's ``__file__``, read from its namespace (nothing of the module's own runs)."""
    file = vars(module).get("__file__") if isinstance(module, types.ModuleType) else None
    return file if isinstance(file, str) else None


def _class_module(cls: type) -> str | None:
    """``cls.__module__`` read with ``type``'s own descriptor: a metaclass cannot answer for it."""
    module = _TYPE_MODULE.__get__(cls, type)
    return module if isinstance(module, str) else None


def _builtin_stand_in(attr: str, value: object) -> bool:
    """A built-in under another, public name (``numpy.testing.assert_allclose = print``: it
    takes any arguments and raises nothing; ``math.isclose = slice``: a true value). Aliases
    under a built-in's own name (old numpy's ``numpy.bool``), exceptions' (``IOError``) and
    private ones (``operator._abs``, ``torch._ModuleType``: a library's own) are not."""
    value = _function_of(value)
    if attr.startswith("_"):
        return False
    if isinstance(value, types.BuiltinFunctionType):
        module = value.__module__
    elif isinstance(value, type) and not issubclass(value, BaseException):
        module = _class_module(value)
    else:
        return False
    return module == "builtins" and value.__name__ != attr


def _foreign_hooks(pm: pluggy.PluginManager) -> list[str]:
    inner = pm._inner_hookexec
    trusted = inner is _MULTICALL or inner is _INNER.get(id(pm), (None, None))[1]
    found = [] if trusted else ["the plugin manager's hook caller was replaced"]
    for hook_name, caller in list(vars(pm.hook).items()):
        if getattr(caller, "_hookexec", pm._hookexec) != pm._hookexec:
            found.append(f"the caller of {hook_name} was replaced")
        for impl in caller.get_hookimpls() if hasattr(caller, "get_hookimpls") else ():
            code = _code_of(impl.function)
            if code is None:
                found.append(f"a {hook_name} implementation without code ({impl.plugin_name})")
            elif code.co_filename.startswith("<") or (origin := _candidate_origin(impl.function)) is not None:
                found.append(f"a {hook_name} implementation from {origin or code.co_filename} ({impl.plugin_name})")
    return found


LOOKED_DEPTH, LOOKED_ITEMS = 3, 64  # how far into returned containers _look_at goes


class _Unlike:
    """A fresh object nothing a task returns has a reason to equal (its own attribute: an
    honest ``__eq__`` comparing ``vars()`` of attribute-less objects says no to it)."""

    def __init__(self) -> None:
        self._dlbench_unlike = object()


def _check_returns(audit, target: str) -> None:  # noqa: ANN001 - dlbench_guard.Audit
    """The task's function, wherever the project and its tests hold it, replaced by one that
    looks at what it returns: a value equal to a fresh object (a self-comparing ``__eq__``,
    ``unittest.mock.ANY``) would pass any comparison a test makes, whatever it computed."""
    path, _, qualname = target.partition(":")
    filename = os.path.realpath(os.path.join(audit.copy, path))
    folders: dict[str, str] = {}
    own = [(m, file) for m in list(sys.modules.values()) if (file := _file_of(m, folders)).startswith(audit.copy)]
    modules = [m for m, _ in own]
    module = next((m for m, file in own if file == filename), None)
    *outer, name = qualname.split(".")
    owner = module
    for part in outer:
        owner = getattr(owner, part, None)
    raw = vars(owner).get(name) if owner is not None and hasattr(owner, "__dict__") else None
    kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
    function = raw.__func__ if kind else raw
    if not isinstance(function, types.FunctionType):
        return
    checked = _checked(function)
    try:
        setattr(owner, name, kind(checked) if kind else checked)
    except (AttributeError, TypeError):  # a namespace that cannot be changed: left unchecked
        return
    for held in modules if owner is module else ():  # ``from pkg.mod import func`` in the tests
        for key, value in list(vars(held).items()):
            if value is function:
                setattr(held, key, checked)


def _file_of(module: object, folders: dict[str, str] | None = None) -> str:
    """A module's file with every link resolved; ``folders``: the resolved folders so far (a
    folder resolved once for all its modules: 6,000 modules took 0.9 s of pyro's collection)."""
    name = _module_file(module)
    if name is None:
        return ""
    if folders is None or not os.path.isabs(name):
        return os.path.realpath(name)
    folder, base = os.path.split(name)
    if folder not in folders:
        folders[folder] = os.path.realpath(folder)
    path = os.path.join(folders[folder], base)
    return os.path.realpath(path) if os.path.islink(path) else path


def _checked(function: types.FunctionType):  # noqa: ANN202
    """``function`` calling ``_look_at`` on what it returns, with ``function``'s own parameters:
    code that reads a function's arguments without unwrapping it (``getfullargspec``: tensorly's
    tests check that a class passes every defaulted argument of the function it wraps) sees
    the function's. TorchScript compiles the source ``inspect`` unwraps against the
    *wrapper's* globals and closure (``torch.jit.script(op)``: "undefined value
    normalize_points_with_intrinsics", kornia): so the wrapper uses no global name and is
    rebuilt on the function's own module globals. A generator function is left as it is: what
    it returns is its generator, and a wrapper would hide that it is one."""
    code = function.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
        return function
    own = _parameters(code)
    params, call = own or (["*args", "**kwargs"], ["*args", "**kwargs"])
    checked = _wrapper_maker(params, call, bool(code.co_flags & inspect.CO_COROUTINE))(function, _look_at)
    rebuilt = types.FunctionType(checked.__code__, function.__globals__, function.__name__, None, checked.__closure__)
    if own is not None:  # the same parameters: the same defaults
        rebuilt.__defaults__, rebuilt.__kwdefaults__ = function.__defaults__, function.__kwdefaults__
    return functools.update_wrapper(rebuilt, function)


_OWN_NAMES = frozenset({"_dlbench_function", "_dlbench_look", "_dlbench_result", "__tracebackhide__"})


def _parameters(code: types.CodeType) -> tuple[list[str], list[str]] | None:
    """The parameter list of ``code`` and a call forwarding each as it came, or None (the
    generic ``*args, **kwargs`` wrapper) when a name is not a plain identifier: the names are
    the candidate's, and compiled here they would run as the plugin's own code."""
    names = code.co_varnames
    count = code.co_argcount + code.co_kwonlyargcount
    star = names[count] if code.co_flags & inspect.CO_VARARGS else None
    starstar = names[count + (star is not None)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    every = [*names[:count], *(n for n in (star, starstar) if n is not None)]
    if any(not n.isidentifier() or n in _KEYWORDS or n in _OWN_NAMES for n in every):
        return None
    positional, keyword_only = names[: code.co_argcount], names[code.co_argcount : count]
    params = list(positional)
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if star is not None or keyword_only:
        params.append(f"*{star or ''}")
    params += keyword_only
    call = [*positional, *([f"*{star}"] if star else []), *(f"{n}={n}" for n in keyword_only)]
    if starstar is not None:
        params.append(f"**{starstar}")
        call.append(f"**{starstar}")
    return params, call


def _wrapper_maker(params: list[str], call: list[str], coroutine: bool):  # noqa: ANN202
    """``make(function, look)``: a wrapper taking ``params`` that calls ``function`` with
    ``call`` and gives ``look`` the result (awaited, for a coroutine function) before
    returning it; the wrapper's frame is left out of a failure's traceback."""
    source = (
        "def make(_dlbench_function, _dlbench_look):\n"
        f"    {'async ' if coroutine else ''}def checked({', '.join(params)}):\n"
        "        __tracebackhide__ = True\n"
        f"        _dlbench_result = {'await ' if coroutine else ''}_dlbench_function({', '.join(call)})\n"
        "        _dlbench_look(_dlbench_result)\n"
        "        return _dlbench_result\n"
        "    return checked\n"
    )
    namespace: dict = {}
    _EXEC(_COMPILE(source, __file__, "exec"), namespace)
    return namespace["make"]


def _look_at(value: object, depth: int = 0) -> None:
    """Report a returned value (or an item of returned lists, tuples, sets and dicts, keys and
    values, three deep) that equals anything; only objects whose ``__eq__`` is the candidate's
    own code, or a mock's, are asked. (Objects of a candidate's ``class`` statements are
    watched wherever they are compared: ``_build_class``.)"""
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        items = itertools.chain(value.keys(), value.values()) if isinstance(value, dict) else value
        for item in itertools.islice(items, LOOKED_ITEMS) if depth < LOOKED_DEPTH else ():
            _look_at(item, depth + 1)
        return
    kind = type(value)
    equals = _code_of(inspect.getattr_static(kind, "__eq__", None))
    foreign = kind.__module__ == "unittest.mock" or (
        equals is not None and (equals.co_filename.startswith("<") or _candidate_origin(equals) is not None)
    )
    if not foreign:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same = value == _Unlike()
    except Exception:  # noqa: BLE001 - an __eq__ that cannot compare with a stranger is no cheat
        return
    if same is True:
        _report(f"the task's function returned an object equal to anything ({kind.__qualname__})")


# The comparisons of a candidate's classes that are watched, with the word for an object that
# says yes to anything through one: besides a fresh object, equality is asked about another
# value of the compared type, ordering about an infinity no honest number is beyond.
WATCHED_COMPARISONS = {
    "__eq__": "equal to",
    "__lt__": "less than",
    "__le__": "less than",
    "__gt__": "greater than",
    "__ge__": "greater than",
    "__contains__": "containing",
}


def _build_class(func, name, *bases, **kwds):  # noqa: ANN001, ANN202 - builtins.__build_class__'s own
    """Every ``class`` statement of the child: a class whose body is candidate code gets its
    comparisons watched (``_watch_comparisons``) wherever its objects end up: returned nested in
    a list, held by an object the task's function returned (``relu(x).tolist() == [0, 2]``), or
    set on ``self`` by a method, which ``_look_at`` never sees; one that answers for numpy's or
    torch's operations (``OPERATION_PROTOCOLS``) is reported (gold's own such classes, the
    project's in the task's module, allow it for the task)."""
    cls = _BUILD_CLASS(func, name, *bases, **kwds)
    code = getattr(func, "__code__", None)
    if isinstance(cls, type) and isinstance(code, types.CodeType) and _candidate_origin(code) is not None:
        _WATCHED_CLASSES.append(cls)
        _watch_comparisons(cls)
        for protocol in sorted(OPERATION_PROTOCOLS.intersection(_TYPE_DICT.__get__(cls, type))):
            owner = _TYPE_QUALNAME.__get__(cls, type)
            _report(
                f"candidate code defined a class that takes over numpy's or torch's operations ({owner}.{protocol})"
            )
    return cls


def _watch_comparisons(cls: type) -> list[tuple[str, types.FunctionType]]:
    """Put a watching method on ``cls`` in place of each Python comparison it has (its own or
    inherited) and return those: (name, the method); none where there is nothing to watch
    (``object``'s compare identity), it is watched already, or it cannot be set."""
    wrapped = []
    owner = _TYPE_QUALNAME.__get__(cls, type)
    for dunder in WATCHED_COMPARISONS:
        method = inspect.getattr_static(cls, dunder, None)
        if not isinstance(method, types.FunctionType) or getattr(method, "_dlbench_watched", False):
            continue
        try:
            type.__setattr__(cls, dunder, _watched_comparison(method, dunder, owner))
        except (AttributeError, TypeError):
            continue
        wrapped.append((dunder, method))
    return wrapped


def _watched_comparison(method: types.FunctionType, dunder: str, owner: str):  # noqa: ANN202
    """``method`` (the comparison ``dunder``) reporting an object that says yes to anything:
    each time it says yes about a value, it is asked again about strangers (``_strangers``);
    an honest one says no."""
    what = _says_yes_to_anything(owner, dunder)

    def compare(self, other):  # noqa: ANN001, ANN202 - the method it stands for
        result = method(self, other)
        if other is not self and _true(result) and _says_yes_to_strangers(self, method, dunder, other):
            _report(what)
        return result

    functools.update_wrapper(compare, method)
    compare._dlbench_watched = True
    return compare


def _says_yes_to_anything(owner: str, dunder: str) -> str:
    return f"candidate code made an object {WATCHED_COMPARISONS[dunder]} anything ({owner}.{dunder})"


def _says_yes_to_strangers(value: object, method: types.FunctionType, dunder: str, other: object) -> bool:
    """Whether ``method`` says yes about ``value`` and a stranger to ``other`` too."""
    for stranger in _strangers(dunder, other):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if _true(method(value, stranger)):
                    return True
        except Exception:  # noqa: BLE001, S112 - a comparison that cannot take a stranger is no cheat
            continue
    return False


def _strangers(dunder: str, other: object) -> list[object]:
    """Values an honest object has no reason to say yes about: a fresh object (all a container
    is asked about); for equality, a value of ``other``'s own type that differs from it (an
    ``__eq__`` saying yes to every int); for ordering, the infinity beyond every number
    (``x < -inf`` holds for none)."""
    found: list[object] = [_Unlike()]
    kind = type(other)
    if dunder == "__contains__":  # a range holds other numbers too: only the fresh object
        return found
    if dunder in ("__lt__", "__le__"):
        found.append(-_INFINITY)
    elif dunder in ("__gt__", "__ge__"):
        found.append(_INFINITY)
    elif kind is bool:
        found.append(not other)
    elif kind in (int, float) and (changed := other * 2 + 12345) != other:
        found.append(changed)
    elif kind in (str, bytes):
        found.append(other + kind(b"\0dlbench" if kind is bytes else "\0dlbench"))
    elif kind in (list, tuple):
        found.append(other + kind((_Unlike(),)))
    return found


def _true(result: object) -> bool:
    """A comparison's answer that an ``assert`` takes as true: True, a true number or a
    numpy bool; an array's elementwise answer is not one answer and counts as no."""
    kind = type(result)
    if kind in (bool, int, float):
        return bool(result)
    return kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool") and bool(result)


def _rewatched_classes() -> list[str]:
    """The classes candidate code defined whose comparisons were put in place after the class
    statement (a decorator, an assignment): watched from now on, and one saying yes to anything
    without any state of its object (``lambda s, o: o is o``) is reported now."""
    found = []
    for cls in _LIST(_WATCHED_CLASSES):
        for dunder, method in _watch_comparisons(cls):
            if _yes_when_bare(cls, method, dunder):
                found.append(_says_yes_to_anything(_TYPE_QUALNAME.__get__(cls, type), dunder))
    return found


def _yes_when_bare(cls: type, method: types.FunctionType, dunder: str) -> bool:
    """``method`` asked about a stranger on an object of ``cls`` made without ``__init__``."""
    try:
        bare = cls.__new__(cls)
    except Exception:  # noqa: BLE001 - a class that needs arguments to exist: its live objects are watched
        return False
    return _says_yes_to_strangers(bare, method, dunder, _Unlike())


def _candidate_origin(value: object) -> str | None:
    """The candidate's file, or a writable place outside the copy, that ``value``'s code comes from."""
    code = value if isinstance(value, types.CodeType) else _code_of(value)
    audit = _AUDIT[0]
    if audit is None:
        return None
    if code is None and isinstance(value, type):  # a class: the file of the module defining it
        file = _module_file(sys.modules.get(_class_module(value) or ""))
        return audit.origin(file) if file is not None else None
    return audit.origin(code.co_filename) if isinstance(code, types.CodeType) else None


def _exception(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    if not report.failed:
        return None
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message[:2000]
    return str(report.longrepr).strip().splitlines()[-1][:2000] if report.longrepr else None


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    """Why a test was skipped or xfailed (``Skipped: no CUDA``; an xfail's reason)."""
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail)[:500] or "xfail"
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2])[:500]
    return None


def pytest_plugin_registered(plugin: object, manager: pluggy.PluginManager) -> None:
    """Historic: first called as this plugin is registered (``pytest.main(plugins=...)``),
    before any conftest or project module is imported. pluggy before 1.0 runs hooks through a
    lambda of each manager's own: trusted as it is then."""
    if _INNER.get(id(manager), (None,))[0] is not manager:
        _INNER[id(manager)] = (manager, manager._inner_hookexec)


def _writer_without_reporter(config: pytest.Config) -> None:
    """pytest 8 explains a failed comparison (``assert len(warns) == 0``) with the terminal
    reporter's writer, for highlighting; with the reporter off its ``get_terminal_writer``
    fails its own ``assert``, and every such failure read a bare ``AssertionError`` from
    pytest's internals instead of ``assert 1 == 0``. A writer to nowhere, without markup."""
    if config.pluginmanager.get_plugin("terminalreporter") is not None:
        return
    from _pytest._io import TerminalWriter

    writer = TerminalWriter(file=io.StringIO())
    writer.hasmarkup = False
    config.get_terminal_writer = lambda: writer


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.option.tbstyle = "short"  # ``--tb`` belongs to the terminal plugin, which is off
    _writer_without_reporter(config)
    _CONFIG[0] = config
    inifile = str(config.inipath) if config.inipath else None
    config.pluginmanager.register(FirstLook(), "dlbench_first_look")
    send({"ev": "config", "rootdir": str(config.rootpath), "inifile": inifile, "neutralised": list(_NEUTRALISED)})


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item):
    """The audit hook counts reads of the task's test files while a test body runs; the lines
    a traceback cached are dropped first, so such a read must open the file."""
    audit = _AUDIT[0]
    if audit is None:
        yield
        return
    for path in audit.tests:
        linecache.cache.pop(path, None)
    audit.in_call = True
    try:
        yield
    finally:
        audit.in_call = False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every test starts from the same random state, before its fixtures (as under
    pytest-randomly): one that draws unseeded random numbers gets one verdict in every run,
    not one that hangs on the state the supervisor's fork happened to inherit."""
    if _SEED[0] is not None:
        seed_generators(_SEED[0])


def seed_generators(seed: int) -> None:
    """``random``, and numpy's, torch's and TensorFlow's global generators where imported."""
    random.seed(seed)
    for module, setter in (("numpy", "random.seed"), ("torch", _torch_seeder()), ("tensorflow", "random.set_seed")):
        target = sys.modules.get(module)
        for name in setter.split(".") if target is not None else ():
            target = getattr(target, name, None)
        if callable(target):
            target(seed)


def _torch_seeder() -> str:
    """``torch.manual_seed`` where a device has a generator of its own; on a machine without
    one, the CPU generator's, which is all that call seeds there: it also queues the seed for
    CUDA and XPU, formatting the whole stack each time (2 ms a test, a third of pyro's test
    time). Which one is decided once per process."""
    torch = sys.modules.get("torch")
    if torch is None:  # not imported (yet): nothing to seed, nothing to decide
        return "manual_seed"
    if _DEVICES[0] is None:
        _DEVICES[0] = any(_available(torch, kind) for kind in ("cuda", "xpu", "backends.mps"))
    return "manual_seed" if _DEVICES[0] else "random.default_generator.manual_seed"


def _available(torch: types.ModuleType, backend: str) -> bool:
    """Whether ``torch.<backend>`` has a device; its warnings are not the test's (a project's
    ``filterwarnings = error`` would fail the test the seed is set for)."""
    target: object = torch
    for name in backend.split("."):
        target = getattr(target, name, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(getattr(target, "is_available", lambda: False)())
    except Exception:  # noqa: BLE001 - a backend that cannot tell: seed it as torch would
        return True


def _failure_text(report) -> str:
    """The traceback's tail, after the ``E`` lines above it: a chained exception's first
    cause (a refused connection under a library's own error) is where its cause is."""
    text = str(report.longrepr)
    if len(text) <= TEXT_LIMIT:
        return text
    earlier = [line for line in text[:-TEXT_TAIL].splitlines() if line.startswith("E ")]
    return "\n".join(earlier)[-(TEXT_LIMIT - TEXT_TAIL) :] + "\n...\n" + text[-TEXT_TAIL:]


@pytest.hookimpl(tryfirst=True)
def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        send(
            {
                "ev": "collect_error",
                "nodeid": report.nodeid,
                "exc": _exception(report),
                "text": _failure_text(report),
            }
        )
    elif report.skipped:  # a whole module skipped (``pytest.importorskip`` or ``skip`` at import)
        send({"ev": "collect_skipped", "nodeid": report.nodeid, "reason": _reason(report)})


class FirstLook:
    """Registered at configure: sees the items before any other ``pytest_collection_modifyitems``."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        _BEFORE[:] = [item.nodeid for item in items if selects(item.nodeid, _SELECTED)]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Only the task's items run; those the project's configuration removed are reported."""
    if not _SELECTED:
        return  # not attached (the supervisor's warm-up run): run everything
    present = {item.nodeid for item in items}
    removed = [nid for nid in _BEFORE if nid not in present and nid not in _DESELECTED]
    _report_deselected(removed)  # dropped from the list without pytest_deselected
    _ALIASES.clear()
    _ALIASES.update({item.nodeid: alias for item in items if (alias := _expanded_case(item)) is not None})
    keep = [item for item in items if selects(_listed(item.nodeid), _SELECTED)]
    dropped = [item for item in items if not selects(_listed(item.nodeid), _SELECTED)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def _expanded_case(item: pytest.Item) -> str | None:
    """A test a decorator replaced with copies as its class was built reads as a case of the
    test the source defines, when that one is listed: the ids mining reads statically are the
    source's, pytest collects the copies. Numbered copies of a method (``parameterized.expand``:
    ``test_x`` became ``test_x_0_a``) and copies of a class (``parameterized_class``: ``TestX``
    became ``TestX_0_cpu``, ``TestX_1_cuda``): ``TestX::test_x[0_cpu-0_a]``."""
    if selects(item.nodeid, _SELECTED):
        return None
    name, cases = _source_name(item)
    owner = item.nodeid[: len(item.nodeid) - len(item.name)]
    owner = owner[:-2] if owner.endswith("::") else owner  # no str.removesuffix: an image may have Python 3.8
    cls = getattr(item, "cls", None)
    base = _generated_from(cls, name) if cls is not None and owner.endswith("::" + cls.__name__) else None
    if base is not None:
        owner = owner[: len(owner) - len(cls.__name__)] + base.__name__
        cases.insert(0, cls.__name__[len(base.__name__) :].lstrip("_") or cls.__name__)
    source_id = f"{owner}::{name}"
    if not cases or not selects(source_id, _SELECTED):
        return None
    alias = f"{source_id}[{'-'.join(cases)}]"
    return None if alias == item.nodeid else alias


def _source_name(item: pytest.Item) -> tuple[str, list[str]]:
    """The test's name in the source and what tells its case: the suffix of a copy a decorator
    numbered (``place_as`` or ``__wrapped__`` names the original), pytest's own parameters."""
    own = getattr(item, "originalname", None) or item.name
    params = item.name[len(own) :]
    cases = [params[1:-1]] if params.startswith("[") and params.endswith("]") else []
    function = _function_of(getattr(item, "obj", None))
    origin = getattr(function, "place_as", None) or getattr(function, "__wrapped__", None)
    name = getattr(origin, "__name__", None)
    if name and name != own and own.startswith(name):
        return name, [own[len(name) :].lstrip("_") or own, *cases]
    return own, cases


def _generated_from(cls: type, name: str) -> type | None:
    """The class of the source a class decorator made ``cls`` from: a base in the same module
    whose name starts ``cls``'s and which no longer has the test (the decorator moved it into
    the copies; a subclass that inherits a test the base still runs is a test of its own)."""
    for base in cls.__mro__[1:]:
        if (
            base.__module__ == cls.__module__
            and cls.__name__.startswith(base.__name__)
            and cls.__name__ != base.__name__
        ):
            return None if name in vars(base) else base
    return None


def _listed(nodeid: str) -> str:
    """The id events carry: a numbered copy's case id (``_expanded_case``), else its own."""
    return _ALIASES.get(nodeid, nodeid)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _report_deselected([item.nodeid for item in items])


def _report_deselected(ids: list[str]) -> None:
    """Task tests deselected by the project (``-m``/``-k`` in addopts, a conftest hook)."""
    ours = [nid for nid in ids if _SELECTED and selects(nid, _SELECTED) and nid not in _DESELECTED]
    if ours:
        _DESELECTED.update(ours)
        send({"ev": "deselected", "ids": ours})


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    check("collection", session.config)
    if _AUDIT[0] is not None and _TARGET[0]:
        _check_returns(_AUDIT[0], _TARGET[0])
    ids = [_listed(item.nodeid) for item in session.items]
    send({"ev": "collected", "ids": ids, "t": _NOW(), "import_s": round(_IMPORT_S[0], 4)})
    _COLLECTED_SENT.append(True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """One event per phase of each test. A subtest's report (``self.subTest``, the ``subtests``
    fixture) is not a phase: a failing one fails its test's call phase, with its cause."""
    if type(report).__name__ in SUBTEST_REPORTS:
        if report.failed:
            _SUBTESTS_FAILED.setdefault(report.nodeid, report)
        return
    event = {
        "ev": "report",
        "nodeid": _listed(report.nodeid),
        "when": report.when,
        "outcome": report.outcome,
        "xfail": hasattr(report, "wasxfail"),
        "duration": round(report.duration, 6),
        "exc": _exception(report),
        "text": _failure_text(report) if report.failed else None,
        "reason": _reason(report),
    }
    failed = _SUBTESTS_FAILED.pop(report.nodeid, None) if report.when == "call" else None
    if failed is not None and report.passed:
        event.update(outcome="failed", exc=_exception(failed), text=_failure_text(failed))
    send(event)
    if report.when == "teardown":
        check(report.nodeid, _CONFIG[0])


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    check("finish", session.config)
    send({"ev": "finish", "exitstatus": int(exitstatus), "t": _NOW()})
