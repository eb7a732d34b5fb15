# scripts/export_environments.py — adapter: benchmark + clones + image records → results/benchmark/environments/.
from dlbench.images.recipe import export_environments
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    inp = snakemake.input
    export_environments(
        inp.benchmark,
        inp.clones,
        inp.images,
        snakemake.output[0],
        snakemake.params.images,
        snakemake.params.storage.downloads_dir(),
    )
