# scripts/classify_stages.py — adapter: leave-one-repo-out stage predictions and their report.
from dlbench.generate.classifier import classify_stages_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    classify_stages_file(snakemake.input[0], snakemake.output.predictions, snakemake.output.report)
