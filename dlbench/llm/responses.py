"""Content-addressed store of LLM responses: one JSON file per request key.

A response is written (atomically) before any caller sees it, so a killed job never pays
for the same request twice. The cache lives outside Snakemake outputs, which Snakemake
deletes when a job fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dlbench.store import atomic_open, canonical_json, digest


def request_key(payload: dict[str, Any]) -> str:
    """The cache key of a request: the digest of its payload (endpoint, model, messages, parameters)."""
    return digest(payload)


class ResponseCache:
    """Response files under ``root/<key[:2]>/<key>.json``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or None (also for an unreadable file)."""
        path = self.path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError):
            return None  # a torn file cannot exist (atomic writes); treat anything odd as a miss

    def put(self, key: str, response: dict[str, Any]) -> None:
        with atomic_open(self.path(key)) as fh:
            fh.write(canonical_json(response))

    def __contains__(self, key: str) -> bool:
        return self.path(key).exists()
