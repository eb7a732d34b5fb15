"""The returned-value check wraps the task's function; the wrapper must behave as the function
does for code that reads functions, not only calls them (TorchScript compiles the unwrapped
source against the wrapper's globals and closure)."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types
from pathlib import Path

import torch  # the stage extra, which `make test` installs

from dlbench.harness.shipped.plugin import _checked

SOURCE = """
import torch


def _scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def op(x: torch.Tensor, normalize: bool = False) -> torch.Tensor:
    y = _scale(x)
    if normalize:
        y = y / y.norm()
    return y
"""


def project_module(folder: Path, name: str) -> types.ModuleType:
    """A module imported from a file, as the project's are (TorchScript reads the source)."""
    path = folder / f"{name}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_wrapper_resolves_names_in_the_functions_own_module(tmp_path: Path) -> None:
    module = project_module(tmp_path, "returns_project")
    checked = _checked(module.op)
    assert checked.__globals__ is module.__dict__ and inspect.unwrap(checked) is module.op
    assert checked.__name__ == "op" and inspect.signature(checked) == inspect.signature(module.op)
    assert checked(torch.ones(2)).tolist() == [2.0, 2.0]


def test_torchscript_compiles_the_wrapped_function(tmp_path: Path) -> None:
    """kornia's ``test_jit`` scripts the task's function as the test module holds it: before,
    "undefined value _scale" (the names were looked up in the plugin's globals)."""
    module = project_module(tmp_path, "returns_jit")
    scripted = torch.jit.script(_checked(module.op))
    assert scripted(torch.ones(2), True).tolist() == torch.ones(2).div(2**0.5).tolist()


SIGNATURES = {
    "plain": "def f(a, b=2, *, c=3):\n    return (a, b, c)\n",
    "every kind": "def f(a, /, b, c=1, *rest, d, e=5, **extra):\n    return (a, b, c, rest, d, e, extra)\n",
    "keyword-only, no star": "def f(*, d=4):\n    return d\n",
    "nothing": "def f():\n    return 7\n",
    "method": "class K:\n    def f(self, x=1):\n        return x\n",
}
CALLS = {
    "plain": [((1,), {}), ((1, 5), {"c": 6}), ((), {"a": 1, "b": 2})],
    "every kind": [((1, 2), {"d": 4}), ((1, 2, 3, 9, 9), {"d": 4, "e": 0, "z": 1})],
    "keyword-only, no star": [((), {}), ((), {"d": 0})],
    "nothing": [((), {})],
    "method": [((object(),), {}), ((object(), 3), {})],
}


def source_function(tmp_path: Path, case: str) -> types.FunctionType:
    path = tmp_path / f"sig_{abs(hash(case))}.py"
    path.write_text(SIGNATURES[case])
    namespace: dict = {"__name__": path.stem}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["K"].f if case == "method" else namespace["f"]


def test_the_wrapper_has_the_functions_own_parameters_for_code_that_does_not_unwrap(tmp_path: Path) -> None:
    """tensorly's tests read ``getfullargspec(parafac)`` (which does not follow ``__wrapped__``)
    for its defaulted arguments: the generic ``*args, **kwargs`` wrapper had none, and gold
    failed with ``KeyError: 'return_errors'``."""
    for case, calls in CALLS.items():
        function = source_function(tmp_path, case)
        checked = _checked(function)
        assert inspect.getfullargspec(checked) == inspect.getfullargspec(function), case
        assert (
            checked.__code__.co_varnames[: function.__code__.co_argcount]
            == function.__code__.co_varnames[: function.__code__.co_argcount]
        )
        for args, kwargs in calls:
            assert checked(*args, **kwargs) == function(*args, **kwargs), (case, args, kwargs)


def test_names_that_are_not_identifiers_get_the_generic_wrapper_and_are_never_compiled(tmp_path: Path, capsys) -> None:
    """The names are the candidate's: one crafted to be source (``a=print('owned')``) or one the
    wrapper uses itself must not become code compiled as the plugin's."""
    function = source_function(tmp_path, "plain")
    for first in ("a=print('owned')", "_dlbench_look", "__tracebackhide__"):
        crafted = types.FunctionType(
            function.__code__.replace(co_varnames=(first, "b", "c")), function.__globals__, "f", function.__defaults__
        )
        crafted.__kwdefaults__ = function.__kwdefaults__
        checked = _checked(crafted)
        assert inspect.getfullargspec(checked).varargs == "args", first  # the generic wrapper
        assert checked(1) == (1, 2, 3)
    assert "owned" not in capsys.readouterr().out


def test_a_value_equal_to_anything_is_still_reported_through_the_forwarding_wrapper(
    tmp_path: Path, monkeypatch
) -> None:
    from dlbench.harness.shipped import plugin

    sent = []
    monkeypatch.setattr(plugin, "send", sent.append)
    monkeypatch.setattr(plugin, "_OBSERVED", set())
    path = tmp_path / "cheat.py"
    path.write_text(
        "class Any:\n    def __eq__(self, other):\n        return True\n\ndef f(x, y=1):\n    return Any()\n"
    )
    spec = importlib.util.spec_from_file_location("cheat_returns", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(plugin, "_candidate_origin", lambda value: str(path))
    _checked(module.f)(1, y=2)
    assert [e["what"] for e in sent] == ["the task's function returned an object equal to anything (Any)"]


def test_coroutine_functions_stay_coroutine_functions_and_generators_are_left_alone(tmp_path: Path) -> None:
    """Code that asks what kind of function it holds (``inspect.iscoroutinefunction``, as async
    frameworks do before calling) sees the function's kind; a coroutine's result is looked at
    once awaited."""
    import asyncio

    path = tmp_path / "kinds.py"
    path.write_text("async def co(x, y=2):\n    return x + y\n\ndef gen(n):\n    yield from range(n)\n")
    spec = importlib.util.spec_from_file_location("kinds_returns", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    checked = _checked(module.co)
    assert inspect.iscoroutinefunction(checked) and asyncio.run(checked(1)) == 3
    assert inspect.getfullargspec(checked) == inspect.getfullargspec(module.co)
    assert _checked(module.gen) is module.gen


CHEATS = """
class Same:
    def __eq__(self, other):
        return other is other


class Ints:
    def __eq__(self, other):
        return isinstance(other, int)


class Honest:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Honest) and other.value == self.value


class Out:
    def tolist(self):
        return [[Same()], Same()]


class Later:
    pass


Later.__eq__ = lambda self, other: other is other


class Small:
    def __lt__(self, other):
        return other is other


class Holds:
    def __contains__(self, item):
        return item is item


class Span:
    def __contains__(self, item):
        return isinstance(item, int) and 0 <= item < 10**9


class Agree:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return True
"""


def test_candidate_classes_equal_to_anything_are_reported_wherever_they_are_compared(
    tmp_path: Path, monkeypatch
) -> None:
    """Objects of a class the candidate defines are watched where they are compared, not only
    where the task's function returns them: nested, handed out by a returned object's method,
    equal only to values of the compared type, or given their ``__eq__`` after the class
    statement. The comparison still answers as the class does; an honest class is not reported.
    A class answering for numpy's operations is reported as its class statement runs."""
    import builtins

    from dlbench.harness.shipped import plugin

    sent = []
    monkeypatch.setattr(plugin, "send", sent.append)
    monkeypatch.setattr(plugin, "_OBSERVED", set())
    monkeypatch.setattr(plugin, "_WATCHED_CLASSES", [])
    path = tmp_path / "cheats.py"
    path.write_text(CHEATS)
    monkeypatch.setattr(plugin, "_candidate_origin", lambda code: str(path) if code.co_filename == str(path) else None)
    spec = importlib.util.spec_from_file_location("cheats", path)
    module = importlib.util.module_from_spec(spec)
    builtins.__build_class__ = plugin._build_class  # as attach does in a candidate's process
    try:
        spec.loader.exec_module(module)
    finally:
        builtins.__build_class__ = plugin._BUILD_CLASS
    took_over = "candidate code defined a class that takes over numpy's or torch's operations (Agree.__array_ufunc__)"
    assert [e["what"] for e in sent] == [took_over]  # when its class statement ran
    sent.clear()
    assert module.Honest(1) == module.Honest(1) and not sent
    assert module.Out().tolist() == [[0.0], 2.0]
    assert [e["what"] for e in sent] == ["candidate code made an object equal to anything (Same.__eq__)"]
    assert module.Ints() == 3
    assert sent[-1]["what"] == "candidate code made an object equal to anything (Ints.__eq__)"
    assert module.Small() < 1e-6
    assert sent[-1]["what"] == "candidate code made an object less than anything (Small.__lt__)"
    assert 3 in module.Span() and sent[-1]["what"].endswith("(Small.__lt__)")  # an honest range
    assert 3 in module.Holds()
    assert sent[-1]["what"] == "candidate code made an object containing anything (Holds.__contains__)"
    assert plugin._rewatched_classes() == ["candidate code made an object equal to anything (Later.__eq__)"]


def test_a_mock_nested_in_what_the_function_returns_is_reported(monkeypatch) -> None:
    """``unittest.mock.ANY`` two lists deep, and as a dict's value: asked like a returned one."""
    from unittest.mock import ANY

    from dlbench.harness.shipped import plugin

    sent = []
    monkeypatch.setattr(plugin, "send", sent.append)
    monkeypatch.setattr(plugin, "_OBSERVED", set())
    plugin._look_at([1, [2, (3, ANY)]])
    plugin._look_at({"key": ANY})
    assert [e["what"] for e in sent] == ["the task's function returned an object equal to anything (_ANY)"]
    sent.clear()
    monkeypatch.setattr(plugin, "_OBSERVED", set())
    plugin._look_at([[[[ANY]]]])  # deeper than LOOKED_DEPTH: left to the screen, which refuses unittest.mock
    assert sent == []
