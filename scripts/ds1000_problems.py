# scripts/ds1000_problems.py — adapter: DS-1000's released file → the track's problems and their benchmark records.
from dlbench.ds1000.problems import write_problems
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    write_problems(snakemake.params.ds1000, snakemake.output.problems, snakemake.output.benchmark)
