"""The package's floors (docs/CONTRIBUTING.md): every import of ours goes to a lower floor,
nothing on the host imports the code that runs beside the candidate, and the package never
imports snakemake. Read from the source with ``ast``: nothing is imported to check it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dlbench"
# Floor of each part (a module of the ground floor, a stage package, or one of the two
# sub-packages that sit apart from their package). A part imports only lower floors.
FLOORS = {
    "records": 0, "logs": 0, "parsing": 0, "testfiles": 0, "config": 0,
    "store": 1, "deps": 1, "subset": 1, "encoders": 1,
    "standins": 2, "llm": 2, "mine": 2, "images": 2,
    "collect": 3, "tasks": 3, "generate": 3, "harness": 3,
    "generate.mutation_agreement": 4, "trace": 4, "report": 4,
    "run": 5, "standalone": 5, "ds1000": 5,
    "cli": 6,
}  # fmt: skip
SHIPPED = "harness.shipped"
PROTOCOL = "dlbench.harness.protocol"


def part(module: str) -> str:
    """``dlbench.generate.mutation_agreement.technique`` → ``generate.mutation_agreement``."""
    names = module.split(".")[1:]
    if names[:2] in (["generate", "mutation_agreement"], ["harness", "shipped"]):
        return ".".join(names[:2])
    return names[0]


def module_name(path: Path) -> str:
    names = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(names[:-1] if names[-1] == "__init__" else names)


def imports(path: Path) -> set[str]:
    """Every module an import statement of ``path`` names (absolute imports: we use no others)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


MODULES = {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py")) if p != PACKAGE / "__init__.py"}
OURS = {m: {i for i in found if i.startswith("dlbench.") and i in MODULES} for m, found in MODULES.items()}


def test_every_part_has_a_floor():
    assert {part(m) for m in MODULES} <= set(FLOORS) | {SHIPPED}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if part(m) != SHIPPED))
def test_imports_go_to_lower_floors(module):
    here = part(module)
    upward = sorted(i for i in OURS[module] if part(i) != here and FLOORS.get(part(i), 99) >= FLOORS[here])
    assert not upward, f"{module} (floor {FLOORS[here]}) imports {upward}"


def test_nothing_imports_the_code_that_runs_beside_the_candidate():
    host = {m: found for m, found in OURS.items() if part(m) != SHIPPED}
    assert not {
        m: sorted(i for i in found if part(i) == SHIPPED)
        for m, found in host.items()
        if any(part(i) == SHIPPED for i in found)
    }
    shipped = {i for m, found in OURS.items() if part(m) == SHIPPED for i in found}
    assert shipped <= {PROTOCOL}, "the shipped code imports only the protocol"
    outside = {i for i in MODULES[PROTOCOL] if i.split(".")[0] not in sys.stdlib_module_names}
    assert not outside, "the protocol ships alone: it imports the standard library only"


def test_records_import_nothing_of_ours_and_no_module_imports_snakemake():
    assert not OURS["dlbench.records"]
    assert not [m for m, found in MODULES.items() if any(i.split(".")[0] == "snakemake" for i in found)]
