# scripts/generation_usage.py — adapter: tokens and cost per model and technique.
from dlbench.generate.jobs import write_usage
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    write_usage(snakemake.input, snakemake.output[0])
