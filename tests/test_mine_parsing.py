"""Pathological code is a logged, skipped file, never a crashed mining job (libcst segfaults on it)."""

from __future__ import annotations

import pytest

from dlbench.config import MineConfig
from dlbench.mine.api import mine
from dlbench.mine.bodies import summarize_bodies
from dlbench.mine.extract import extract_definitions
from dlbench.mine.symbols import summarize_source
from dlbench.parsing import Unparsable, parse_ast, parse_cst
from tests.test_mine_api import library
from tests.test_mine_callgraph import write_tree

UNCLOSED = "x = " + "(" * 2500 + "\n"
MINUSES = "x = " + "-" * 200_000 + "1\n"
SURROGATE = "x = '\udcff'\n"
AND_CHAIN = "def h(x):\n    return " + " and ".join(["x"] * 20_000) + "\n"  # ast accepts it, libcst crashes
PATHOLOGICAL = {"unclosed": UNCLOSED, "minuses": MINUSES, "surrogate": SURROGATE, "and chain": AND_CHAIN}


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_parse_cst_refuses_with_a_reason(name):
    with pytest.raises(Unparsable) as caught:
        parse_cst(PATHOLOGICAL[name])
    assert str(caught.value)


def test_parse_ast_names_the_problem():
    with pytest.raises(Unparsable, match="too many nested parentheses"):
        parse_ast(UNCLOSED)
    with pytest.raises(Unparsable, match="nested too deeply"):
        parse_ast(MINUSES)
    assert parse_cst("x = " + "(" * 150 + "1" + ")" * 150 + "\n").code.startswith("x = ((")


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_summaries_and_extraction_survive(name):
    source = PATHOLOGICAL[name]
    with pytest.raises(Unparsable):
        summarize_bodies(source)
    extraction = extract_definitions(source, [("h", 1, source.count("\n"))])
    assert extraction.found == {} and extraction.dropped["h"]
    summary = summarize_source(source)
    assert summary.syntax_error or name == "and chain"


def test_mining_skips_pathological_files_with_a_logged_reason(tmp_path, caplog):
    files = library(1)
    files["tests/test_unclosed.py"] = UNCLOSED
    files["tests/test_minuses.py"] = MINUSES
    files["pkg/chain.py"] = AND_CHAIN
    files["tests/test_chain.py"] = "from pkg.chain import h\n\n\ndef test_h():\n    assert h(1)\n" + AND_CHAIN
    root = write_tree(tmp_path / "repo", files)
    with caplog.at_level("WARNING"):
        result = mine(root, "acme/lib", None, 1, MineConfig(), tmp_path / "c", dates=False)
    assert [f.qualname for f in result.functions] == ["f0"]
    assert "2 files do not parse" in caplog.text and "nested" in caplog.text
    assert "and/or chain of 20000 operands" in caplog.text
