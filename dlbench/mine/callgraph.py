"""Test call graph: the repository functions each test reaches.

Depth rule (the paper took the functions that tests call): a function is reached by a
test when it is called from test code that runs for that test: the test body, the
helper functions and test-support classes it calls (of the test module or of another
test-support module such as ``tests/utils.py``, transitively; a helper's parameters take
the classes its caller passes), and with ``mine.tested_by: reached`` also
``setUp``/``setup_method``/``tearDown`` and the fixtures it requests by argument name,
``usefixtures`` or ``autouse`` (transitively through fixtures; test module, test class
and every ``conftest.py`` from the test's folder up to the root). ``mine.tested_by:
called`` keeps only what the test itself calls: a constructor that every fixture runs is
reached by hundreds of tests and tested by none. ``focused`` also drops constructors from
a test that calls any other repository function: its objects were built to test that
one. Calls inside library code are followed only with ``mine.reach: transitive``, except
those of nameless library frames, which the dynamic truth passes through as well: the
wrapper of a repository decorator around a reached function, and the nested function a
library call returns when test code calls it (``@engine.on(event)``).

Resolution, against ``symbols.SymbolTable`` (imports, aliases, relative imports,
re-exports): ``f()``, ``mod.sub.f()``; ``C(...)`` reaches ``C.__init__`` (defined by C or
a repository base); ``obj.m()`` reaches ``C.m`` (through the repository bases in Python's
C3 order) when ``obj`` is bound to ``C(...)`` in the scope, annotated ``C``, unpacked from
a tuple whose element is known (``ds, x = make()``; a library ``-> tuple[A, B]``), an
attribute ``self.x`` bound so in the test class or a property annotated ``-> C``, or comes
from a fixture/helper/library function that returns ``C(...)`` or is annotated ``-> C``;
``super().m()`` in test-module classes; ``obj(...)`` reaches ``C.__call__``, or
``C.forward`` for a torch ``nn.Module`` (``call`` for Keras layers), whose ``__call__``
lives in the framework only to dispatch there. A name can also hold a class or function
itself: a ``parametrize`` value (``parametrize("cls", [A, B])`` then ``cls(...)`` reaches
``A.__init__`` and ``B.__init__``; lists bound at module level, ``product``, tuples of
classes), a loop over a literal list, or ``cls = A``. Syntax that runs a special method
reaches it on objects of known classes (``len(obj)``, ``a == b``, ``a * b``, ``obj[i]``,
``with obj``, ``for x in obj``; ``specials``), and reading ``obj.p`` reaches the property
``p``.

Not followed (static limits): callables passed as other values (``getattr``,
callbacks, fixture ``params``), classes defined inside test functions, once-per-class/
module setup (``setUpClass``, ``setup_module``, which run for the first test only), and
methods on objects whose class is not visible as above (an object a factory picks by
string is typed by the factory's annotation, which names the base class). Bindings are
flow-insensitive (a name bound to two classes in turn reaches both classes' methods) and
every branch counts. Calls that leave the repository (numpy, stdlib) and functions of
test support files are dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from dlbench.config import MineConfig
from dlbench.logs import Progress
from dlbench.mine.bodies import Args, BodySummary, Expr
from dlbench.mine.cache import LoadedRepo, load_clone
from dlbench.mine.reach import LibraryCalls
from dlbench.mine.specials import candidates, reflection
from dlbench.mine.symbols import Decorator, FunctionInfo, ImportRef, Symbol
from dlbench.mine.tests import helper_modules, is_test_support
from dlbench.records import CallRecord, TestCase
from dlbench.store import read_jsonl, write_jsonl

log = logging.getLogger(__name__)

INIT = ".__init__"
MAX_DEPTH = 8  # bound on type inference through bindings, returns and attributes
SETUP_METHODS = ("setUp", "tearDown", "setup_method", "teardown_method")
SETUP_FUNCTIONS = ("setup_function", "teardown_function")
NOT_FIXTURES = frozenset({"self", "cls", "request"})
ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
PROPERTY_DECORATORS = frozenset({"property", "cached_property", "setter", "getter", "deleter"})


class Context(NamedTuple):  # tuples: scopes key every cache of the graph and hash in C
    """Where a test lives: decides which fixtures its (and its fixtures') arguments name."""

    path: str
    cls: Symbol | None


class Reached(NamedTuple):
    calls: list[str]  # every repository function the test reaches
    direct: list[str] | None  # transitive reach: those its own code calls (None: all of calls)


class Scope(NamedTuple):
    fn: Symbol  # the test-code function whose body is read
    self_cls: Symbol | None  # what ``self`` is an instance of
    ctx: Context
    args: tuple[tuple[str, frozenset[Symbol]], ...] = ()  # parameter → classes the caller passed


def is_fixture(info: FunctionInfo) -> bool:
    return any(d.name.rpartition(".")[2] == "fixture" for d in info.decorators)


def _fixture_option(info: FunctionInfo, key: str) -> str | None:
    for decorator in info.decorators:
        if decorator.name.rpartition(".")[2] == "fixture":
            return dict(decorator.kwargs).get(key)
    return None


def fixture_name(info: FunctionInfo) -> str:
    return _fixture_option(info, "name") or info.name


def is_property(info: FunctionInfo) -> bool:
    """``@property``/``@cached_property`` and a property's ``@p.setter`` (same qualname)."""
    return any(d.name.rpartition(".")[2] in PROPERTY_DECORATORS for d in info.decorators)


def _argnames(decorators: tuple[Decorator, ...], mark: str) -> list[str]:
    """Names given to ``pytest.mark.<mark>(...)`` (parametrize argnames, usefixtures)."""
    names: list[str] = []
    for decorator in decorators:
        if decorator.name.rpartition(".")[2] == mark:
            args = decorator.args[:1] if mark == "parametrize" else decorator.args
            for arg in args:
                names.extend(n.strip() for n in arg.split(",") if n.strip())
    return names


class CallGraph:
    """Resolves test-code calls of one checkout; ``reached(case)`` is the public entry.

    ``tested_by="called"`` counts what the test body (and the helpers it calls) calls;
    setup methods and fixtures still type the test's objects but add no functions;
    ``"focused"`` keeps constructors only for tests that call nothing else.
    ``reach="transitive"`` adds the library functions those call (``LibraryCalls``)."""

    def __init__(self, repo: LoadedRepo, tested_by: str = "reached", reach: str = "direct", cases: Sequence[TestCase] | None = None):  # fmt: skip
        self.tested_by = tested_by
        self.table = repo.table
        self.bodies = repo.bodies
        self.support = {p for p, s in self.table.summaries.items() if is_test_support(p, s, repo.layout)}
        # ``mine.test_helpers`` (given the cases): support modules that hold none are candidates too
        self.helpers = helper_modules(self.support, cases) if cases is not None else set()
        self._module_fixtures: dict[str, dict[str, Symbol]] = {}
        self._effects: dict[Scope, tuple[frozenset[str], tuple[Scope, ...]]] = {}
        self._returns: dict[tuple[Symbol, Symbol | None, Context], set[Symbol]] = {}
        self._locals: dict[tuple[Scope, str], set[Symbol]] = {}
        self._values: dict[tuple[Scope, str], set[Symbol]] = {}
        self.library = LibraryCalls(repo.root, self.table, self.support)
        self.transitive = reach == "transitive"
        self._wrapped: dict[str, frozenset[str]] = {}

    # ---------------------------------------------------------------- per test

    def reached(self, case: TestCase) -> Reached:
        """Sorted ``path:qualname`` of the repository functions the test reaches and, with
        transitive reach, of those its own code calls (the rest run through them)."""
        ctx = Context(case.file, Symbol("class", case.file, case.class_name) if case.class_name else None)
        entry = self.table.method(ctx.cls, case.name) if ctx.cls else Symbol("function", case.file, case.name)
        if entry is None:
            return []
        work = [Scope(entry, ctx.cls, ctx)]
        if self.tested_by == "reached":
            work += [Scope(fn, ctx.cls, ctx) for fn in self._setup_functions(ctx)]
            work += [Scope(fx, ctx.cls if "." in fx.qualname else None, ctx) for fx in self.fixture_closure(ctx, entry)]
        found: set[str] = set()
        done: set[Scope] = set()
        while work:
            scope = work.pop()
            if scope in done:
                continue
            done.add(scope)
            keys, follow = self._scope_effects(scope)
            found |= keys
            work.extend(follow)
        # classes the test builds, taken before focusing drops their constructors
        built = {
            Symbol("class", k.partition(":")[0], k.partition(":")[2].removesuffix(INIT))
            for k in found
            if k.endswith(INIT)
        }
        if self.tested_by == "focused":
            found = self._focused(found)
        if not self.transitive:
            return Reached(sorted(found), None)
        return Reached(sorted(self.library.closure(found, built)), sorted(found))

    @staticmethod
    def _focused(found: set[str]) -> set[str]:
        """Constructors only for tests that call nothing else of the repository: a test
        that builds objects to call a function or method tests that one."""
        others = {k for k in found if not k.endswith(INIT)}
        return others or found

    def _setup_functions(self, ctx: Context) -> list[Symbol]:
        if ctx.cls is not None:
            found = [self.table.method(ctx.cls, name) for name in SETUP_METHODS]
        else:
            functions = self.table.summaries[ctx.path].functions
            found = [Symbol("function", ctx.path, n) for n in SETUP_FUNCTIONS if n in functions]
        return [s for s in found if s is not None and s.path in self.bodies]

    def _scope_effects(self, scope: Scope) -> tuple[frozenset[str], tuple[Scope, ...]]:
        """Repository functions a body calls, and the same-module helpers it follows."""
        if scope in self._effects:
            return self._effects[scope]
        body = self.bodies.get(scope.fn.path, {}).get(scope.fn.qualname)
        found: set[str] = set()
        follow: list[Scope] = []
        for target, args in self._body_targets(body, scope) if body else ():
            self._reach(target, scope, found, follow, args)
        self._effects[scope] = (frozenset(found), tuple(follow))
        return self._effects[scope]

    def _body_targets(self, body: BodySummary, scope: Scope) -> set[tuple[Symbol, Args]]:
        """What a body runs (with the call's arguments): its calls, special methods of its
        syntax, properties it reads."""
        targets = {(t, args) for callee, args in body.calls for t in self.callee_targets(callee, scope, 0)}
        for method, subject, other in body.specials:
            targets |= {(t, ()) for t in self.special_targets(method, subject, other, scope)}
        for read in body.reads:
            targets |= {(t, ()) for t in self.property_targets(read, scope)}
        return targets

    def _reach(self, target: Symbol, scope: Scope, found: set[str], follow: list[Scope], args: Args = ()) -> None:
        if target.kind == "class":
            init = self.table.method(target, "__init__")
            if init is not None:
                self._reach(init, scope, found, follow, args)
            return
        if target.kind != "function":
            return
        found |= self._wrapper_calls(target)
        if target.path not in self.support or target.path in self.helpers:
            found.add(target.key)
        # test code (the test module's or another support module's, a helper too): followed
        if target.path in self.support and target.path in self.bodies:
            follow.append(Scope(target, self._self_for(target, scope), scope.ctx, self._arg_types(target, args, scope)))

    def _arg_types(self, fn: Symbol, args: Args, scope: Scope) -> tuple[tuple[str, frozenset[Symbol]], ...]:
        """The classes a call passes for each parameter of the test-code function it calls
        (``self._query(strategy)``: the helper's ``strategy`` is what the test built)."""
        info = self.table.function_info(fn)
        if info is None or not args:
            return ()
        bound = "." in fn.qualname and not any(d.name == "staticmethod" for d in info.decorators)
        positional = info.params[1:] if bound else info.params  # ``self``/``cls`` is not passed
        found = []
        for key, value in args:
            name = positional[key] if isinstance(key, int) and key < len(positional) else key
            if isinstance(name, str) and name in info.params and (classes := self.type_of(value, scope, 1)):
                found.append((name, frozenset(classes)))
        return tuple(sorted(found, key=lambda item: item[0]))

    def _wrapper_calls(self, fn: Symbol) -> frozenset[str]:
        """What the wrappers of the repository decorators of the function (or of its class)
        call around it (``@sync_all_reduce(...)``: the wrapper calls ``idist.get_world_size()``
        first; small-text's class decorator ``@constraints`` checks the query's arguments)."""
        if fn.key not in self._wrapped:
            info = self.table.function_info(fn)
            decorators = info.decorators if info else ()
            if info is not None and info.class_name:
                decorators += self.table.class_info(Symbol("class", fn.path, info.class_name)).decorators
            found: set[str] = set()
            for decorator in decorators:
                target = self.table.resolve(fn.path, decorator.name) if decorator.name else None
                if target is not None and target.kind == "function" and target.path not in self.support:
                    found |= self.library.nested_callees(target.key)
            self._wrapped[fn.key] = frozenset(found)
        return self._wrapped[fn.key]

    def _self_for(self, method: Symbol, scope: Scope) -> Symbol | None:
        owner = method.qualname.rpartition(".")[0]
        if not owner:
            return None
        owner_cls = Symbol("class", method.path, owner)
        if scope.self_cls is not None and owner_cls in self.table.mro(scope.self_cls):
            return scope.self_cls
        return owner_cls

    # ---------------------------------------------------------------- fixtures

    def fixture_closure(self, ctx: Context, entry: Symbol) -> list[Symbol]:
        """Fixtures a test uses: by argument, ``usefixtures`` and ``autouse``, transitively."""
        info = self.table.function_info(entry)
        if info is None:
            return []
        class_decorators = self.table.class_info(ctx.cls).decorators if ctx.cls else ()
        direct = set(info.params) - NOT_FIXTURES - set(_argnames(info.decorators + class_decorators, "parametrize"))
        queue = [(name, None) for name in sorted(direct)]
        queue += [(name, None) for name in _argnames(info.decorators + class_decorators, "usefixtures")]
        queue += [(name, None) for name in self._autouse(ctx)]
        chosen: list[Symbol] = []
        while queue:
            name, requester = queue.pop()
            fixture = self.fixture_for(ctx, name, requester)
            if fixture is None or fixture in chosen:
                continue
            chosen.append(fixture)
            fixture_info = self.table.function_info(fixture)
            queue += [(p, fixture) for p in fixture_info.params if p not in NOT_FIXTURES] if fixture_info else []
        return chosen

    def fixture_for(self, ctx: Context, name: str, requester: Symbol | None = None) -> Symbol | None:
        """The fixture ``name`` as the test sees it; a fixture asking for its own name gets the outer one."""
        candidates = self._visible(ctx, name)
        if requester in candidates:
            after = candidates[candidates.index(requester) + 1 :]
            return after[0] if after else None
        return candidates[0] if candidates else None

    def _visible(self, ctx: Context, name: str) -> list[Symbol]:
        """Fixtures named ``name``, nearest first: test class, test module, conftest chain."""
        found = []
        if ctx.cls is not None:
            for cls in self.table.mro(ctx.cls):
                for method in self.table.class_info(cls).methods.values():
                    if is_fixture(method) and fixture_name(method) == name:
                        found.append(Symbol("function", cls.path, method.qualname))
        for path in self._fixture_modules(ctx.path):
            if (fixture := self.module_fixtures(path).get(name)) is not None:
                found.append(fixture)
        return found

    def _fixture_modules(self, test_path: str) -> list[str]:
        """The test module, then ``conftest.py`` of its folder and every folder above."""
        modules = [test_path]
        parts = test_path.split("/")[:-1]
        for cut in range(len(parts), -1, -1):
            conftest = "/".join([*parts[:cut], "conftest.py"])
            if conftest in self.table.summaries and conftest != test_path:
                modules.append(conftest)
        return modules

    def module_fixtures(self, path: str) -> dict[str, Symbol]:
        """Fixtures a module defines or imports, by fixture name."""
        if path not in self._module_fixtures:
            found: dict[str, Symbol] = {}
            summary = self.table.summaries[path]
            for local in summary.imports:
                target = self.table.resolve(path, local)
                info = self.table.function_info(target) if target and target.kind == "function" else None
                if info is not None and is_fixture(info):
                    found[fixture_name(info)] = target
            for info in summary.functions.values():
                if is_fixture(info):
                    found[fixture_name(info)] = Symbol("function", path, info.name)
            self._module_fixtures[path] = found
        return self._module_fixtures[path]

    def _autouse(self, ctx: Context) -> list[str]:
        names = []
        candidates: list[FunctionInfo] = []
        if ctx.cls is not None:
            for cls in self.table.mro(ctx.cls):
                candidates += self.table.class_info(cls).methods.values()
        for path in self._fixture_modules(ctx.path):
            candidates += [self.table.function_info(s) for s in self.module_fixtures(path).values()]
        for info in candidates:
            if info is not None and is_fixture(info) and _fixture_option(info, "autouse") == "True":
                names.append(fixture_name(info))
        return names

    # ---------------------------------------------------------------- resolution

    def callee_targets(self, expr: Expr, scope: Scope, depth: int) -> set[Symbol]:
        """Definitions a called expression may refer to (functions, methods or classes)."""
        if depth > MAX_DEPTH:
            return set()
        if expr[0] == "n":
            head, *rest = expr[1].split(".")
            local = self.local_types(head, scope, depth)
            if local is not None:
                values = self.local_values(head, scope, depth)
                return self._member_targets(local, rest, scope, depth) | self._value_members(values, rest)
            target = self.resolve_name(scope, expr[1])
            if target is None and (enum := self._enum_member(scope, expr[1])) is not None:
                return self.table.instance_call(enum)  # ``Events.COMPLETED(every=2)``
            return {target} if target is not None else set()
        if expr[0] == "attr":
            if expr[1] == ("call", ("n", "super")):
                return self._super_targets(scope, expr[2])
            classes = self.type_of(expr[1], scope, depth + 1)
            return {m for c in classes if (m := self.table.method(c, expr[2])) is not None}
        if expr[0] == "call":  # ``make()(x)``, ``@engine.on(event)``: calling what a call returned
            instances = {m for c in self.type_of(expr, scope, depth + 1) for m in self.table.instance_call(c)}
            return instances | self._returned_functions(expr[1], scope, depth + 1)
        return set()

    def _returned_functions(self, callee: Expr, scope: Scope, depth: int) -> set[Symbol]:
        """Calling the result of a library function runs its nested function (a decorator
        factory's decorator): what that calls counts as called here."""
        found: set[Symbol] = set()
        for target in self.callee_targets(callee, scope, depth):
            if target.kind == "function" and target.path not in self.support:
                found |= {Symbol("function", *key.split(":", 1)) for key in self.library.nested_callees(target.key)}
        return found

    def resolve_name(self, scope: Scope, dotted: str) -> Symbol | None:
        """A non-local name: through the function's own imports, else the module's names."""
        body = self.bodies.get(scope.fn.path, {}).get(scope.fn.qualname)
        head, *rest = dotted.split(".")
        if body is not None and head in body.imports:
            return self.table.resolve_import(scope.fn.path, ImportRef(*body.imports[head]), rest)
        return self.table.resolve(scope.fn.path, dotted)

    def _member_targets(self, classes: set[Symbol], attrs: list[str], scope: Scope, depth: int) -> set[Symbol]:
        """Calling ``obj.a.b()``: walk instance attributes, then look the method up."""
        if not attrs:  # calling the instance itself
            return {m for c in classes for m in self.table.instance_call(c)}
        for attr in attrs[:-1]:
            classes = self._attr_types(classes, attr, scope.ctx, depth + 1)
        return {m for c in classes if (m := self.table.method(c, attrs[-1])) is not None}

    def _value_members(self, values: set[Symbol], attrs: list[str]) -> set[Symbol]:
        """Calling a name that holds classes or functions (``cls(...)``, ``cls.create(...)``)."""
        if not attrs:
            return values
        if len(attrs) > 1:
            return set()
        return {m for v in values if v.kind == "class" and (m := self.table.method(v, attrs[0])) is not None}

    def _super_targets(self, scope: Scope, name: str) -> set[Symbol]:
        owner = scope.fn.qualname.rpartition(".")[0]
        if not owner:
            return set()
        for cls in self.table.mro(Symbol("class", scope.fn.path, owner))[1:]:
            if name in self.table.class_info(cls).methods:
                return {Symbol("function", cls.path, f"{cls.qualname}.{name}")}
        return set()

    def local_types(self, name: str, scope: Scope, depth: int) -> set[Symbol] | None:
        """Classes a local name may be an instance of; None when the name is not local."""
        owner = scope.fn.qualname.rpartition(".")[0]
        if name == "self" and owner:
            return {scope.self_cls or Symbol("class", scope.fn.path, owner)}
        body = self.bodies.get(scope.fn.path, {}).get(scope.fn.qualname)
        info = self.table.function_info(scope.fn)
        is_param = info is not None and name in info.params
        if not is_param and (body is None or name not in body.bindings):
            return None
        key = (scope, name)
        if key not in self._locals:
            self._locals[key] = set()  # guards ``x = x.f()`` cycles
            found = self._param_types(info, name, scope, depth) if is_param else set()
            for value in body.bindings.get(name, ()) if body else ():
                found |= self.type_of(value, scope, depth + 1)
            self._locals[key] = found
        return self._locals[key]

    def _param_types(self, info: FunctionInfo, name: str, scope: Scope, depth: int) -> set[Symbol]:
        """A parameter's classes: what the caller passed, its annotation, else the fixture of that name."""
        if (passed := dict(scope.args).get(name)) is not None:
            return set(passed)
        annotation = dict(info.annotations).get(name)
        if annotation and (cls := self.table.resolve(scope.fn.path, annotation)) and cls.kind == "class":
            return {cls}
        if name in NOT_FIXTURES or name in self._parametrized(scope, name) or not self._takes_fixtures(scope, info):
            return set()
        fixture = self.fixture_for(scope.ctx, name, scope.fn if is_fixture(info) else None)
        if fixture is None:
            return set()
        return self.return_types(fixture, scope.ctx.cls if "." in fixture.qualname else None, scope.ctx, depth + 1)

    @staticmethod
    def _takes_fixtures(scope: Scope, info: FunctionInfo) -> bool:
        """Whether pytest fills the function's arguments: fixtures, tests and test-class
        methods do; a plain helper function of another module gets them from its caller."""
        return is_fixture(info) or scope.fn.path == scope.ctx.path or "." in scope.fn.qualname

    def _parametrized(self, scope: Scope, name: str) -> dict[str, tuple[str, ...]]:
        """``parametrize`` values of the scope's function (and of its test class) by
        argument name, as dotted names in the function's module."""
        info = self.table.function_info(scope.fn)
        decorators = info.decorators if info else ()
        if scope.ctx.cls is not None and "." in scope.fn.qualname:
            decorators += self.table.class_info(scope.ctx.cls).decorators
        return {arg: names for d in decorators for arg, names in d.values}

    def local_values(self, name: str, scope: Scope, depth: int) -> set[Symbol]:
        """Classes and functions a local name may hold as such (not instances of them): its
        ``parametrize`` values, or names it is bound to (``cls = A``, ``for cls in [A, B]``)."""
        key = (scope, name)
        if key not in self._values:
            self._values[key] = set()  # guards ``a = b; b = a`` cycles
            found = {
                v
                for dotted in self._parametrized(scope, name).get(name, ())
                if (v := self._value(dotted, scope.fn.path))
            }
            body = self.bodies.get(scope.fn.path, {}).get(scope.fn.qualname)
            for value in body.bindings.get(name, ()) if body and depth <= MAX_DEPTH else ():
                found |= self._bound_values(value, scope, depth + 1)
            self._values[key] = found
        return self._values[key]

    def _bound_values(self, value: Expr, scope: Scope, depth: int) -> set[Symbol]:
        if value[0] == "elt" and value[1][0] == "n":  # ``a, b = pair``, ``pair`` parametrized with tuples
            names = self._parametrized(scope, value[1][1]).get(f"{value[1][1]}[{value[2]}]", ())
            return {v for dotted in names if (v := self._value(dotted, scope.fn.path))}
        if value[0] == "elt":  # ``for cls, fn in [(A, f), (B, g)]``
            return set().union(
                *(self._bound_values(e, s, depth + 1) for e, s in self._elements(value[1], value[2], scope, depth))
            )
        if value[0] == "attr":  # ``kernel = make().method``
            return self._bound_methods(self.type_of(value[1], scope, depth + 1), [value[2]], scope, depth)
        if value[0] != "n":
            return set()
        head, *rest = value[1].split(".")
        if (instances := self.local_types(head, scope, depth)) is not None:
            return self._bound_methods(instances, rest, scope, depth) if rest else self.local_values(head, scope, depth)
        target = self.resolve_name(scope, value[1])
        return {target} if target is not None and target.kind in ("class", "function") else set()

    def _bound_methods(self, classes: set[Symbol], attrs: list[str], scope: Scope, depth: int) -> set[Symbol]:
        """``kernel = obj.method``: the methods a later ``kernel(...)`` runs (not properties)."""
        return {m for m in self._member_targets(classes, attrs, scope, depth) if not self._is_property(m)}

    def _value(self, dotted: str, path: str) -> Symbol | None:
        target = self.table.resolve(path, dotted)
        return target if target is not None and target.kind in ("class", "function") else None

    # ---------------------------------------------------------------- syntax

    def special_targets(self, method: str, subject: Expr | None, other: Expr | None, scope: Scope) -> set[Symbol]:
        """The special method syntax runs: the subject's, else the other operand's reflection."""
        found = self._special_methods(subject, method, scope)
        if not found and other is not None:
            found = self._special_methods(other, reflection(method), scope)
        return found

    def _special_methods(self, expr: Expr | None, method: str, scope: Scope) -> set[Symbol]:
        found: set[Symbol] = set()
        for cls in self.type_of(expr, scope, 1) if expr is not None else ():
            target = next((m for name in candidates(method) if (m := self.table.method(cls, name))), None)
            if target is not None:
                found.add(target)
        return found

    def property_targets(self, expr: Expr, scope: Scope) -> set[Symbol]:
        """Properties an attribute chain reads (``obj.a.b``: ``a`` on obj's class, ``b`` on a's)."""
        attrs: list[str] = []
        while expr[0] == "attr":
            attrs.insert(0, expr[2])
            expr = expr[1]
        if expr[0] == "n":
            head, *rest = expr[1].split(".")
            classes = self.local_types(head, scope, 1) or set()
            attrs = rest + attrs
        else:
            classes = self.type_of(expr, scope, 1)
        found: set[Symbol] = set()
        for attr in attrs:
            found |= {p for c in classes if (p := self._property(c, attr)) is not None}
            classes = self._attr_types(classes, attr, scope.ctx, 2) if attr != attrs[-1] else set()
        return found

    def _property(self, cls: Symbol, name: str) -> Symbol | None:
        method = self.table.method(cls, name)
        return method if method is not None and self._is_property(method) else None

    def _is_property(self, method: Symbol) -> bool:
        info = self.table.function_info(method)
        return info is not None and is_property(info)

    # ---------------------------------------------------------------- types

    def type_of(self, expr: Expr, scope: Scope, depth: int) -> set[Symbol]:
        """Classes the value of an expression may be an instance of."""
        if depth > MAX_DEPTH:
            return set()
        kind = expr[0]
        if kind == "ann":
            cls = self.resolve_name(scope, expr[1])
            return {cls} if cls is not None and cls.kind == "class" else set()
        if kind == "n":
            head, *rest = expr[1].split(".")
            classes = self.local_types(head, scope, depth)
            if classes is None:
                return {enum} if (enum := self._enum_member(scope, expr[1])) is not None else set()
            for attr in rest if classes else ():
                classes = self._attr_types(classes, attr, scope.ctx, depth + 1)
            return classes
        if kind == "call":
            found: set[Symbol] = set()
            for target in self.callee_targets(expr[1], scope, depth + 1):
                if target.kind == "class":
                    found.add(target)
                elif target.kind == "function":
                    found |= self.return_types(target, self._self_for(target, scope), scope.ctx, depth + 1)
            return found
        if kind == "attr":
            return self._attr_types(self.type_of(expr[1], scope, depth + 1), expr[2], scope.ctx, depth + 1)
        if kind == "elt":
            return set().union(
                *(self.type_of(e, s, depth + 1) for e, s in self._elements(expr[1], expr[2], scope, depth))
            )
        return set()

    def _elements(self, value: Expr, index: int, scope: Scope, depth: int) -> list[tuple[Expr, Scope]]:
        """Element ``index`` of a tuple value, with the scope it is written in: of a tuple
        display, or of the tuples a test-code function returns (``return ds, x, y``)."""
        if depth > MAX_DEPTH:
            return []
        if value[0] == "tuple":
            item = value[1][index] if index < len(value[1]) else None
            return [(item, scope)] if item is not None else []
        if value[0] != "call":
            return []
        found = []
        for target in self.callee_targets(value[1], scope, depth + 1):
            body = self.bodies.get(target.path, {}).get(target.qualname) if target.kind == "function" else None
            inner = Scope(target, self._self_for(target, scope), scope.ctx)
            for returned in body.returns if body else ():
                found += self._elements(returned, index, inner, depth + 1) if returned[0] == "tuple" else []
            found += self._annotated_element(target, index, inner)
        return found

    def _annotated_element(self, fn: Symbol, index: int, scope: Scope) -> list[tuple[Expr, Scope]]:
        """Element ``index`` of a ``-> tuple[A, B]`` annotation, as an annotated value."""
        info = self.table.function_info(fn) if fn.kind == "function" else None
        elements = info.return_elements if info else ()
        name = elements[index] if index < len(elements) else None
        return [(("ann", name), scope)] if name else []

    def _enum_member(self, scope: Scope, dotted: str) -> Symbol | None:
        """``Color.RED``: a class attribute of a repository ``Enum`` subclass (no method of
        that name) is a member, an instance of the class."""
        owner, _, attr = dotted.rpartition(".")
        cls = self.resolve_name(scope, owner) if owner else None
        if cls is None or cls.kind != "class" or self.table.method(cls, attr) is not None:
            return None
        enum = any(base.rpartition(".")[2] in ENUM_BASES for base in self.table.external_bases(cls))
        return cls if enum else None

    def return_types(self, fn: Symbol, self_cls: Symbol | None, ctx: Context, depth: int) -> set[Symbol]:
        """Classes a function returns: test code by its body, library code by its summary."""
        key = (fn, self_cls, ctx)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = set()  # guards recursion
        body = self.bodies.get(fn.path, {}).get(fn.qualname)
        if body is None:
            found = self.table.return_classes(fn)
        else:
            scope = Scope(fn, self_cls, ctx)
            found = set().union(*(self.type_of(v, scope, depth + 1) for v in body.returns))
            info = self.table.function_info(fn)
            if info is not None and info.returns:
                found |= self.type_of(("ann", info.returns), scope, depth + 1)
        self._returns[key] = found
        return found

    def _attr_types(self, classes: set[Symbol], attr: str, ctx: Context, depth: int) -> set[Symbol]:
        """Types of ``instance.attr``: ``self.attr = ...`` in test-code methods, or what the
        property ``attr`` returns."""
        found: set[Symbol] = set()
        for cls in classes:
            if (prop := self._property(cls, attr)) is not None:
                found |= self.return_types(prop, cls, ctx, depth + 1)
            for item in self.table.mro(cls):
                for qualname, body in self.bodies.get(item.path, {}).items():
                    if qualname.startswith(f"{item.qualname}.") and attr in body.self_attrs:
                        scope = Scope(Symbol("function", item.path, qualname), cls, ctx)
                        for value in body.self_attrs[attr]:
                            found |= self.type_of(value, scope, depth + 1)
        return found


def build_calls(repo: LoadedRepo, cases: list[TestCase], name: str) -> list[CallRecord]:
    """One call record per test case; a case the project always skips reaches nothing."""
    graph = CallGraph(repo, repo.cfg.tested_by, repo.cfg.reach, cases if repo.cfg.test_helpers else None)
    progress = Progress(len(cases), "call graph", unit="test")
    records = []
    for case in cases:
        calls, direct = Reached([], None) if case.skipped else graph.reached(case)
        records.append(CallRecord(repo=name, node_id=case.node_id, calls=calls, direct=direct))
        progress.advance()
    return records


def call_graph_file(
    clone_json: str | Path, tests_jsonl: str | Path, out: str | Path, cfg: MineConfig, parse_cache: str | Path
) -> int:
    """Rule ``call_graph``: clone record + tests → ``calls.jsonl``."""
    clone, repo = load_clone(clone_json, cfg, parse_cache)
    records = build_calls(repo, read_jsonl(tests_jsonl, TestCase), clone.full_name) if repo else []
    return write_jsonl(out, records)
