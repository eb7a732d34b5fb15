"""The plugin's per-test checks, made cheap (issue 25: pyro's tests spent 7 ms each in them),
still see every change: unit tests on the plugin module itself (the Docker hostile cases in
test_harness_hardening.py and test_harness_integrity.py run the whole child)."""

from __future__ import annotations

import builtins
import math
import operator
import os
import sys
import types
import warnings
from pathlib import Path
from unittest import mock

import pytest

from dlbench.harness.shipped import plugin


@pytest.fixture
def trusted():
    """The compared-with modules trusted as they are now; the plugin's view reset afterwards."""
    plugin.trust_attributes()
    yield
    plugin.trust_attributes()


def test_unchanged_namespaces_report_nothing_and_a_later_mock_is_seen(trusted, monkeypatch):
    assert plugin._foreign_attributes() == []
    assert plugin._foreign_attributes() == []  # the fast path: one comparison for all namespaces
    monkeypatch.setattr(math, "isclose", mock.Mock())
    assert plugin._foreign_attributes() == ["math.isclose is a unittest.mock object"]
    assert plugin._foreign_attributes() == []  # examined once; unchanged since


def test_a_method_replaced_in_a_compared_class_is_seen(trusted, monkeypatch):
    approx = type(pytest.approx(0.0))
    label = f"{approx.__module__}.{approx.__name__}"
    monkeypatch.setattr(approx, "__eq__", mock.Mock())
    assert f"{label}.__eq__ is a unittest.mock object" in plugin._foreign_attributes()


def test_replacing_the_builtins_the_comparison_uses_does_not_blind_it(trusted, monkeypatch):
    """``all`` and ``operator.is_`` are themselves compared-with attributes: the fast path
    uses the ones captured at import, so replacing them is seen like any other change."""
    monkeypatch.setattr(builtins, "all", mock.Mock(return_value=True))
    monkeypatch.setattr(operator, "is_", mock.Mock(return_value=True))
    monkeypatch.setattr(builtins, "zip", mock.Mock(return_value=iter(())))
    found = plugin._foreign_attributes()
    assert {f"builtins.{name} is a unittest.mock object" for name in ("all", "zip")} <= set(found)
    assert "operator.is_ is a unittest.mock object" in found


def test_an_attribute_renamed_in_place_is_a_change():
    """Same values in the same order under other names, or a size moved between namespaces:
    neither compares as unchanged."""
    before = plugin._contents({"a": math, "b": os})
    assert plugin._same(before, plugin._contents({"a": math, "b": os}))
    assert not plugin._same(before, plugin._contents({"a": math, "c": os}))
    assert not plugin._same(before, plugin._contents({"a": math}))
    assert not plugin._same(None, before)


def test_module_files_resolve_through_linked_folders_and_files(tmp_path: Path):
    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    (real / "pkg" / "mod.py").write_text("")
    (tmp_path / "linked").symlink_to(real)
    (real / "pkg" / "alias.py").symlink_to(real / "pkg" / "mod.py")
    folders: dict[str, str] = {}
    for name in ("linked/pkg/mod.py", "real/pkg/alias.py", "linked/pkg/alias.py"):
        module = types.ModuleType("m")
        module.__file__ = str(tmp_path / name)
        assert plugin._file_of(module, folders) == os.path.realpath(module.__file__) == str(real / "pkg" / "mod.py")
    assert folders[str(tmp_path / "linked" / "pkg")] == str(real / "pkg")


def _fake_torch(available: bool, warns: bool = False) -> types.ModuleType:
    def is_available() -> bool:
        if warns:
            warnings.warn("CUDA initialization: driver too old", UserWarning, stacklevel=1)
        return available

    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=is_available)
    torch.manual_seed = mock.Mock(name="manual_seed")
    torch.random = types.SimpleNamespace(default_generator=mock.Mock(name="default_generator"))
    return torch


@pytest.mark.parametrize("available", [True, False])
def test_torch_is_seeded_whole_only_where_a_device_exists(monkeypatch, available):
    torch = _fake_torch(available)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(plugin, "_DEVICES", [None])
    plugin.seed_generators(7)
    plugin.seed_generators(7)
    whole, cpu = torch.manual_seed, torch.random.default_generator.manual_seed
    assert (whole.call_count, cpu.call_count) == ((2, 0) if available else (0, 2))


def test_the_device_probe_waits_for_torch_to_be_imported(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(plugin, "_DEVICES", [None])
    plugin.seed_generators(7)
    assert plugin._DEVICES == [None]
    monkeypatch.setitem(sys.modules, "torch", torch := _fake_torch(False))
    plugin.seed_generators(7)
    assert plugin._DEVICES == [False] and torch.random.default_generator.manual_seed.call_count == 1


def test_probing_for_a_device_raises_no_warning_into_the_test(monkeypatch):
    """A project's ``filterwarnings = error`` would fail the test the seed is set for."""
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(False, warns=True))
    monkeypatch.setattr(plugin, "_DEVICES", [None])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plugin.seed_generators(7)


def test_the_cpu_seed_gives_the_state_torch_manual_seed_gives(monkeypatch):
    torch = pytest.importorskip("torch")  # the stage environment has it (make test installs it)
    if torch.cuda.is_available():
        pytest.skip("a machine with a CUDA device seeds torch whole")
    monkeypatch.setattr(plugin, "_DEVICES", [None])
    plugin.seed_generators(11)
    ours = torch.rand(4)
    torch.manual_seed(11)
    assert torch.equal(ours, torch.rand(4))
    assert plugin._DEVICES == [False]


def test_only_classes_written_in_python_are_watched_with_their_module():
    """A class written in C (``builtins.int``) cannot have its methods replaced; a Python one
    (``unittest.TestCase``) is watched like its module."""
    labels = {label for label, _, _ in plugin._compared_namespaces()}
    assert {"builtins", "unittest.case.TestCase"} <= labels
    assert "builtins.int" not in labels
