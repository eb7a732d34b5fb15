# scripts/evaluate.py — adapter: one model × technique × repository's candidates → evaluations.
from pathlib import Path

from dlbench.config import load_config
from dlbench.harness.evaluate import evaluate_generations
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    image = Path(snakemake.input.image) if "image" in snakemake.input.keys() else None
    evaluate_generations(
        Path(snakemake.input.generations),
        Path(snakemake.input.benchmark),
        Path(snakemake.input.clone),
        image,
        Path(snakemake.output[0]),
        snakemake.params.backend,
        cfg.evaluate,
    )
