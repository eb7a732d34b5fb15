# scripts/validate_tasks.py — adapter: gold and null evaluations → results/validation.csv.
from pathlib import Path

from dlbench.harness.validate import validate_tasks
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    validate_tasks(
        Path(snakemake.input.benchmark),
        [Path(p) for p in snakemake.input.gold],
        [Path(p) for p in snakemake.input.null],
        Path(snakemake.output[0]),
        snakemake.params.min_tests,
        snakemake.params.evaluate,
    )
