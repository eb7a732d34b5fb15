# scripts/live_tables.py — adapter: existing evaluations → results/live/{cutoff}/tables.csv.
from datetime import date

from dlbench.logs import script_logging
from dlbench.report.render import write_live_table

with script_logging(snakemake.log[0]):
    inp = snakemake.input
    cutoff = date.fromisoformat(snakemake.wildcards.cutoff)
    write_live_table(
        inp.benchmark, inp.evaluations, inp.validation, cutoff, snakemake.output[0], snakemake.params.report
    )
