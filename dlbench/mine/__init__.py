"""Mining: test cases, the repository symbol table, the test call graph and extraction.

Floors inside the package: ``symbols`` (per-file ``ast`` summaries and name resolution)
→ ``tests`` (test files and cases) → ``callgraph`` (libcst over test code) → ``extract``
(libcst over the files holding functions under test) + ``history`` (git blame dates);
``cache`` stores per-file summaries by content hash; ``api`` runs the whole chain.
"""

from __future__ import annotations

from pathlib import Path

from dlbench.store import files_digest


def code_digest() -> str:
    """Digest of the mining code: the workflow passes it as a param, so new mining code remines
    (the parse cache keeps that to the call graph and extraction), as the harness's digest re-evaluates."""
    return files_digest({f.name: f.read_bytes() for f in Path(__file__).parent.glob("*.py")})
