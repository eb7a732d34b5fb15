# scripts/call_graph.py — adapter: clone record + tests.jsonl → calls.jsonl (CallRecord).
from dlbench.config import load_config
from dlbench.logs import script_logging
from dlbench.mine.callgraph import call_graph_file

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    call_graph_file(snakemake.input.clone, snakemake.input.tests, snakemake.output[0], cfg.mine)
