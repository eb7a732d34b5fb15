# scripts/tables.py — adapter: evaluations + benchmark + validation (+ failure labels) → tables.csv, tables/, plots/.
from dlbench.logs import script_logging
from dlbench.report.failures import write_table6
from dlbench.report.render import write_report

with script_logging(snakemake.log[0]):
    inp, out = snakemake.input, snakemake.output
    paper = inp.paper[0] if inp.paper else None
    write_report(
        inp.benchmark,
        inp.evaluations,
        inp.validation,
        out.csv,
        out.tables,
        out.plots,
        snakemake.params.report,
        paper=paper,
        usage=inp.usage,
        models=snakemake.params.models.root,
        stages=inp.stages[0] if inp.stages else None,
    )
    write_table6(inp.failures, out.tables)
