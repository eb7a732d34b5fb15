# scripts/export_failures.py — adapter: evaluations + generations + benchmark → automatic failure pass + sheet.
from dlbench.logs import script_logging
from dlbench.report.failures import export_failures

with script_logging(snakemake.log[0]):
    inp, out = snakemake.input, snakemake.output
    export_failures(inp.benchmark, inp.evaluations, inp.generations, out.auto, out.sheet)
