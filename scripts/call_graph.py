# scripts/call_graph.py — adapter: clone record + tests.jsonl → calls.jsonl (CallRecord).
from dlbench.logs import script_logging
from dlbench.mine.callgraph import call_graph_file

with script_logging(snakemake.log[0]):
    mine = snakemake.params.mine.model_copy(update={"workers": snakemake.threads})  # the rule's threads parse
    call_graph_file(
        snakemake.input.clone, snakemake.input.tests, snakemake.output[0], mine, snakemake.params.storage.parse_cache
    )
