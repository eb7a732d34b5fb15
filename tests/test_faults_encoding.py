"""Mining and the harness read a module the same way (its PEP 263 cookie, a UTF-8 BOM), and
the patched module, written as UTF-8 by the supervisor, keeps its non-ASCII literals."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dlbench.config import EvaluateConfig, MineConfig
from dlbench.harness.evaluate import runnable_module
from dlbench.mine.api import mine_checkout
from dlbench.parsing import Unparsable, decode_source, utf8_cookie
from dlbench.records import FunctionRecord
from dlbench.store import read_jsonl
from dlbench.tasks.assemble import task_from_function

LATIN1 = '# -*- coding: latin-1 -*-\n"""Caf\xe9 helpers."""\n\n\ndef label(x):\n    return f"{x}\xb0C"\n'
BOM = 'def greet(name):\n    return "h\xe9 " + name\n'
TESTS = "from pkg.core import label\nfrom pkg.bom import greet\n\n" + "".join(
    f"def test_{i}():\n    assert label({i}) == '{i}\xb0C' and greet('{i}') == 'h\xe9 {i}'\n\n\n" for i in range(3)
)


def encoded_repository(root: Path) -> Path:
    """A package with a latin-1 module (cookie) and a UTF-8 module with a BOM, both tested."""
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_bytes(LATIN1.encode("latin-1"))
    (root / "pkg/bom.py").write_bytes(b"\xef\xbb\xbf" + BOM.encode("utf-8"))
    (root / "tests/test_core.py").write_text(TESTS, encoding="utf-8")
    return root


def import_written(path: Path, text: str, name: str):
    """Write ``text`` as the supervisor writes a patched module (UTF-8) and import it."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mined_latin1_and_bom_modules_patch_to_modules_that_keep_their_literals(tmp_path):
    root = encoded_repository(tmp_path / "repo")
    out = mine_checkout(root, tmp_path / "out", tmp_path / "cache", min_tests=3, cfg=MineConfig())
    functions = {f.qualname: f for f in read_jsonl(out, FunctionRecord)}
    assert '"{x}\xb0C"' in functions["label"].source and '"h\xe9 "' in functions["greet"].source
    patched = {
        name: runnable_module(
            task_from_function(fn, sha=None, prompt="p", stage=None, task=None, data=None),
            root,
            fn.source,
            EvaluateConfig(),
        )
        for name, fn in functions.items()
    }
    assert patched["label"].splitlines()[0] == "# -*- coding: utf-8 -*-"  # rewritten in place
    assert patched["label"].count("\n") == LATIN1.count("\n")  # no line moved
    assert import_written(tmp_path / "core.py", patched["label"], "patched_core").label(5) == "5\xb0C"
    assert import_written(tmp_path / "bom.py", patched["greet"], "patched_bom").greet("x") == "h\xe9 x"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("# -*- coding: latin-1 -*-\nx = 1\n", "# -*- coding: utf-8 -*-\nx = 1\n"),
        (
            "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n",
            "#!/usr/bin/env python\n# vim: set fileencoding=utf-8 :\n",
        ),
        ("import os\n# coding: latin-1\n", "import os\n# coding: latin-1\n"),  # line 2 below code: no cookie
        ("x = 1\n\n# coding: latin-1\n", "x = 1\n\n# coding: latin-1\n"),  # line 3: no cookie
    ],
    ids=["line 1", "line 2 below a comment", "below code", "line 3"],
)
def test_only_a_pep263_cookie_is_rewritten(source, expected):
    assert utf8_cookie(source) == expected


def test_decoding_follows_the_interpreter():
    assert decode_source(b"\xef\xbb\xbfx = 'caf\xc3\xa9'\r\ny = 2\r") == "x = 'caf\xe9'\ny = 2\n"
    assert decode_source("# coding: latin-1\nx = '\xe9'\n".encode("latin-1")) == "# coding: latin-1\nx = '\xe9'\n"
    with pytest.raises(Unparsable, match="cannot decode"):
        decode_source(b"# coding: no-such-codec\n")
