#!/usr/bin/env python
"""Mining throughput benchmark (not a test): synthetic repository and, optionally, a real one.

Generates a large synthetic repository (package modules plus test modules that call them
in every style the call graph resolves: module aliases, from-imports, re-exports,
relative imports in the library, constructors, methods on bound objects, fixtures from
conftest.py, unittest setUp, parametrize, helpers) with a dated git history, then mines it
with a cold cache, a warm cache (nothing changed) and after one test file changed. Each
run is a fresh child process so its peak memory is measured alone: max RSS of the child
plus the largest of its worker processes (``getrusage`` SELF + CHILDREN, an upper bound
of the tree's peak). The baseline, in the same invocation, is plain ``ast.parse`` of every
file on one core.

    python bench/bench_mining.py [--modules 200] [--test-files 100] [--real kornia]

``--real NAME`` downloads NAME's source distribution from PyPI with pip (no binaries),
and mines it (no git history there: no dates). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

PHASES = ("parse", "tests", "call graph", "extract")  # seconds per phase, from MineResult
TARGETS = {"cold lines/s": 3000.0, "warm s": 5.0, "peak MiB": 2048.0}

# ---------------------------------------------------------------- synthetic repository

COMMON = '''\
"""Shared helpers of the synthetic package."""
from __future__ import annotations


def clamp(value, low, high):
    """Clamp ``value`` to ``[low, high]``."""
    return max(low, min(high, value))


class Base:
    """Root of every synthetic model."""

    def __init__(self, size):
        self.size = size
        self.steps = 0

    def describe(self) -> str:
        """A one-line description."""
        return f"{type(self).__name__}(size={self.size}, steps={self.steps})"
'''


def library_module(sub: int, k: int, n_functions: int) -> str:
    lines = [
        f'"""Synthetic module {k} of sub-package {sub}."""',
        "from __future__ import annotations",
        "",
        "import math",
        "",
        "from ..common import Base, clamp",
        "",
    ]
    for i in range(n_functions):
        lines += [
            "",
            f"def f_{k}_{i}(x, y=1):",
            f'    """Function {i} of module {k}: a small numeric kernel."""',
            "    total = 0.0",
            "    for j in range(3):",
            "        value = x * j + y",
            "        if value > 10:",
            "            value = math.sqrt(value)",
            "        elif value < 0:",
            "            value = -value",
            "        total += clamp(value, 0, 100)",
            "    scaled = total / 3.0",
            "    if scaled > 50:",
            "        scaled -= 1",
            f"    return scaled + {i}",
            "",
        ]
    lines += [
        "",
        f"class Model{k}(Base):",
        f'    """Model {k}."""',
        "",
        "    def __init__(self, size, rate=0.1):",
        "        super().__init__(size)",
        "        self.rate = rate",
        "        self.weights = [0.0] * size",
        "",
        "    def forward(self, x):",
        '        """Weighted sum."""',
        "        out = 0.0",
        "        for w in self.weights:",
        "            out += w * x",
        "        return out",
        "",
        "    def step(self):",
        "        self.steps += 1",
        "        self.weights = [w + self.rate for w in self.weights]",
        "        return self",
        "",
        f"    def clone(self) -> Model{k}:",
        f"        return Model{k}(self.size, self.rate)",
        "",
        "",
        f"class Layer{k}:",
        "    def __init__(self, width):",
        "        self.width = width",
        "",
        "    def apply(self, values):",
        "        return [v * self.width for v in values]",
        "",
    ]
    return "\n".join(lines) + "\n"


def test_module(sub: int, k: int, n_functions: int, tests_per_file: int) -> str:
    lines = [
        "import unittest",
        "",
        "import numpy as np",
        "import pytest",
        "",
        "import synth as sy",
        f"from synth.sub{sub} import mod{k} as m",
        f"from synth.sub{sub}.mod{k} import Layer{k}, Model{k}, f_{k}_1 as alias_f",
        "",
        "",
        "def _helper(x):",
        f"    return m.f_{k}_2(x, 2)",
        "",
        "",
        "@pytest.fixture",
        f"def model() -> Model{k}:",
        f"    return Model{k}(3)",
        "",
    ]
    classes: list[str] = []
    for i in range(tests_per_file):
        style = i % 7
        if style == 0:
            lines += ["", f"def test_attr_{i}():", f"    assert m.f_{k}_{i % n_functions}({i}) >= 0", ""]
        elif style == 1:
            lines += ["", f"def test_alias_{i}():", f"    assert alias_f({i}, y=2) >= 0", ""]
        elif style == 2:
            lines += ["", f"def test_reexport_{i}():", f"    assert sy.sub{sub}.f_{k}_0(np.float64({i})) >= 0", ""]
        elif style == 3:
            lines += [
                "",
                '@pytest.mark.parametrize("v", [1, 2, 3])',
                f"def test_param_{i}(v):",
                "    assert _helper(v) >= 0",
                "",
            ]
        elif style == 4:
            lines += [
                "",
                f"def test_fixture_{i}(model, base_model):",
                f"    model.forward({i})",
                "    assert model.describe()",
                "",
            ]
        elif style == 5:
            classes += [
                f"    def test_bound_{i}(self):",
                f"        obj = Model{k}({i % 5 + 1})",
                "        obj.step().clone()",
                "",
            ]
        else:
            classes += [
                f"    def test_unit_{i}(self):",
                "        self.assertEqual(len(self.layer.apply([1, 2])), 2)",
                "",
            ]
    lines += [
        "",
        f"class TestModel{k}(unittest.TestCase):",
        "    def setUp(self):",
        f"        self.layer = Layer{k}(2)",
        "",
    ]
    return "\n".join(lines + classes) + "\n"


CONFTEST = """\
import pytest

from synth.common import Base


@pytest.fixture
def base_model() -> Base:
    return Base(4)
"""


def generate_repo(root: Path, modules: int, test_files: int, n_functions: int = 22, tests_per_file: int = 25) -> None:
    """Write the synthetic repository and give it a two-commit dated history."""
    subs = max(1, modules // 20)

    def write(rel: str, text: str) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)

    write("synth/common.py", COMMON)
    write("synth/__init__.py", "".join(f"from . import sub{s}\n" for s in range(subs)))
    for s in range(subs):
        ks = [k for k in range(modules) if k % subs == s]
        write(f"synth/sub{s}/__init__.py", "".join(f"from .mod{k} import *\n" for k in ks))
        for k in ks:
            write(f"synth/sub{s}/mod{k}.py", library_module(s, k, n_functions))
    for t in range(test_files):
        k = t % modules
        write(f"tests/test_mod{k}_{t}.py", test_module(k % subs, k, n_functions, tests_per_file))
    write("tests/conftest.py", CONFTEST)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "initial", date="2022-01-10T10:00:00+00:00")
    for k in range(0, modules, 10):  # a second commit touching one function in every tenth module
        path = root / f"synth/sub{k % subs}/mod{k}.py"
        path.write_text(path.read_text().replace("    return scaled + 0\n", "    return scaled + 0.0\n"))
    _git(root, "commit", "-qam", "tweak", date="2023-06-01T10:00:00+00:00")


def _git(root: Path, *args: str, date: str | None = None) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="b@x",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="b@x",
    )
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


# ---------------------------------------------------------------- measurements


def ast_baseline(root: Path) -> dict:
    from dlbench.mine.symbols import list_python_files

    start = time.perf_counter()
    lines = 0
    for rel in list_python_files(root):
        source = (root / rel).read_bytes()
        lines += source.count(b"\n")
        try:
            ast.parse(source)
        except SyntaxError:
            pass
    return {"seconds": time.perf_counter() - start, "lines": lines}


def child_run(root: str, cache: str, workers: int, dates: bool) -> None:
    """Body of one measured run (in a fresh process): mine and print figures as JSON."""
    from dlbench.config import MineConfig
    from dlbench.mine.api import mine
    from dlbench.mine.history import head_sha

    start = time.perf_counter()
    result = mine(
        Path(root),
        "bench/synthetic",
        head_sha(Path(root)) if dates else None,
        3,
        MineConfig(workers=workers),
        cache,
        dates,
    )
    seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": seconds,
                "files": result.stats.files,
                "lines": result.stats.lines,
                "parsed": result.stats.parsed,
                "tests": len(result.tests),
                "functions": len(result.functions),
                "dated": sum(f.first_added is not None for f in result.functions),
                "peak_mib": (own + workers_rss) / 1024,
                "phases": result.seconds,
            }
        )
    )


def measured(root: Path, cache: Path, workers: int, dates: bool) -> dict:
    args = [sys.executable, __file__, "--child", str(root), str(cache), str(workers), str(int(dates))]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"mining run failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def scenario(
    label: str, root: Path, cache: Path, workers: int, dates: bool, change: Path | None
) -> list[tuple[str, dict]]:
    rows = [(f"{label}: cold cache", measured(root, cache, workers, dates))]
    rows.append((f"{label}: warm cache, nothing changed", measured(root, cache, workers, dates)))
    if change is not None:
        change.write_text(change.read_text() + "\n\ndef test_added_by_bench():\n    assert _helper(1) >= 0\n")
        rows.append((f"{label}: one test file changed", measured(root, cache, workers, dates)))
    return rows


def fetch_sdist(name: str, into: Path) -> Path:
    """Download and unpack NAME's source distribution; return the unpacked folder."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--dest", str(into), name],
        check=True,
        capture_output=True,
    )
    archive = next(p for p in into.iterdir() if p.suffix in (".gz", ".zip"))
    unpacked = into / "src"
    if archive.suffix == ".zip":
        zipfile.ZipFile(archive).extractall(unpacked)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
    return next(unpacked.iterdir())


def table(rows: list[tuple[str, dict]]) -> str:
    out = [
        "| run | files | lines | tests | functions under test | parsed | wall s | lines/s | tests/s | peak MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        out.append(
            f"| {label} | {r.get('files', '')} | {r['lines']} | {r.get('tests', '')} | {r.get('functions', '')} | "
            f"{r.get('parsed', '')} | {r['seconds']:.2f} | {r['lines'] / r['seconds']:,.0f} | "
            f"{(r['tests'] / r['seconds']) if 'tests' in r else 0:,.0f} | {r.get('peak_mib', 0):.0f} |"
        )
    out += ["", "| run | " + " | ".join(PHASES) + " |", "|---|" + "---:|" * len(PHASES)]
    for label, r in rows:
        if "phases" in r:
            out.append(f"| {label} | " + " | ".join(f"{r['phases'].get(p, 0):.2f}" for p in PHASES) + " |")
    return "\n".join(out)


def verdicts(rows: list[tuple[str, dict]]) -> str:
    """The targets, checked on the synthetic runs, and the ratio to the ast baseline."""
    baseline, cold, warm, changed = (r for _, r in rows[:4])
    cold_rate = cold["lines"] / cold["seconds"]
    peak = max(r["peak_mib"] for _, r in rows if "peak_mib" in r)
    checks = [
        (f"cold {cold_rate:,.0f} lines/s >= {TARGETS['cold lines/s']:,.0f}", cold_rate >= TARGETS["cold lines/s"]),
        (f"warm {warm['seconds']:.2f} s <= {TARGETS['warm s']:.0f} s", warm["seconds"] <= TARGETS["warm s"]),
        (f"one file changed {changed['seconds']:.2f} s (parsed {changed['parsed']})", changed["parsed"] == 1),
        (f"peak {peak:.0f} MiB <= {TARGETS['peak MiB']:.0f} MiB", peak <= TARGETS["peak MiB"]),
    ]
    ratio = cold_rate / (baseline["lines"] / baseline["seconds"])
    lines = [f"- {text}: {'met' if ok else 'MISSED'}" for text, ok in checks]
    return "\n".join(["", *lines, f"- cold mining speed / plain ast.parse speed: {ratio:.3f}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=230)
    parser.add_argument("--test-files", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--real", help="PyPI project whose sdist (with tests) is mined as well")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        root, cache, workers, dates = args.child
        child_run(root, cache, int(workers), dates == "1")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_mining_") as tmp:
        tmp_path = Path(tmp)
        repo = tmp_path / "synthetic"
        generate_repo(repo, args.modules, args.test_files)
        rows = [("baseline: ast.parse, 1 core", ast_baseline(repo))]
        change = min((repo / "tests").glob("test_mod*.py"))
        rows += scenario("synthetic", repo, tmp_path / "cache", args.workers, True, change)
        if args.real:
            real = fetch_sdist(args.real, tmp_path / "sdist")
            rows.append((f"baseline {real.name}: ast.parse", ast_baseline(real)))
            rows += scenario(real.name, real, tmp_path / "cache-real", args.workers, False, None)
    print(table(rows))
    print(verdicts(rows))
    print(f"load average during the run (2 cores, shared machine): {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
