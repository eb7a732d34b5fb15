# scripts/extract_functions.py — adapter: clone record + calls.jsonl → functions.jsonl.
from dlbench.config import load_config
from dlbench.logs import script_logging
from dlbench.mine.extract import extract_functions_file

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    extract_functions_file(snakemake.input.clone, snakemake.input.calls, snakemake.output[0], cfg.mine)
