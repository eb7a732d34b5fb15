"""What the host's grader and the code run in the container (supervisor, pytest plugin) agree on.

Plain Python with no imports: it ships into every project image beside the supervisor as
``dlbench_protocol.py`` (a name no project's module takes; ``code.support_files``), and the
host imports it as ``dlbench.harness.protocol``, so grading never imports pytest or the
in-container code.
"""

from __future__ import annotations

OWN_DIR = ".dlbench"  # in a candidate's copy: its TMPDIR, HOME, basetemp and canary file


def canary_file(nonce: str) -> str:
    """The canary test file of one run, relative to the copy."""
    return f"{OWN_DIR}/test_dlbench_canary_{nonce}.py"


def selects(node_id: str, selected: list[str]) -> bool:
    """``node_id`` is a selected id, one of its parametrized cases, or inside a selected class."""
    return any(node_id == s or node_id.startswith((s + "[", s + "::")) for s in selected)
