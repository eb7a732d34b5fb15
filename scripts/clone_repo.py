# scripts/clone_repo.py — adapter: one kept repository → checkout + CloneRecord JSON.
from pathlib import Path

from dlbench.collect.clone import clone_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    out = Path(snakemake.output[0])
    clone_file(snakemake.input.selection, snakemake.wildcards.repo, out, out.parent, snakemake.params.crawl)
