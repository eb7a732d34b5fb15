# scripts/compare_benchmarks.py — adapter: this build's benchmark + other benchmarks' files → the paper's comparisons.
from pathlib import Path

from dlbench.logs import script_logging
from dlbench.report.compare import compare_with_build

with script_logging(snakemake.log[0]):
    out_dir = Path(snakemake.output.tasks).parent  # every output is written into this folder
    compare_with_build(snakemake.input.benchmark, snakemake.params.compare, out_dir)
