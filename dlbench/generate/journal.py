"""Per-job journal: finished items appended and fsynced, so a killed job resumes.

It lives outside Snakemake outputs (Snakemake deletes those when a job fails). Items are
keyed by their request's cache key, so a changed prompt or parameter is never mistaken
for a finished item. A line torn by a kill is ignored.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pydantic import BaseModel, ValidationError

from dlbench.records import Generation
from dlbench.store import append_jsonl

log = logging.getLogger(__name__)


class JournalEntry(BaseModel):
    item: str
    generations: list[Generation]


class Journal:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.entries: dict[str, list[Generation]] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = JournalEntry.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError):
                log.warning("journal %s: ignoring a torn line", self.path)
                continue
            self.entries[entry.item] = entry.generations
        log.info("journal %s: %d finished items", self.path, len(self.entries))

    def get(self, item: str) -> list[Generation] | None:
        return self.entries.get(item)

    def record(self, item: str, generations: list[Generation]) -> None:
        append_jsonl(self.path, JournalEntry(item=item, generations=generations))
        self.entries[item] = generations

    def remove(self) -> None:
        """Drop the journal once the job's output is written (the cache keeps responses)."""
        self.path.unlink(missing_ok=True)
