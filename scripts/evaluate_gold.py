# scripts/evaluate_gold.py — adapter: gold's candidates of one repository → evaluations, and
# the image record they ran on (repaired where a gold run showed a module missing).
from pathlib import Path

from dlbench.harness.gold import evaluate_gold
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    params = snakemake.params
    evaluate_gold(
        Path(snakemake.input.generations),
        Path(snakemake.input.benchmark),
        Path(snakemake.input.clone),
        Path(snakemake.input.image),
        Path(snakemake.output.evaluations),
        Path(snakemake.output.image),
        params.backend,
        params.evaluate.model_copy(update={"jobs": snakemake.threads}),
        params.images,
        params.storage.downloads_dir(),
        Path(params.repair_log),
    )
