# scripts/extract_functions.py — adapter: clone record + calls.jsonl → functions.jsonl, skipped.jsonl.
from dlbench.logs import script_logging
from dlbench.mine.extract import extract_functions_file

with script_logging(snakemake.log[0]):
    mine = snakemake.params.mine.model_copy(update={"workers": snakemake.threads})  # the rule's threads parse
    out = snakemake.output
    extract_functions_file(
        snakemake.input.clone,
        snakemake.input.calls,
        out.functions,
        mine,
        snakemake.params.storage.parse_cache,
        out.skipped,
    )
