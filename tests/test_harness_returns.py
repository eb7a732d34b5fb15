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
