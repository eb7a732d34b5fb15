"""The project's own distribution, as its declarations give it: metadata only (deps.own)."""

from __future__ import annotations

from dlbench.deps.own import UNKNOWN_VERSION, own_distribution
from tests.test_deps_declared import tree_of

PYPROJECT = """\
[project]
name = "Acme_Quantum"
dynamic = ["version"]
[project.scripts]
acme = "acme.cli:main"
[project.entry-points."acme.plugins"]
"default.qubit" = "acme.devices:DefaultQubit"
[tool.setuptools.dynamic]
version = {attr = "acme._version.__version__"}
"""


def test_pyproject_entry_points_scripts_and_a_dynamic_version_read_from_its_attribute() -> None:
    own = own_distribution(tree_of({"pyproject.toml": PYPROJECT, "acme/_version.py": '__version__ = "0.41.0-dev3"\n'}))
    assert own is not None and (own.name, own.version) == ("acme-quantum", "0.41.0.dev3")
    assert own.entry_points == {
        "acme.plugins": {"default.qubit": "acme.devices:DefaultQubit"},
        "console_scripts": {"acme": "acme.cli:main"},
    }
    files = own.dist_info()
    assert sorted(files) == [
        f"acme_quantum-0.41.0.dev3.dist-info/{n}" for n in ("INSTALLER", "METADATA", "RECORD", "entry_points.txt")
    ]
    assert files["acme_quantum-0.41.0.dev3.dist-info/entry_points.txt"].decode() == (
        "[acme.plugins]\ndefault.qubit = acme.devices:DefaultQubit\n\n[console_scripts]\nacme = acme.cli:main\n"
    )
    assert b"Name: acme-quantum\nVersion: 0.41.0.dev3\n" in files["acme_quantum-0.41.0.dev3.dist-info/METADATA"]


def test_setup_cfg_and_setup_py_literals_and_a_version_only_the_build_knows() -> None:
    cfg = "[metadata]\nname = tiny\n[options.entry_points]\npytest11 =\n    tiny = tiny.plugin\n"
    setup = (
        "from setuptools import setup\nsetup(name='tiny', version=get_version(), entry_points={'x': ['a = tiny:a']})\n"
    )
    own = own_distribution(tree_of({"setup.cfg": cfg, "setup.py": setup}))
    assert own is not None and own.version == UNKNOWN_VERSION  # setuptools-scm, a function: the build's
    assert own.entry_points == {"pytest11": {"tiny": "tiny.plugin"}, "x": {"a": "tiny:a"}}


def test_a_checkout_that_names_no_distribution_has_none() -> None:
    assert own_distribution(tree_of({"requirements.txt": "numpy\n", "setup.py": "import os\n"})) is None
