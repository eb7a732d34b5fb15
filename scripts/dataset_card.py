# scripts/dataset_card.py — adapter: benchmark + labels + report tables + mining skips + environments → results/benchmark/README.md.
from dlbench.logs import script_logging
from dlbench.report.card import card_file

with script_logging(snakemake.log[0]):
    inp = snakemake.input
    threshold = snakemake.params.mutant_kill_threshold
    card_file(
        inp.benchmark,
        inp.repos,
        inp.merged,
        inp.agreement,
        inp.tables,
        snakemake.output[0],
        threshold,
        inp.prompts,
        inp.skipped,
        inp.environments,
    )
