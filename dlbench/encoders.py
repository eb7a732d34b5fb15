"""Pretrained encoders from this machine only: a folder or the Hugging Face cache, never the Hub.

The stage classifier (``stages.encoder``) and the benchmark comparison
(``compare.code_encoder``) both take a transformers model by name; both read it here, so a
missing copy is reported the same way, naming the config key and what to do.
"""

from __future__ import annotations

import os
from typing import Any


class WeightsUnavailable(RuntimeError):
    """A configured encoder whose weights (or transformers) are not on this machine."""


def offline() -> None:
    """Weights come with a package or a local copy: transformers never downloads."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def local_pretrained(name: str, key: str, instead: str) -> tuple[Any, Any]:
    """(tokenizer, model) of ``name`` from a local copy; ``WeightsUnavailable`` naming ``key``
    and, as the alternative, ``instead`` (e.g. the shipped encoder) when it is not here."""
    offline()
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise WeightsUnavailable(f"{key} {name!r} is read with transformers: pip install 'dlbench[stage]'") from exc
    try:  # local_files_only: never a download, whatever the environment says
        return AutoTokenizer.from_pretrained(name, local_files_only=True), AutoModel.from_pretrained(
            name, local_files_only=True
        )
    except (OSError, ValueError) as exc:  # the underlying message stays in the traceback
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise WeightsUnavailable(f"{key}: {missing_weights(name)}, {instead} ({type(exc).__name__}: {first})") from exc


def missing_weights(name: str) -> str:
    """Why a model could not be read from this machine, and how to bring it here."""
    if name.startswith(("/", ".", "~")):
        return f"no model folder at {name} (config.json, weights and tokenizer as save_pretrained writes them)"
    cache_dir = os.environ.get("HF_HUB_CACHE") or os.environ.get("HF_HOME") or "~/.cache/huggingface"
    return (
        f"no local copy of {name!r}: neither a folder of that name nor in the Hugging Face cache under {cache_dir} "
        f"(nothing is downloaded). Bring its weights to this machine (`huggingface-cli download {name}` where the "
        f"Hub is reachable, then copy the cache or the folder) and name the folder"
    )
