# scripts/build_image.py — adapter: clone json → project image record.
from pathlib import Path

from dlbench.harness.sandbox import build_image_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    params = snakemake.params
    build_image_file(
        Path(snakemake.input.clone),
        Path(snakemake.output[0]),
        Path(params.build_log),
        params.evaluate,
        params.images,
        params.storage.downloads_dir(),
    )
