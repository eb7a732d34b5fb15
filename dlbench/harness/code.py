"""The harness's own code whose change must redo work, read without importing it.

``support_files`` ship into every project image (``/opt/dlbench``: the supervisor and the
pytest plugin); the grader files decide verdicts on the host. The workflow passes their
digests as params, so a new dlbench rebuilds images and re-evaluates exactly when they change.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIPPED = HERE / "shipped"
SUPPORT_FILES = ("supervisor.py", "plugin.py", "dlbench_guard.py")
# Shipped under a name no project's module takes: the image's support folder is on sys.path.
PROTOCOL = "protocol.py"
SHIPPED_PROTOCOL = "dlbench_protocol.py"
GRADER_FILES = ("verdict.py", "screen.py", PROTOCOL)
DS1000_RUNNER = "ds1000_runner.py"  # the DS-1000 image's only runner file (harness/ds1000.py)


def support_files() -> dict[str, bytes]:
    """Trusted files for ``/opt/dlbench`` in every project image (``build_project_image``)."""
    return _read(SHIPPED, SUPPORT_FILES) | {SHIPPED_PROTOCOL: (HERE / PROTOCOL).read_bytes()}


def ds1000_support_files() -> dict[str, bytes]:
    """Trusted files for ``/opt/dlbench`` in the DS-1000 environment image: its test program's runner."""
    return _read(SHIPPED, (DS1000_RUNNER,))


def grader_files() -> dict[str, bytes]:
    return _read(HERE, GRADER_FILES)


def _read(folder: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names}
