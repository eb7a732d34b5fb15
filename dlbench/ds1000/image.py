"""The shared DS-1000 environment image (``images/environment.py``): ``ds1000.packages`` on the
evaluation base image, the DS-1000 runner in ``/opt/dlbench``, recorded as ``results/ds1000/image.json``."""

from __future__ import annotations

from pathlib import Path

from dlbench.config import Ds1000Config, EvaluateConfig, ImagesConfig
from dlbench.harness.code import ds1000_support_files
from dlbench.images.environment import build_environment_image
from dlbench.records import ImageRecord
from dlbench.store import write_json

IMAGE_NAME = "ds1000"


def build_image_file(
    out: str | Path,
    build_log: str | Path,
    cfg: Ds1000Config,
    evaluate: EvaluateConfig,
    images: ImagesConfig,
    downloads: Path,
) -> ImageRecord:
    """The rule ``ds1000_image``: build (or reuse) the image and record it; a failed build is
    recorded too (every candidate then gets ``image_error``)."""
    record = build_environment_image(
        IMAGE_NAME, cfg.packages, evaluate.base_image, build_log, ds1000_support_files(), images, downloads,
        exclude_newer=cfg.exclude_newer, source="ds1000.packages",
    )  # fmt: skip
    write_json(out, record)
    return record
