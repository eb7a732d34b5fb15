# scripts/assemble.py — adapter: merged labels + functions + clones → results/benchmark/.
from dlbench.logs import script_logging
from dlbench.tasks.assemble import BenchmarkPaths, assemble_files

with script_logging(snakemake.log[0]):
    out = snakemake.output
    paths = BenchmarkPaths(out.jsonl, out.parquet, out.schema, out.repos)
    inp = snakemake.input
    assemble_files(inp.merged, inp.functions, inp.clones, paths, snakemake.params.select)
