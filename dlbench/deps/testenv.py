"""The environment variables a project's own test runs set: part of its test environment.

A suite may only work with a variable its runner sets: a CI step's ``env:``, tox's
``setenv``, a nox session's ``session.env``, or a runner module that CI calls
(``python -m pkg.tests.run_tests``) and that sets ``os.environ[...]`` before calling pytest.
Without it every test can fail at collection. Read statically, literal values only; the
first source in ``SOURCES`` order wins, a variable the sandbox owns (home, paths, threads)
or one that looks like a credential is never taken, and values CI computes
(``${{ matrix.x }}``, ``{toxinidir}``) are left out.
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from dlbench.deps.declared import CI_FILES
from dlbench.parsing import PARSE_ERRORS, parse_ast, read_source

SANDBOX_OWNED = frozenset({
    "HOME", "PATH", "PYTHONPATH", "TMPDIR", "TMP", "TEMP", "PWD", "USER", "SHELL", "LANG", "PYTHONDONTWRITEBYTECODE",
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MPLCONFIGDIR", "TORCH_HOME", "HF_HOME",
    "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
})  # fmt: skip
OWNED_PREFIXES = ("GITHUB_", "RUNNER_", "XDG_", "CI_", "ACTIONS_", "SSL_", "REQUESTS_CA")
CREDENTIAL = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|ACCESS_KEY|CREDENTIAL|AUTH", re.IGNORECASE)
COMPUTED = re.compile(r"\$\{\{|\$\(|\{[a-z_]+[}:]|\$[A-Za-z_{]")  # CI expressions, tox substitutions, shell variables
RUNS_TESTS = re.compile(r"\bpy\.?test\b|\bunittest\b|run_?tests|\btox\b|\bnox\b")
PYTHON_RUN = re.compile(r"\bpython3?\s+(?:-m\s+(?P<module>[\w.]+)|(?P<script>[\w./-]+\.py))")
MAX_VALUE = 500
ACCELERATOR = re.compile(r"\b(?:gpu|cuda|tpu)", re.IGNORECASE)


def runner_environment(root: Path) -> dict[str, str]:
    """Variable → value the project's test runs set, read from its files."""
    found: dict[str, str] = {}
    for name, value in _all(root):
        if name not in found and _takes(name, value):
            found[name] = value
    return found


def _takes(name: str, value: str) -> bool:
    owned = name in SANDBOX_OWNED or name.startswith(OWNED_PREFIXES) or bool(CREDENTIAL.search(name))
    return (
        not owned
        and len(value) <= MAX_VALUE
        and not COMPUTED.search(value)
        and re.fullmatch(r"[A-Za-z_]\w*", name) is not None
    )


def _all(root: Path) -> Iterator[tuple[str, str]]:
    """Every (name, value), most specific source first: runner modules CI calls, CI steps,
    jobs and workflows, nox sessions, tox."""
    docs = ci_documents(root)
    for doc in docs:
        for command in _ci_commands(doc):
            yield from _runner_variables(root, command)
    for doc in docs:
        yield from _ci_variables(doc)
    yield from _nox_variables(root / "noxfile.py")
    yield from _tox_variables(root)


def ci_documents(root: Path) -> list[dict]:
    """The project's CI files (workflows, pipelines), parsed; one that does not parse is empty."""
    return [_yaml(p) for p in sorted(root.rglob("*.y*ml")) if CI_FILES.search(p.relative_to(root).as_posix())]


def testing_jobs(doc: dict) -> list[dict]:
    """The jobs of a CI file that run tests, but those on accelerators."""
    return [job for job in _jobs(doc) if _testing_steps(job)]


def _yaml(path: Path) -> dict:
    try:
        doc = yaml.safe_load(path.read_text(errors="replace"))
    except (yaml.YAMLError, OSError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _jobs(doc: dict) -> list[dict]:
    """The workflow's jobs but those on accelerators (by the job's key, name or runner):
    their settings are for hardware the sandbox has not (PennyLane's ``gpu-tests`` job on
    ``single-gpu-x64`` sets ``SUITE: gpu``)."""
    jobs = doc.get("jobs")
    every = [(key, j) for key, j in jobs.items() if isinstance(j, dict)] if isinstance(jobs, dict) else []
    return [j for key, j in every if not ACCELERATOR.search(f"{key} {j.get('name', '')} {j.get('runs-on', '')}")]


def _testing_steps(job: dict) -> list[dict]:
    steps = job.get("steps") if isinstance(job.get("steps"), list) else []
    return [s for s in steps if isinstance(s, dict) and RUNS_TESTS.search(str(s.get("run") or ""))]


def _ci_commands(doc: dict) -> Iterator[str]:
    for job in _jobs(doc):
        for step in _testing_steps(job):
            yield str(step["run"])


def _ci_variables(doc: dict) -> Iterator[tuple[str, str]]:
    """``env:`` of the steps that run tests, then of their jobs, then of the workflow."""
    testing = [(job, _testing_steps(job)) for job in _jobs(doc)]
    for _, steps in testing:
        yield from _shared_step_variables(steps)
    for job, steps in testing:
        if steps:
            yield from _pairs(job.get("env"))
    if any(steps for _, steps in testing):
        yield from _pairs(doc.get("env"))


def _shared_step_variables(steps: list[dict]) -> Iterator[tuple[str, str]]:
    """What every test step of a job sets alike: a variable one step sets is for that step's
    own tests (numpyro's tracer-leak step sets ``JAX_CHECK_TRACER_LEAKS`` for four tests; on
    every test it slows jax's tracing and fails tests the suite passes)."""
    first, *rest = [dict(_pairs(step.get("env"))) for step in steps] or [{}]
    yield from ((name, value) for name, value in first.items() if all(other.get(name) == value for other in rest))


def _pairs(block: object) -> Iterator[tuple[str, str]]:
    if isinstance(block, dict):
        for name, value in block.items():
            if isinstance(value, (str, int, float, bool)):
                yield str(name), str(value).lower() if isinstance(value, bool) else str(value)


def _runner_variables(root: Path, command: str) -> Iterator[tuple[str, str]]:
    """``os.environ`` settings of a Python module or script a test command runs (``python -m
    pkg.tests.run_tests``), when it runs pytest itself."""
    for found in PYTHON_RUN.finditer(command):
        module, script = found["module"], found["script"]
        candidates = [root / script] if script else [root / Path(*module.split(".")).with_suffix(".py"),
                                                      root / Path(*module.split(".")) / "__main__.py"]  # fmt: skip
        for path in candidates:
            if path.is_file():
                yield from _python_variables(path, require_pytest=True)


def _python_variables(path: Path, require_pytest: bool) -> Iterator[tuple[str, str]]:
    try:
        source = read_source(path)
        tree = parse_ast(source)
    except (*PARSE_ERRORS, OSError):
        return
    if require_pytest and "pytest" not in source:
        return
    for node in ast.walk(tree):
        yield from _environ_settings(node)


def _environ_settings(node: ast.AST) -> Iterator[tuple[str, str]]:
    """``os.environ["X"] = "v"``, ``os.environ.setdefault("X", "v")``, ``os.environ.update(X="v")``,
    ``session.env["X"] = "v"`` and ``env={"X": "v"}`` keywords, literal strings only."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and _is_environ(target.value):
                yield from _literal_pair(target.slice, node.value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_environ(node.func.value):
        if node.func.attr == "setdefault" and len(node.args) == 2:
            yield from _literal_pair(*node.args)
        elif node.func.attr == "update":
            yield from _literal_dict(node.args[0] if node.args else None)
            yield from (
                (k.arg, v.value)
                for k in node.keywords
                if k.arg and isinstance(v := k.value, ast.Constant) and isinstance(v.value, str)
            )
    elif isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == "env":
                yield from _literal_dict(keyword.value)


def _is_environ(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("environ", "env")


def _literal_pair(key: ast.expr, value: ast.expr) -> Iterator[tuple[str, str]]:
    if isinstance(key, ast.Constant) and isinstance(value, ast.Constant) and isinstance(key.value, str):
        if isinstance(value.value, str | int | float):
            yield key.value, str(value.value)


def _literal_dict(node: ast.expr | None) -> Iterator[tuple[str, str]]:
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:
                yield from _literal_pair(key, value)


def _nox_variables(path: Path) -> Iterator[tuple[str, str]]:
    if path.is_file():
        yield from _python_variables(path, require_pytest=True)


def _tox_variables(root: Path) -> Iterator[tuple[str, str]]:
    """``setenv`` of tox's ``[testenv]`` (tox.ini, or setup.cfg's ``[testenv]``)."""
    for name in ("tox.ini", "setup.cfg"):
        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read(root / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_option("testenv", "setenv"):
            for line in parser.get("testenv", "setenv").splitlines():
                key, sep, value = line.partition("=")
                if sep and key.strip() and not key.strip().startswith(("#", "-")):
                    yield key.strip(), value.strip()
