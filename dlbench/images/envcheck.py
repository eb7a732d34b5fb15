"""Does a built image hold what the project's tests import? (the repair loop's evidence)

The check runs in the image with no network, as the runner: it imports every third-party
module the tests import at module level, then lets pytest collect the whole suite, and
reports every ``No module named 'x'`` either printed. Parsing is a pure function.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MISSING = re.compile(r"No module named '(?P<module>[\w.]+)'")
COLLECT_TAIL_LINES = 2000


def check_script(modules: Iterable[str]) -> str:
    """Shell for the check: import each module, then collect the tests (the project's own
    addopts cleared: they may name plugins whose absence the import check reports)."""
    names = sorted(set(modules))
    probe = (
        "import importlib\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        print(f'import {name}: {type(exc).__name__}: {exc}')\n"
    )
    collect = f"python -m pytest --collect-only -q -p no:cacheprovider -o addopts= 2>&1 | tail -n {COLLECT_TAIL_LINES}"
    return f"cd /work/repo && python -c {_shell_quote(probe)}; {collect}; true"


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def missing_modules(output: str, own: Iterable[str] = ()) -> dict[str, str]:
    """Top-level module → the first line that reports it missing (the project's own
    modules excluded: a missing one of those is the project's problem, not the image's)."""
    ours = set(own)
    found: dict[str, str] = {}
    for line in output.splitlines():
        for match in MISSING.finditer(line):
            top = match["module"].split(".")[0]
            if top not in ours and top not in found:
                found[top] = line.strip()[:300]
    return found
