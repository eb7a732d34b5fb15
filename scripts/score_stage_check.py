# scripts/score_stage_check.py — adapter: the filled manual-check sheet → each benchmark's accuracy and its interval.
from dlbench.logs import script_logging
from dlbench.report.stage_check import score_check

with script_logging(snakemake.log[0]):
    inp = snakemake.input
    score_check(inp.sheet, inp.predictions, snakemake.output[0], snakemake.params.confidence)
