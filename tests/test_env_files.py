"""pyproject.toml (pip users) and environment.yml (conda users) name the same dependencies."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def names(requirements):
    return {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def conda_pip_names(path):
    env = yaml.safe_load((ROOT / path).read_text())
    conda_pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return names(r for r in conda_pip if not r.startswith("-e"))


def test_dependency_lists_in_step():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    pip = names(project["dependencies"] + extras)
    assert pip == conda_pip_names("environment.yml")
    assert pip == conda_pip_names("workflow/envs/dlbench.yaml")  # the rules' conda environment


def test_required_stack_present():
    pip = names(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    assert {"snakemake", "pygithub", "gitpython", "libcst", "pydantic", "openai", "docker", "pandas", "pytest"} <= pip
