# scripts/ds1000_evaluate.py — adapter: one model × technique's DS-1000 candidates → evaluations (Docker sandbox).
from dlbench.ds1000.evaluate import evaluate_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    inp = snakemake.input
    evaluate_file(
        inp.problems,
        inp.generations,
        inp.image,
        snakemake.output[0],
        snakemake.params.evaluate,
        snakemake.params.timeout_s,
        jobs=snakemake.threads,  # candidates at once: the rule's threads
    )
