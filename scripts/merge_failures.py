# scripts/merge_failures.py — adapter: automatic failure pass + annotators' sheets → merged failure labels.
from dlbench.logs import script_logging
from dlbench.report.failures import merge_failures_files

with script_logging(snakemake.log[0]):
    merge_failures_files(snakemake.input.auto, snakemake.input.sheets, snakemake.output[0])
