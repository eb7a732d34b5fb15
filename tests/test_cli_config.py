"""The command line reaches the workflow's settings (issue 27, item 6): every subcommand that
reads settings takes ``--config``, and ``dlbench mine`` the options that change which
functions become tasks (``mine.*``), each over the file's value."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dlbench.cli import build_parser, main
from dlbench.records import FunctionRecord
from dlbench.store import read_jsonl
from tests.test_mine_callgraph import write_tree
from tests.test_report_compare import write_ds1000

# ``normalise`` is reached only through ``scale``: no test calls it.
FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": """
        def normalise(x):
            return x / 2


        def scale(x):
            return normalise(x) * 3
    """,
    "tests/test_core.py": """
        from pkg.core import scale


        def test_scale_two():
            assert scale(2) == 3


        def test_scale_zero():
            assert scale(0) == 0


        def test_scale_negative():
            assert scale(-2) == -3
    """,
}


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the parse cache and a config file without the workflow's input files
    return write_tree(tmp_path / "repo", FILES)


def mined(checkout: Path, out: str, *options: str) -> list[str]:
    assert main(["mine", "--repo", str(checkout), "--name", "acme/lib", "--out", out, *options]) == 0
    return sorted(f.qualname for f in read_jsonl(Path(out) / "functions.jsonl", FunctionRecord))


def config_file(path: Path, mine: dict) -> str:
    path.write_text(yaml.safe_dump({"mine": mine}))
    return str(path)


def test_transitive_reach_finds_a_helper_the_default_misses(checkout: Path) -> None:
    assert mined(checkout, "direct") == ["scale"]
    assert mined(checkout, "transitive", "--reach", "transitive") == ["normalise", "scale"]


def test_the_config_file_takes_effect_and_an_option_overrides_it(checkout: Path, tmp_path: Path) -> None:
    transitive = config_file(tmp_path / "transitive.yaml", {"reach": "transitive"})
    assert mined(checkout, "from-file", "--config", transitive) == ["normalise", "scale"]
    assert mined(checkout, "overridden", "--config", transitive, "--reach", "direct") == ["scale"]
    strict = config_file(tmp_path / "strict.yaml", {"reach": "transitive", "min_tests": 4})
    assert mined(checkout, "strict", "--config", strict) == []  # three tests reach each
    assert mined(checkout, "relaxed", "--config", strict, "--min-tests", "3") == ["normalise", "scale"]


def test_a_bad_mine_key_is_named(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = config_file(tmp_path / "bad.yaml", {"reach": "everywhere"})
    assert main(["mine", "--repo", str(checkout), "--out", "x", "--config", bad]) == 2
    assert "config key 'mine.reach'" in capsys.readouterr().err


def test_every_subcommand_that_reads_settings_takes_a_config_file() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices
    without = sorted(name for name, parser in commands.items() if "--config" not in parser._option_string_actions)
    assert without == ["images"]  # images prune: which records to keep is its only input


def test_compare_takes_its_benchmarks_and_settings_from_the_config(tmp_path: Path, capsys) -> None:
    ds1000 = write_ds1000(tmp_path / "ds1000.jsonl.gz")
    config = tmp_path / "compare.yaml"
    config.write_text(
        yaml.safe_dump({"compare": {"benchmarks": [{"name": "DS-1000", "format": "ds1000", "path": str(ds1000)}]}})
    )
    assert main(["compare", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
    assert "two benchmarks or more (got ['DS-1000'])" in capsys.readouterr().err  # read from compare.benchmarks
