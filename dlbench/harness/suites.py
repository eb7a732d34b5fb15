"""Which pytest session each of a task's tests runs in.

pytest reads its configuration from the file nearest its arguments (``pytest.ini``, a
``pyproject.toml`` or ``tox.ini`` or ``setup.cfg`` with a pytest section), and a folder with
a configuration of its own is a suite the project runs by itself. nncf's ``tests/torch`` and
``tests/tensorflow`` each have a ``pytest.ini`` and a conftest adding the same options: one
session over both ends at start-up (``option names {'--run-openvino-eval'} already added``),
and every test of a task reaching both frameworks was lost. A task whose tests are under
several configurations runs them in one session each, as the project's CI does, each under
its own configuration.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

# pytest's order (``_pytest.config.findpaths.locate_config``): in each folder from the test's
# up to the repository's root, the first of these that configures pytest is the one it reads.
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
INI_SECTIONS = {"tox.ini": "pytest", "setup.cfg": "tool:pytest"}


def sessions(checkout: Path, tests: Sequence[str]) -> list[list[str]]:
    """``tests`` split by the configuration file pytest reads for each (in first-seen order);
    one list when they share one, as in nearly every project."""
    groups: dict[str | None, list[str]] = {}
    for test in tests:
        groups.setdefault(config_file(checkout, test.split("::")[0]), []).append(test)
    return list(groups.values())


def config_file(checkout: Path, test_file: str) -> str | None:
    """The repository-relative configuration file pytest reads for ``test_file``, if any."""
    folder = PurePosixPath(test_file).parent
    for base in (folder, *folder.parents):
        for name in CONFIG_FILES:
            rel = (base / name).as_posix()
            if _configures_pytest(str(checkout / rel)):
                return rel
    return None


@lru_cache(maxsize=1024)
def _configures_pytest(path: str) -> bool:
    file = Path(path)
    if not file.is_file():
        return False
    if file.name in ("pytest.ini", ".pytest.ini"):  # pytest reads these even without a [pytest] section
        return True
    try:
        if file.name == "pyproject.toml":
            return "pytest" in tomllib.loads(file.read_text(encoding="utf-8")).get("tool", {})
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.read_string(file.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, configparser.Error):  # pytest would refuse it too: it configures nothing here
        return False
    return parser.has_section(INI_SECTIONS[file.name])
