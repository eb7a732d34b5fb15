# scripts/evaluate.py — adapter: one model × technique × repository's candidates → evaluations.
from pathlib import Path

from dlbench.harness.evaluate import evaluate_generations
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    inputs = snakemake.input.keys()
    evaluate = snakemake.params.evaluate.model_copy(
        update={"jobs": snakemake.threads}
    )  # candidates at once: the rule's threads
    gold = snakemake.input.gold  # one file, or none for gold itself
    null = snakemake.input.null  # one file, or none for gold and null (the test budget needs it)
    evaluate_generations(
        Path(snakemake.input.generations),
        Path(snakemake.input.benchmark),
        Path(snakemake.input.clone),
        Path(snakemake.input.image) if "image" in inputs else None,
        Path(snakemake.output[0]),
        snakemake.params.backend,
        evaluate,
        gold=Path(gold[0]) if gold else None,
        null=Path(null[0]) if null else None,
    )
