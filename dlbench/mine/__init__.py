"""Mining: test cases, the repository symbol table, the test call graph and extraction.

Floors inside the package: ``symbols`` (per-file ``ast`` summaries and name resolution)
→ ``tests`` (test files and cases) → ``callgraph`` (libcst over test code) → ``extract``
(libcst over the files holding functions under test) + ``history`` (git blame dates);
``cache`` stores per-file summaries by content hash; ``api`` runs the whole chain.
"""
