"""dlbench: a reproducible, sandboxed rebuild of the DL-Bench code-generation benchmark."""

__version__ = "0.1.0"
