# scripts/ds1000_tables.py — adapter: DS-1000 evaluations → validation, tables.csv and its readable tables.
from dlbench.ds1000.tables import write_tables
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    inp, out = snakemake.input, snakemake.output
    write_tables(
        inp.benchmark,
        inp.problems,
        inp.evaluations,
        out.validation,
        out.csv,
        out.tables,
        snakemake.params.report,
        models=snakemake.params.models.root,
    )
