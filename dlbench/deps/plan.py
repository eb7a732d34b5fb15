"""What a project's test environment installs: declared requirements its tests need, plus
every distribution its tests import that no declaration names.

Runtime, test, dev and CI declarations are installed whole, and so is an optional extra
named like a part of the project its tests import (small-text's tests import
``small_text.integrations.transformers``: its ``transformers`` extra, which its noxfile
installs). Other extras and dependency groups whose names say nothing about tests
contribute the entries the tests import (with the version the project declares), anywhere
in a test file (inside ``try`` or a function too); documentation groups contribute nothing
else. The project's own extras (``pkg[extra]`` in its dev requirements) are expanded.
"""

from __future__ import annotations

import configparser
import tomllib
from dataclasses import dataclass, field

from packaging.requirements import Requirement

from dlbench.deps.declared import Declarations, admits_python, canonical_name, declared_requirements, group_kind
from dlbench.deps.imports import any_imports, distribution_for, local_modules, own_module_parts, third_party_imports
from dlbench.deps.tree import SourceTree
from dlbench.records import DeclaredRequirement, DroppedRequirement

WHOLE_GROUPS = ("runtime", "test", "dev", "ci")
# Lower sorts first when a requirement must be dropped to make resolution succeed.
# ``harness``: what the shipped runner itself needs, above anything the project declares.
PRIORITY = {"import": 0, "ci": 1, "optional": 2, "docs": 2, "dev": 3, "test": 4, "repair": 5, "runtime": 6, "harness": 7}  # fmt: skip
# The shipped runner's plugin and supervisor need pytest 6.2 (``CallInfo.from_call``, the
# hooks they wrap): a project pinning an older one (neupy's ``pytest==3.7.2``) loses that pin.
TEST_RUNNER = DeclaredRequirement(
    spec="pytest>=6.2", name="pytest", source="dlbench: the harness runs pytest 6.2 or later", group="harness"
)


@dataclass
class EnvironmentPlan:
    requirements: list[DeclaredRequirement]
    constraints: list[str]
    skipped: list[DroppedRequirement] = field(default_factory=list)
    imports: dict[str, list[str]] = field(default_factory=dict)  # third-party module → test files
    own_names: set[str] = field(default_factory=set)
    local_modules: set[str] = field(default_factory=set)  # names the project's own tree provides
    requires_python: list[str] = field(default_factory=list)  # what the declaration files admit
    system_packages: list[str] = field(default_factory=list)  # Debian packages the repairs added (shared libraries)

    def admits(self, python: str) -> bool:
        return admits_python(self.requires_python, python)

    def own_modules(self) -> set[str]:
        """Top-level modules the project provides itself: a missing one is never the image's fault."""
        return {name.replace("-", "_") for name in self.own_names} | self.local_modules


def project_names(tree: SourceTree) -> set[str]:
    """The project's own distribution names (``[project].name``, setup.cfg ``[metadata] name``)."""
    names = set()
    text = tree.read("pyproject.toml") if tree.exists("pyproject.toml") else None
    if text:
        try:
            names.add(tomllib.loads(text).get("project", {}).get("name", ""))
        except tomllib.TOMLDecodeError:
            pass
    text = tree.read("setup.cfg") if tree.exists("setup.cfg") else None
    if text:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
            names.add(parser.get("metadata", "name", fallback=""))
        except configparser.Error:
            pass
    return {canonical_name(n) for n in names if n}


def plan_environment(tree: SourceTree) -> EnvironmentPlan:
    """The requirements to resolve for running ``tree``'s tests, each with its source."""
    declared = declared_requirements(tree)
    imports = third_party_imports(tree)
    own = project_names(tree)
    imported = {distribution_for(m) for m in third_party_imports(tree, reader=any_imports)}
    chosen = _chosen_declarations(declared, imported, own, own_module_parts(tree))
    covered = {r.name for r in chosen} | own
    for module, files in imports.items():
        dist = distribution_for(module)
        if dist not in covered and canonical_name(module) not in own:
            covered.add(dist)
            chosen.append(
                DeclaredRequirement(spec=dist, name=dist, source=f"import {module} ({files[0]})", group="import")
            )
    chosen.append(TEST_RUNNER)
    return EnvironmentPlan(
        chosen, declared.constraints, declared.skipped, imports, own, local_modules(tree), declared.requires_python
    )


def _chosen_declarations(declared: Declarations, imported: set[str], own: set[str], tested: set[str]) -> list[DeclaredRequirement]:  # fmt: skip
    extras = _own_extras(declared, own)
    chosen = [r for names, _, _ in declared.own_extras for name in sorted(names) for r in extras.get(name, [])]
    chosen += [r for name in sorted(extras) if canonical_name(name) in tested for r in extras[name]]
    for requirement in declared.requirements:
        kind = group_kind(requirement.group)
        if requirement.name in own:
            wanted = Requirement(requirement.spec).extras
            chosen += [r for name in sorted(wanted) for r in extras.get(name, [])]
        elif kind in WHOLE_GROUPS or (kind != "docs" and requirement.name in imported):
            chosen.append(requirement)
    return _unique(chosen)


def _own_extras(declared: Declarations, own: set[str]) -> dict[str, list[DeclaredRequirement]]:
    """``extra name → its requirements`` with the project's self-references expanded."""
    extras: dict[str, list[DeclaredRequirement]] = {}
    for requirement in declared.requirements:
        if requirement.group.startswith("extra:"):
            extras.setdefault(requirement.group[len("extra:") :], []).append(requirement)
    expanded: dict[str, list[DeclaredRequirement]] = {}
    for name in extras:
        expanded[name] = _expand(name, extras, own, set())
    return expanded


def _expand(name: str, extras: dict[str, list[DeclaredRequirement]], own: set[str], visiting: set[str]) -> list[DeclaredRequirement]:  # fmt: skip
    if name in visiting:
        return []
    visiting.add(name)
    out = []
    for requirement in extras.get(name, []):
        if requirement.name in own:
            out += [r for extra in sorted(Requirement(requirement.spec).extras) for r in _expand(extra, extras, own, visiting)]  # fmt: skip
        else:
            out.append(requirement)
    return out


def _unique(requirements: list[DeclaredRequirement]) -> list[DeclaredRequirement]:
    """One entry per spec (and URL it is installed from); the first source wins."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for requirement in requirements:
        if (requirement.spec, requirement.direct_url) not in seen:
            seen.add((requirement.spec, requirement.direct_url))
            out.append(requirement)
    return out


def drop_priority(requirement: DeclaredRequirement) -> int:
    return PRIORITY.get(group_kind(requirement.group), 2)
