# scripts/check_functions.py — adapter: statically mined functions + trace → functions.jsonl, untraced.jsonl.
from dlbench.logs import script_logging
from dlbench.mine.trace_check import check_functions_file

with script_logging(snakemake.log[0]):
    i, o = snakemake.input, snakemake.output
    check_functions_file(i.functions, i.trace, o.functions, o.untraced)
