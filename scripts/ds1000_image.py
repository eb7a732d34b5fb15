# scripts/ds1000_image.py — adapter: ds1000.packages → the shared DS-1000 environment image's record.
from dlbench.ds1000.image import build_image_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    params = snakemake.params
    build_image_file(
        snakemake.output[0],
        params.build_log,
        params.ds1000,
        params.evaluate,
        params.images,
        params.storage.downloads_dir(),
    )
