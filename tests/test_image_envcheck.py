"""The image check's evidence of a library release too new for the rest of the lock.

A real Python runs the check's own script (the import probe, then pytest's collection) on a
project whose tests import libraries from a folder laid out as site-packages: one whose own
code raises ``NameError`` at import (transformers 4.52.2 under torch 2.2.1), one importing a
name another library dropped (jinja2 2.11 and markupsafe 2.1), and two whose failures an older
release would not mend (a missing shared library, a missing module); and gold's probe of a
module whose absence the project's own code swallows.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dlbench.config import ImagesConfig
from dlbench.deps.plan import EnvironmentPlan
from dlbench.images.build import addition_steps, exactly_pinned, installed_already, pin_steps, python_too_new
from dlbench.images.envcheck import (
    TooNew,
    check_script,
    missing_libraries,
    missing_modules,
    swallowed_script,
    too_new_libraries,
)
from dlbench.records import DeclaredRequirement, RepairStep
from tests.test_mine_callgraph import write_tree

LIBRARIES = {
    "broken/__init__.py": "from broken.inner import y\n",
    "broken/inner.py": "def parallel():\n    return Replicate\n\n\ny = parallel()\n",
    "dropper/__init__.py": "present = 1\n",
    "old/__init__.py": "from dropper import gone\n",
    "needslib/__init__.py": "raise OSError('libfoo.so.1: cannot open shared object file')\n",
    "optional/__init__.py": "import not_installed_anywhere\n",
    "quiet/__init__.py": "try:\n    import library_option_absent\nexcept ImportError:\n    pass\n",
}
PROJECT = {
    "pkg/__init__.py": "undefined_in_the_project\n",
    "tests/test_broken.py": "import broken\n\n\ndef test_a():\n    pass\n",
    "tests/test_old.py": "import old\n\n\ndef test_b():\n    pass\n",
    "tests/test_machine.py": "import needslib\n\n\ndef test_c():\n    pass\n",
    "tests/test_own.py": "import pkg\n\n\ndef test_d():\n    pass\n",
    "extras/__init__.py": "try:\n    import setfit_absent\n    import winreg\nexcept ImportError:\n    pass\n",
    "tests/test_extras.py": "import extras\nimport quiet\n\n\ndef test_e():\n    pass\n",
}


def check_output(tmp_path: Path, modules: list[str], script=check_script) -> str:
    """What ``script`` (the image check's, by default) prints, run on the project beside the libraries."""
    site = tmp_path / "venv/lib/python3.11/site-packages"
    write_tree(site, LIBRARIES)
    write_tree(tmp_path / "repo", PROJECT)
    env = {**os.environ, "PYTHONPATH": str(site), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    shell = script(modules, root=str(tmp_path / "repo"), copy=str(tmp_path / "copy"))
    return subprocess.run(["sh", "-c", shell], env=env, capture_output=True, text=True, check=True).stdout


def test_a_library_raising_in_its_own_code_at_import_is_too_new(tmp_path: Path) -> None:
    output = check_output(tmp_path, ["broken", "old", "needslib", "optional"])
    # deepchem has a transformers.py of its own: an installed file's failure is still the library's
    found = too_new_libraries(output, own={"pkg", "broken"})
    assert sorted(found) == ["broken", "dropper"]
    assert "NameError: name 'Replicate' is not defined" in found["broken"].reason
    assert "site-packages/broken/inner.py" in found["broken"].reason
    assert found["dropper"].fallback == "old" and "cannot import name 'gone'" in found["dropper"].reason
    # the collection alone shows the same (a test module's import reaches the library)
    assert sorted(too_new_libraries(check_output(tmp_path, []), own={"pkg"})) == ["broken", "dropper"]


def test_a_shared_library_the_system_lacks_is_reported_by_its_file_name(tmp_path: Path) -> None:
    """The loader's words, from the probe and the collection alike: a Debian package is
    missing, not a Python distribution (and no release of the library would help)."""
    for modules in (["needslib", "optional"], []):
        found = missing_libraries(check_output(tmp_path, modules))
        assert list(found) == ["libfoo.so.1"] and "libfoo.so.1: cannot open shared" in found["libfoo.so.1"]
    line = "E   ImportError: /opt/venv/lib/libx.so: libgomp.so.1: cannot open shared object file: No such file"
    assert list(missing_libraries(line)) == ["libgomp.so.1"]  # the library needing it is named first
    assert missing_libraries("E   OSError: [Errno 2] No such file or directory: 'weights.so'") == {}


def test_a_module_the_projects_own_code_swallowed_the_absence_of_is_reported_missing(tmp_path: Path) -> None:
    """small-text's ``integrations.transformers`` goes on without setfit and its tests fail on a
    NameError: collecting their file again names the module, not one a library or the standard
    library probed."""
    assert "setfit_absent" not in check_output(tmp_path, [])  # the image's check: nothing failed
    output = check_output(tmp_path, ["tests/test_extras.py"], swallowed_script)
    found = missing_modules(output, own={"pkg", "extras", "tests"})
    # collected in a writable copy, as a candidate's run is (a plugin writing where it starts)
    assert "setfit_absent" in found and "copy/extras/__init__.py" in found["setfit_absent"]
    assert "library_option_absent" not in found and "winreg" not in found


def test_a_removed_name_is_charged_to_the_library_the_message_names() -> None:
    output = (
        "/opt/venv/lib/python3.11/site-packages/lib/x.py:3: in <module>\n"
        "E   AttributeError: module 'numpy' has no attribute 'in1d'\n"
        "/opt/venv/lib/python3.11/site-packages/ext/__init__.py:1: in <module>\n"
        "E   ImportError: numpy.core.multiarray failed to import\n"
    )
    assert too_new_libraries(output) == {
        "numpy": TooNew("E   AttributeError: module 'numpy' has no attribute 'in1d'"),
    }
    assert too_new_libraries(output.split("\n", 2)[2])["numpy"].release == "2.0"
    runner = "/opt/venv/lib/python3.11/site-packages/_pytest/fixtures.py:1200: in fixture\nE   TypeError: bad\n"
    assert too_new_libraries(runner) == {}  # a test module's misuse of pytest is the project's


def test_a_name_the_projects_own_code_dropped_pins_no_library() -> None:
    """PennyLane's checkout no longer has the QubitDevice that pennylane-qiskit's release imports:
    pinning the plugin lower (two repair rounds did) never brings the name back."""
    output = (
        "/opt/venv/lib/python3.11/site-packages/pennylane_qiskit/qiskit_device.py:30: in <module>\n"
        "E   ImportError: cannot import name 'QubitDevice' from 'pennylane' (/tmp/dlbench-check/pennylane/__init__.py)\n"
        "/opt/venv/lib/python3.11/site-packages/jinja2/filters.py:13: in <module>\n"
        "E   ImportError: cannot import name 'soft_unicode' from 'markupsafe' "
        "(/opt/venv/lib/python3.11/site-packages/markupsafe/__init__.py)\n"
    )
    assert list(too_new_libraries(output, own={"pennylane"})) == ["markupsafe"]


def test_pins_go_below_the_locked_minor_release_or_to_the_importer_when_the_source_is_a_framework() -> None:
    too_new = {
        "broken": TooNew("NameError"),
        "dropper": TooNew("cannot import name", fallback="old"),
        "torch": TooNew("cannot import name 'Replicate'", fallback="transformers"),
        "pkg": TooNew("own"),
    }
    locked = {"broken": "4.52.2", "dropper": "3.0.2", "old": "2.11.3", "torch": "2.2.1", "transformers": "4.52.2"}
    too_new["ownlib"] = TooNew("raised in its installed file", installed=True)
    locked["ownlib"] = "1.2.3"
    steps = pin_steps(too_new, locked, {"pkg", "ownlib"}, [], ImagesConfig(), 1)
    assert [(s.module, s.spec) for s in steps] == [
        ("broken", "broken<4.52"),
        ("dropper", "dropper<3.0"),
        ("transformers", "transformers<4.52"),
        ("ownlib", "ownlib<1.2"),
    ]
    tried = [RepairStep(round=1, module="broken", distribution="broken", reason="", spec="broken<4.52")]
    assert [s.spec for s in pin_steps(too_new, locked, {"pkg"}, tried, ImagesConfig(), 2)] == [
        "dropper<3.0",
        "transformers<4.52",
        "ownlib<1.2",
    ]


def test_a_library_the_project_pins_exactly_is_never_pinned_lower_but_says_the_python_is_too_new() -> None:
    """MONAI pins ``pytorch-ignite==0.4.11``, which fails at its own import on Python 3.11: a
    lower release would override the project's pin; an older Python is the lever."""
    plan = EnvironmentPlan(
        [
            DeclaredRequirement(
                spec="pytorch-ignite==0.4.11", name="pytorch-ignite", source="setup.cfg", group="runtime"
            ),
            DeclaredRequirement(spec="numpy==1.*", name="numpy", source="setup.cfg", group="runtime"),
            DeclaredRequirement(spec="torch>=1.9", name="torch", source="setup.cfg", group="runtime"),
            DeclaredRequirement(spec="other==2.0", name="other", source="repair: x", group="repair"),
            DeclaredRequirement(spec="-jsonnet", name="-jsonnet", source="import _jsonnet (t.py)", group="import"),
        ],
        [],
    )
    exact = exactly_pinned(plan)  # a spec that is no requirement pins nothing (it stopped allennlp's build)
    assert exact == {"pytorch-ignite": "pytorch-ignite==0.4.11"}
    too_new = {"ignite": TooNew("AttributeError: no attribute '_name_'", installed=True), "yaml": TooNew("NameError")}
    locked = {"pytorch-ignite": "0.4.11", "pyyaml": "6.0.2"}
    assert [s.spec for s in pin_steps(too_new, locked, set(), [], ImagesConfig(), 1, exact)] == ["pyyaml<6.0"]
    assert python_too_new(too_new, exact) == [
        "pytorch-ignite==0.4.11, pinned by the project, fails at import (AttributeError: no attribute '_name_')"
    ]


def test_a_name_the_standard_library_lost_says_the_python_is_too_new() -> None:
    output = (
        "import asynctest:\n"
        "/opt/venv/lib/python3.11/site-packages/asynctest/mock.py:433: in _AwaitEvent\n"
        "E   AttributeError: module 'asyncio' has no attribute 'coroutine'. Did you mean: 'coroutines'?\n"
    )
    too_new = too_new_libraries(output)
    assert list(too_new) == ["asyncio"]
    assert python_too_new(too_new, {})[0].startswith("the standard library's asyncio lacks a name a library uses")
    assert python_too_new({"numpy": TooNew("module 'numpy' has no attribute 'in1d'")}, {}) == []


def test_a_module_is_added_once_not_again_after_the_resolver_could_not_keep_it() -> None:
    """deepchem's dqc has no wheel for the image's Python: the round that added it found it
    still missing, and asking for it again only cost a rebuild."""
    missing = {"dqc": "No module named 'dqc'", "yaml": "No module named 'yaml'", "pkg": "own", "numpy": "locked"}
    first = addition_steps(missing, {"numpy": "2.0.0"}, {"pkg"}, [], 1)
    assert [(s.module, s.distribution, s.round) for s in first] == [("dqc", "dqc", 1), ("yaml", "pyyaml", 1)]
    assert addition_steps(missing, {"numpy": "2.0.0", "pyyaml": "6.0"}, {"pkg"}, first, 2) == []
    pinned = RepairStep(round=1, module="dqc", distribution="dqc", reason="", spec="dqc<1.0")  # a pin is no addition
    assert [s.distribution for s in addition_steps({"dqc": "missing"}, {}, set(), [pinned], 2)] == ["dqc"]


def test_a_module_the_installed_release_lacks_says_so() -> None:
    """No step for a module whose distribution the lock holds; the log says the installed
    release lacks it, not that a rebuild is under way."""
    missing = {"gpytorch": "No module named 'gpytorch.likelihoods.hadamard_gaussian_likelihood'", "pkg": "own"}
    assert addition_steps(missing, {"gpytorch": "1.14"}, {"pkg"}, [], 1) == []
    (line,) = installed_already(missing, {"gpytorch": "1.14"}, {"pkg"})
    assert "gpytorch==1.14 is installed and lacks it" in line and "hadamard_gaussian_likelihood" in line
    assert installed_already({"yaml": "No module named 'yaml'"}, {}, set()) == []  # not installed: added instead
