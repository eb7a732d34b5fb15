# scripts/extract_functions.py — adapter: clone record + calls.jsonl → functions.jsonl.
from dlbench.logs import script_logging
from dlbench.mine.extract import extract_functions_file

with script_logging(snakemake.log[0]):
    mine = snakemake.params.mine.model_copy(update={"workers": snakemake.threads})  # the rule's threads parse
    extract_functions_file(
        snakemake.input.clone, snakemake.input.calls, snakemake.output[0], mine, snakemake.params.storage.parse_cache
    )
