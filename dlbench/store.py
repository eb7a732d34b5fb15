"""Atomic artifact I/O: JSON Lines of records, JSON documents, Parquet and CSV.

Every writer writes to a temporary file beside the target and renames it, so a killed job
never leaves a half-written artifact that a later stage would trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel, ValidationError

from dlbench.records import SCHEMA_VERSION

M = TypeVar("M", bound=BaseModel)


class ArtifactError(ValueError):
    """An artifact that cannot be read as the expected record type."""


def canonical_json(value: object) -> str:
    """Stable JSON text of ``value`` (sorted keys, no whitespace) for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: object) -> str:
    """sha256 hex digest of ``value``'s canonical JSON: the key of cached and logged content."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def files_digest(files: Mapping[str, bytes]) -> str:
    """Short digest of named file contents: code whose change must redo work (a workflow param)."""
    return hashlib.sha256(
        "".join(f"{n} {hashlib.sha256(d).hexdigest()}\n" for n, d in sorted(files.items())).encode()
    ).hexdigest()[:16]


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _new_file_beside(target)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _new_file_beside(target: Path) -> str:
    """Create an empty temporary file next to ``target`` as a plain ``open`` would: mode
    0666 less the umask (``mkstemp`` makes every file 0600, whatever the umask)."""
    while True:
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return str(tmp)
        except FileExistsError:
            continue


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file for writing; it replaces ``path`` only if the block succeeds."""
    with atomic_path(path) as tmp, open(tmp, mode, encoding=None if "b" in mode else "utf-8") as fh:
        yield fh


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records as JSON Lines atomically; return how many were written."""
    count = 0
    with atomic_open(path) as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")
            count += 1
    return count


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read JSON Lines as ``model`` instances, naming file and line on any bad record."""
    return list(iter_jsonl(path, model))


def iter_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = _decoded(path, lineno, raw)
            if not line.strip():
                continue
            yield _parse_line(path, lineno, line, model)


def _decoded(path: str | Path, lineno: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # e.g. a binary file passed by mistake
        raise ArtifactError(
            f"{path}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})"
        ) from None


def _parse_line(path: str | Path, lineno: int, line: str, model: type[M]) -> M:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{path}:{lineno}: not JSON: {exc}") from None
    version = data.get("schema_version", SCHEMA_VERSION) if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise ArtifactError(f"{path}:{lineno}: schema_version {version}, expected {SCHEMA_VERSION}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        where = f"field '{field}': " if field else ""
        raise ArtifactError(f"{path}:{lineno}: not a {model.__name__}: {where}{error['msg']}") from None


def append_jsonl(path: str | Path, record: BaseModel) -> None:
    """Append one record and flush it to disk (journals that survive a killed process)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def write_json(path: str | Path, record: BaseModel) -> None:
    with atomic_open(path) as fh:
        fh.write(record.model_dump_json(indent=2) + "\n")


def read_json(path: str | Path, model: type[M]) -> M:
    return _parse_line(path, 1, _decoded(path, 1, Path(path).read_bytes()), model)


def write_text(path: str | Path, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def write_frame(path: str | Path, frame) -> None:
    """Write a pandas DataFrame as CSV or Parquet (by suffix), atomically."""
    suffix = Path(path).suffix
    with atomic_path(path) as tmp:
        if suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        elif suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            raise ValueError(f"unsupported table format: {suffix}")
